import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { migrate, Pool, PoolClient, withTransaction } from '@crm/db';
import { createTestDatabase, eventually, TestDatabase, testPool } from '@crm/testing';
import { applyConversationItems, ConversationItems } from '../src/analytics/conversation-events';
import { ARCHIVED, INBOUND, Item, ItemKind, REPLY } from '../src/analytics/turns';

// crm's analytics applies a batch of conversation items org by org with a fixed number of statements (against
// real PostgreSQL): new conversations, existing ones in order, one out of order and one created meanwhile by
// another transaction end up exactly as when the same items are applied one event at a time.
const MINUTE = 60_000;

let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase('crm_analytics_batch');
  pool = testPool(db.url, 4);
  await migrate(pool, path.join(__dirname, '..', 'migrations'));
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const t0 = Date.now() - 3 * 60 * MINUTE;
const item = (kind: ItemKind, minutes: number, userId: string | null = null, id = randomUUID()): Item => ({
  id,
  at: t0 + minutes * MINUTE,
  kind,
  userId,
});
/** Items of one conversation, as the consumer hands them over (one event each). */
const events = (orgId: string, conversationId: string, items: Item[]): ConversationItems[] =>
  items.map((i) => ({ orgId, conversationId, items: [i] }));
const oneAtATime = async (batch: ConversationItems[]) => {
  for (const e of batch) await withTransaction(pool, (tx) => applyConversationItems(tx, [e]));
};
const asOneBatch = (batch: ConversationItems[]) => withTransaction(pool, (tx) => applyConversationItems(tx, batch));
const forOrg = (orgId: string, batch: ConversationItems[]) => batch.map((e) => ({ ...e, orgId }));

/** Every analytics row of the org that conversation items make, without the org id. */
async function rowsOf(orgId: string) {
  const q = async (sql: string) => (await pool.query(sql, [orgId])).rows.map(({ org_id: _org, ...r }) => r);
  return {
    items: await q('SELECT * FROM analytics_items WHERE org_id = $1 ORDER BY item_id'),
    conversations: await q('SELECT * FROM analytics_conversations WHERE org_id = $1 ORDER BY conversation_id'),
    durations: await q('SELECT * FROM analytics_durations WHERE org_id = $1 ORDER BY conversation_id, started_at, kind, ended_at'),
    histogram: await q('SELECT * FROM analytics_histogram WHERE org_id = $1 AND (n <> 0 OR sum_ms <> 0) ORDER BY unit, start, series, bucket'),
    users: await q(`SELECT * FROM analytics_user_stats WHERE org_id = $1 AND (replies <> 0 OR responses <> 0 OR response_ms <> 0)
                    ORDER BY unit, start, user_id`),
  };
}

