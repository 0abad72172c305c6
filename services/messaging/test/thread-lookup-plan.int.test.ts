import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { migrate, Pool, withTransaction } from '@crm/db';
import { createTestDatabase, TestDatabase, testPool } from '@crm/testing';
import { threadsWithConversation, ThreadRef } from '../src/conversations/conversations.repo';
import { insertInboundBatch, NewThreadInbound } from '../src/conversations/messages.repo';

// The inbound consumer finds a batch's conversations by their threads. Run as prepared statements, the plan
// PostgreSQL kept after a few calls was made while the org had few conversations: it looked them up by org_id alone
// and read every conversation of the org for each thread once the org had thousands (a burst of new senders at
// 200 msg/s: 160 ms a batch, a backlog of 25 s). Whatever was planned before, a lookup reads a few rows per thread.
// Counted with the server's own statistics, on one connection (the one a prepared plan would live on).
describe('thread lookups stay on the thread index as an org grows', () => {
  let db: TestDatabase;
  let pool: Pool;
  let reader: Pool;
  const org = randomUUID();
  const account = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase('msg_thread_plan');
    pool = testPool(db.url, 1);
    reader = testPool(db.url, 1);
    await migrate(pool, path.join(__dirname, '..', 'migrations'));
  });
  afterAll(async () => {
    await pool?.end();
    await reader?.end();
    await db?.drop();
  });

  /** `n` conversations of the org, with threads `prefix-0` … `prefix-(n-1)`. */
  const conversations = (prefix: string, n: number) =>
    pool.query(
      `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, contact_chatnet_uid, contact_name)
       SELECT gen_random_uuid(), $1, $2, 'user', $3 || '-' || g, $3 || '-' || g, 'Lan' FROM generate_series(0, $4 - 1) g`,
      [org, account, prefix, n],
    );
  const threads = (prefix: string, n: number): ThreadRef[] =>
    Array.from({ length: n }, (_, i) => ({ orgId: org, accountId: account, threadType: 'user', threadId: `${prefix}-${i}` }));
  const messages = (prefix: string, n: number): NewThreadInbound[] =>
    threads(prefix, n).map((t, i) => ({
      id: randomUUID(),
      orgId: org,
      accountId: account,
      chatnetMessageId: `net-${randomUUID()}`,
      content: `hello ${i}`,
      contentType: 'text',
      senderUid: t.threadId,
      senderName: 'Lan',
      sentAt: new Date(),
      senderContactId: null,
      groupName: '',
      cliMsgId: '',
      threadType: 'user',
      threadId: t.threadId,
    }));

  /** Rows the server read from conversations (through any index, or scanned), as its statistics count them. */
  async function rowsRead(): Promise<number> {
    // The pooled connection's counters reach the shared statistics when it next goes idle, at once when asked to.
    await pool.query('SELECT pg_stat_force_next_flush()');
    await pool.query('SELECT 1');
    await reader.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await reader.query<{ n: string }>(
      `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_user_tables WHERE relname = 'conversations'`,
    );
    return Number(rows[0].n);
  }

  it('reads a few conversations per thread, however many the org had when the lookups were first made', async () => {
    await conversations('early', 100);
    // PostgreSQL keeps a statement's generic plan once it costs about what its first custom plans did: made to here,
    // the choice does not hang on this machine's cost estimates. (One connection: the setting stays on it.)
    await pool.query('SET plan_cache_mode = force_generic_plan');
    // More calls than PostgreSQL makes custom plans for before it may keep a generic one (five).
    // New senders, as in a burst of leads: their threads have no conversation yet.
    for (let i = 0; i < 8; i++) {
      expect((await threadsWithConversation(pool, threads(`new${i}`, 33))).size).toBe(0);
      expect(await withTransaction(pool, (tx) => insertInboundBatch(tx, messages(`new${i}`, 33)))).toEqual(Array(33).fill(undefined));
    }
    await conversations('later', 5000);

    const before = await rowsRead();
    expect((await threadsWithConversation(pool, threads('later', 20))).size).toBe(20);
    const looked = (await rowsRead()) - before;
    const stored = await withTransaction(pool, (tx) => insertInboundBatch(tx, messages('later', 20)));
    expect(stored.every((s) => s?.stored)).toBe(true);
    const batch = (await rowsRead()) - before - looked;
    // A few rows per thread (the batch also locks and bumps each conversation); a plan that reads the org's 5,100
    // conversations reads them all at least once (and, by org_id alone, once per thread: ~100,000).
    expect({ looked, batch }).toEqual({ looked: Math.min(looked, 200), batch: Math.min(batch, 1000) });
  });
});
