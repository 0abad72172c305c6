import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { migrate, Pool } from '@crm/db';
import { createTestDatabase, TestDatabase, testPool } from '@crm/testing';
import { list } from '../src/conversations/conversations.repo';
import { COMMON_PHRASE_MATCHES, newestMatchesSql, Params, search, walkNewest, wordsEstimate } from '../src/conversations/message-search.repo';
import { wordsOf } from '../src/conversations/search-text';

// A phrase with short words is looked for one of two ways (walkNewest): through the indexes when it is rare, by
// walking the newest messages when it is common. Both must find the same messages; this needs more matches than
// the count that decides, so it runs against a real PostgreSQL rather than through the stack.
describe('phrase search: index or walk', () => {
  let db: TestDatabase;
  let pool: Pool;
  const org = randomUUID();
  const other = randomUUID();
  const account = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase('msg_phrase');
    pool = testPool(db.url, 4);
    await migrate(pool, path.join(__dirname, '..', 'migrations'));
    const conv = async (orgId: string, n: number) => {
      const id = randomUUID();
      await pool.query(
        `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, contact_chatnet_uid, contact_name, message_count, last_message_at, last_activity_at, created_at)
         VALUES ($1, $2, $3, 'user', $4, $4, $5, 0, now(), now(), now())`,
        [id, orgId, account, `t-${n}`, `Khách ${n}`],
      );
      return id;
    };
    const say = (orgId: string, convId: string, content: string, count: number, minutesAgo: number) =>
      pool.query(
        `INSERT INTO messages (id, org_id, conversation_id, chatnet_account_id, direction, content, is_read, source, sent_at)
         SELECT gen_random_uuid(), $1, $2, $3, 'inbound', $4 || ' #' || g, true, 'chatnet', now() - ($5 + g) * interval '1 second'
         FROM generate_series(1, $6::int) g`,
        [orgId, convId, account, content, minutesAgo * 60, count],
      );
    const c1 = await conv(org, 1);
    const c2 = await conv(org, 2);
    const c3 = await conv(other, 3);
    const c4 = await conv(org, 4);
    // Common: more than the count that decides. Its pairs also occur apart, and the words out of order.
    await say(org, c1, 'em ở Sài Gòn nhé', COMMON_PHRASE_MATCHES + 300, 10);
    await say(org, c2, 'sài gòn em ở đâu', 400, 0);
    await say(org, c2, 'gửi em ảnh, cho em xin giá', 50, 5);
    // Rare: a few, older than most of the common ones.
    await say(org, c4, 'em ở Sài Gòn SP12 còn không', 3, 200);
    // Another organization says the same: never seen.
    await say(other, c3, 'em ở Sài Gòn nhé', 50, 0);
    await pool.query('ANALYZE messages');
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const ids = async (words: string[], walk: boolean) => {
    const p = new Params(org);
    const { rows } = await pool.query<{ id: string }>(newestMatchesSql(p, '$1', words, 200, [], 'm.id', walk), p.values);
    return rows.map((r) => r.id);
  };

  it('walks the newest messages for a common phrase, and finds what the indexes find', async () => {
    const words = wordsOf('em ở Sài Gòn');
    expect(await walkNewest(pool, org, words, 200)).toBe(true);
    const walked = await ids(words, true);
    expect(walked).toHaveLength(200);
    expect(walked).toEqual(await ids(words, false));
    const res = await search(pool, org, { words, typed: 'em ở sài gòn', window: 200, page: 1, limit: 5 });
    expect(res.pagination.total).toBe(200);
    // Newest first among equals: "sài gòn em ở đâu" holds the words but not the phrase.
    expect(res.data.every((m) => m.content.startsWith('em ở Sài Gòn nhé'))).toBe(true);
  });

  it('counts a rare phrase through the indexes and finds it there', async () => {
    const words = wordsOf('em ở sài gòn sp12');
    expect(await walkNewest(pool, org, words, 200)).toBe(false);
    const found = await ids(words, false);
    expect(found).toHaveLength(3);
    expect(await ids(words, true)).toEqual(found);
    // Common pairs, phrase never written: nothing, through the indexes.
    expect(await walkNewest(pool, org, wordsOf('gửi em xin'), 200)).toBe(false);
    expect(await ids(wordsOf('gửi em xin'), false)).toEqual([]);
  });

  it('asks nothing for one pair or a single word (their estimates are right)', async () => {
    const counting = jest.fn(pool.query.bind(pool));
    const spy = { query: counting } as unknown as Pool;
    expect(await walkNewest(spy, org, wordsOf('em ở'), 200)).toBe(false);
    expect(await walkNewest(spy, org, wordsOf('sài'), 200)).toBe(false);
    expect(counting).not.toHaveBeenCalled();
  });

  it('estimates longer words (each a word, the last a word start) instead of counting them, and finds the same either way', async () => {
    const counting = jest.fn(pool.query.bind(pool));
    const spy = { query: counting } as unknown as Pool;
    // 2,700 of the org's 2,750 messages hold "sài" and "gòn", in either order: walked.
    expect(await walkNewest(spy, org, wordsOf('gòn sài'), 200)).toBe(true);
    expect(counting).toHaveBeenCalledTimes(1);
    expect(String(counting.mock.calls[0][0])).toMatch(/^EXPLAIN/);
    expect(await wordsEstimate(pool, org, wordsOf('gòn sài'))).toBeGreaterThan(COMMON_PHRASE_MATCHES);
    const walked = await ids(wordsOf('gòn sài'), true);
    expect(walked).toHaveLength(200);
    expect(walked).toEqual(await ids(wordsOf('gòn sài'), false));
    // Common in the org, but not under the search's other filters: a walk would not fill the window.
    expect(await walkNewest(pool, org, wordsOf('gòn sài'), 200, (p) => [`m.sent_at < ${p.add(new Date('2001-01-01'))}`])).toBe(false);
    expect(await walkNewest(pool, org, wordsOf('gòn sài'), 200, (p) => [`m.sent_at >= ${p.add(new Date('2001-01-01'))}`])).toBe(true);
    // Three messages say the code: through the indexes, the same as walking.
    expect(await walkNewest(pool, org, wordsOf('sài gòn sp12'), 200)).toBe(false);
    const rare = await ids(wordsOf('sài gòn sp12'), false);
    expect(rare).toHaveLength(3);
    expect(await ids(wordsOf('sài gòn sp12'), true)).toEqual(rare);
    // Inside a word is not the start of one, either way ("hong" in "không"; "xinh" is not "xin").
    for (const walk of [false, true]) {
      expect(await ids(wordsOf('sài hong'), walk)).toEqual([]);
      expect(await ids(wordsOf('sài không'), walk)).toHaveLength(3);
      expect(await ids(wordsOf('gửi xinh'), walk)).toEqual([]);
      expect(await ids(wordsOf('gửi xin'), walk)).toHaveLength(50);
    }
  });

  it('the conversation list takes the same way: the newest matches decide, the words apart never match', async () => {
    const find = async (term: string) =>
      (await list(pool, org, { page: 1, limit: 20, search: { words: wordsOf(term), window: 200 } } as Parameters<typeof list>[2])).data.map(
        (c) => c.contactName,
      );
    // The newest 200 matches are all Khách 1's; Khách 2 has the words, not the phrase.
    expect(await find('em ở Sài Gòn')).toEqual(['Khách 1']);
    expect(await find('em ở Sài Gòn SP12')).toEqual(['Khách 4']);
  });
});