describe('a batch of conversation items', () => {
  it('mixing new conversations, existing ones in order and one out of order gives the rows its events give one at a time', async () => {
    const [agent, lead] = [randomUUID(), randomUUID()];
    const [inOrder, archived, outOfOrder, fresh, agentFirst] = Array.from({ length: 5 }, () => randomUUID());
    const repeated = randomUUID();
    // Same conversation and item ids in every org, so their rows compare as they are.
    const history = [
      ...events('', inOrder, [item(INBOUND, 0, null, repeated), item(REPLY, 5, agent)]),
      ...events('', archived, [item(INBOUND, 1)]),
      ...events('', outOfOrder, [item(INBOUND, 2), item(REPLY, 10, agent), item(ARCHIVED, 30)]),
    ];
    const batch = [
      ...events('', fresh, [item(INBOUND, 3), item(REPLY, 4, lead)]),
      ...events('', inOrder, [item(INBOUND, 20), item(REPLY, 25, agent)]),
      // The same message reported again, and a message older than the newest applied (archived at 30).
      ...events('', inOrder, [item(INBOUND, 0, null, repeated)]),
      ...events('', outOfOrder, [item(INBOUND, 1), item(REPLY, 35, lead)]),
      ...events('', archived, [item(REPLY, 12, lead), item(ARCHIVED, 40)]),
      ...events('', agentFirst, [item(REPLY, 7, agent), item(INBOUND, 8)]),
      ...events('', fresh, [item(INBOUND, 6)]),
    ].reverse();
    const [one, batched, bystander] = [randomUUID(), randomUUID(), randomUUID()];
    for (const orgId of [one, batched, bystander]) await oneAtATime(forOrg(orgId, history));
    const bystanderBefore = await rowsOf(bystander);

    await oneAtATime(forOrg(one, batch));
    await asOneBatch(forOrg(batched, batch));

    const expected = await rowsOf(one);
    expect(await rowsOf(batched)).toEqual(expected);
    // Another org with the same conversation ids is left alone.
    expect(await rowsOf(bystander)).toEqual(bystanderBefore);
    // The scenario did exercise every part: both new conversations, the late message moved the first response
    // of outOfOrder (9 minutes from the message at 1, not 8 from the one at 2) and its resolution.
    expect(expected.conversations.map((c) => c.conversation_id).sort()).toEqual([inOrder, archived, outOfOrder, fresh, agentFirst].sort());
    const minutes = (c: string) => expected.durations.filter((d) => d.conversation_id === c).map((d) => [d.kind, Number(d.ms) / MINUTE]);
    expect(minutes(outOfOrder)).toEqual([
      [1, 9],
      [2, 29],
    ]);
    expect(minutes(fresh)).toEqual([[1, 1]]);
    expect(minutes(archived)).toEqual([
      [1, 11],
      [2, 39],
    ]);
  });

  it('continues from the state of a conversation another transaction created after the batch looked for it', async () => {
    const [agent, conversationId, other] = [randomUUID(), randomUUID(), randomUUID()];
    const first = events('', conversationId, [item(INBOUND, 3)]);
    const batch = [...events('', conversationId, [item(REPLY, 9, agent), item(INBOUND, 11)]), ...events('', other, [item(INBOUND, 4)])];
    const [one, batched] = [randomUUID(), randomUUID()];
    await oneAtATime(forOrg(one, [...first, ...batch]));

    // The conversation's first item, applied by a transaction still open while the batch runs.
    const creator = await pool.connect();
    let batchDone: Promise<void> | undefined;
    try {
      await creator.query('BEGIN');
      await applyConversationItems(creator, forOrg(batched, first));
      batchDone = asOneBatch(forOrg(batched, batch));
      // The batch did not see the row and now waits on it to create the conversation.
      await eventually(async () => (await waitingOn(creator)) > 0);
      await creator.query('COMMIT');
    } finally {
      creator.release();
    }
    await batchDone;

    const expected = await rowsOf(one);
    expect(await rowsOf(batched)).toEqual(expected);
    expect(expected.durations.map((d) => Number(d.ms) / MINUTE)).toEqual([6]);
  });

  it('takes the same few statements for an org whatever the number of conversations it brings', async () => {
    const agent = randomUUID();
    const orgId = randomUUID();
    const statementsFor = async (conversations: number) => {
      const ids = Array.from({ length: conversations }, () => randomUUID());
      await oneAtATime(ids.flatMap((id) => events(orgId, id, [item(INBOUND, 0)])));
      // One reply per conversation, in order: the usual batch of a busy inbox.
      return countingStatements((tx) =>
        applyConversationItems(
          tx,
          ids.flatMap((id) => events(orgId, id, [item(REPLY, 2, agent)])),
        ),
      );
    };
    // Items, lock, update, durations, histogram, user stats.
    expect(await statementsFor(3)).toBe(6);
    expect(await statementsFor(50)).toBe(6);
    const replies = await pool.query(
      `SELECT sum(replies)::int AS replies, sum(responses)::int AS responses FROM analytics_user_stats WHERE org_id = $1 AND unit = 'd'`,
      [orgId],
    );
    expect(replies.rows[0]).toEqual({ replies: 53, responses: 53 });
  });

  it('writes the aggregates of every org in the batch with one statement each: an org adds only its own four', async () => {
    const agent = randomUUID();
    const orgIds: string[] = [];
    const statementsFor = async (orgs: number) => {
      const batch: ConversationItems[] = [];
      for (let o = 0; o < orgs; o++) {
        const orgId = randomUUID();
        orgIds.push(orgId);
        const ids = [randomUUID(), randomUUID()];
        await oneAtATime(ids.flatMap((id) => events(orgId, id, [item(INBOUND, 0)])));
        batch.push(...ids.flatMap((id) => events(orgId, id, [item(REPLY, 2, agent)])));
      }
      return countingStatements((tx) => applyConversationItems(tx, batch));
    };
    // Per org: items, lock, update, durations; then the histogram and the user stats of all of them.
    expect(await statementsFor(1)).toBe(6);
    expect(await statementsFor(2)).toBe(10);
    expect(await statementsFor(3)).toBe(14);
    // Each org's rows are its own: two replies, each a response, in its day's user stats and its histogram.
    for (const orgId of orgIds) {
      const rows = await rowsOf(orgId);
      expect(rows.users.filter((u) => u.unit === 'd')).toEqual([expect.objectContaining({ user_id: agent, replies: 2, responses: 2 })]);
      expect(rows.histogram.reduce((n, h) => n + Number(h.n), 0)).toBeGreaterThan(0);
    }
  });
});

/** Sessions waiting for a lock the given client's transaction holds. */
async function waitingOn(holder: PoolClient): Promise<number> {
  const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
  return rows[0].n;
}

/** Runs `fn` in a transaction and counts the statements it sends. */
async function countingStatements(fn: (tx: PoolClient) => Promise<void>): Promise<number> {
  let n = 0;
  await withTransaction(pool, async (tx) => {
    const query = tx.query.bind(tx) as (...args: unknown[]) => unknown;
    const counting = new Proxy(tx, {
      get: (target, key, receiver) =>
        key === 'query'
          ? (...args: unknown[]) => {
              n++;
              return query(...args);
            }
          : Reflect.get(target, key, receiver),
    });
    await fn(counting);
  });
  return n;
}
