import { type Pool } from '@crm/db';
import { installEventTables, type NewEvent } from '@crm/events';
import { createLogger } from '@crm/logger';
import { createTestDatabase, type TestDatabase, testPool } from '@crm/testing';
import { OutboxBatcher, type OutboxBatcherOptions } from '../src/events/outbox-batcher';
import { inboundEventId } from '../src/events/events';

const ORG = '0b7f6f0e-3c1a-4c55-8a47-51a1d1a5e001';
const ACCOUNT = '0b7f6f0e-3c1a-4c55-8a47-51a1d1a5e002';
const log = createLogger('outbox-batcher-test', process.env.LOG_LEVEL ?? 'silent');

// The batcher against a real outbox (no relay runs here, so each row's xmin is still the id of the
// transaction that inserted it: rows of one batch share it).
describe('OutboxBatcher', () => {
  let db: TestDatabase;
  let pool: Pool;
  const open: OutboxBatcher[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('chatnet_batcher');
    pool = testPool(db.url, 4);
    await installEventTables(pool);
  });
  afterAll(async () => {
    await Promise.all(open.map((b) => b.close()));
    await pool?.end();
    await db?.drop();
  });

  const batcher = (o: Partial<OutboxBatcherOptions> = {}) => {
    const b = new OutboxBatcher({ pool, log, maxEvents: 100, maxWaitMs: 5, ...o });
    open.push(b);
    return b;
  };
  // A real chatnet.inbound (the outbox checks producer data against the event's schema); the run and the
  // message's number travel in its network id, `<run>:<thread>:<n>`.
  const message = (run: string, thread: string, i: number): NewEvent<'chatnet.inbound'> => ({
    id: inboundEventId(`acc-${run}`, `${thread}-${i}`),
    type: 'chatnet.inbound',
    orgId: ORG,
    data: {
      accountId: ACCOUNT,
      chatnetMessageId: `${run}:${thread}:${i}`,
      threadId: thread,
      threadType: 'user',
      fromUid: thread,
      fromName: 'Lan',
      fromAvatar: '',
      content: `message ${i} of ${thread}`,
      contentType: 'text',
      sentAt: new Date().toISOString(),
    },
  });
  const rowsOf = async (run: string) =>
    (
      await pool.query<{ id: string; xmin: string; thread: string; n: number; occurred_at: Date }>(
        `SELECT id, xmin::text AS xmin, data->>'threadId' AS thread, split_part(data->>'chatnetMessageId', ':', 3)::int AS n, occurred_at
         FROM outbox WHERE split_part(data->>'chatnetMessageId', ':', 1) = $1 ORDER BY seq`,
        [run],
      )
    ).rows;

  it('250 events handed in at once are written in arrival order by 3 transactions of at most 100', async () => {
    // A wait far longer than handing them in takes, even when the machine stalls this process for a few ms.
    const b = batcher({ maxWaitMs: 1_000 });
    const sent: NewEvent[] = [];
    for (let i = 0; i < 50; i++) for (const t of ['t1', 't2', 't3', 't4', 't5']) sent.push(message('order', t, i));
    await Promise.all(sent.map((e) => b.enqueue(e)));

    const rows = await rowsOf('order');
    expect(rows.map((r) => r.id)).toEqual(sent.map((e) => e.id));
    const perTransaction = new Map<string, number>();
    for (const r of rows) perTransaction.set(r.xmin, (perTransaction.get(r.xmin) ?? 0) + 1);
    expect([...perTransaction.values()]).toEqual([100, 100, 50]);
    // Each thread's messages in the order they arrived.
    for (const t of ['t1', 't2', 't3', 't4', 't5']) expect(rows.filter((r) => r.thread === t).map((r) => r.n)).toEqual([...Array(50).keys()]);
  });

  it('a single event on an idle batcher is committed after the short wait, not held for a full batch', async () => {
    const b = batcher({ maxWaitMs: 20 });
    const started = Date.now();
    // Nothing else ever arrives: without the time limit this would wait for 99 more events forever.
    await b.enqueue(message('idle', 't1', 0));
    // 20 ms of waiting plus one insert; the bound is generous for a loaded 2-core machine.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await rowsOf('idle')).toHaveLength(1);
  });

  it('events arriving while a batch is written wait for it and keep their place after it', async () => {
    const b = batcher({ maxWaitMs: 0 });
    const first = b.enqueue(message('behind', 't1', 0));
    const rest = [1, 2, 3, 4].map((i) => b.enqueue(message('behind', 't1', i)));
    await Promise.all([first, ...rest]);
    const rows = await rowsOf('behind');
    expect(rows.map((r) => r.n)).toEqual([0, 1, 2, 3, 4]);
    // The first went alone (no waiting); the others, queued behind it, together.
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(2);
    expect(rows[1].xmin).not.toBe(rows[0].xmin);
    expect(new Set(rows.slice(1).map((r) => r.xmin)).size).toBe(1);
  });

  it('the same network message handed twice, in one batch or in a later one, is one row; every caller is answered', async () => {
    const b = batcher();
    const twice = message('dupe', 't1', 7);
    await Promise.all([b.enqueue(twice), b.enqueue(message('dupe', 't1', 8)), b.enqueue({ ...twice })]);
    await b.enqueue({ ...twice });
    const rows = await rowsOf('dupe');
    expect(rows.map((r) => r.n)).toEqual([7, 8]);
  });

  it('an event PostgreSQL refuses fails only its own caller: the rest of its batch is written, in order', async () => {
    const b = batcher();
    // jsonb refuses the NUL character, so this one can never be stored.
    const bad = message('poison', 't1', 1);
    const poison: NewEvent<'chatnet.inbound'> = { ...bad, data: { ...bad.data, content: 'bad \u0000 byte' } };
    const results = await Promise.allSettled([b.enqueue(message('poison', 't1', 0)), b.enqueue(poison), b.enqueue(message('poison', 't1', 2))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as Error).message).toMatch(/\\u0000|Unicode/i);
    expect((await rowsOf('poison')).map((r) => r.n)).toEqual([0, 2]);
  });

  it('occurredAt is the time each event was handed in, not the time its batch was written', async () => {
    const b = batcher({ maxWaitMs: 2_000 });
    const before = Date.now();
    const written = b.enqueue(message('clock', 't1', 0));
    // Taken before the batch's 2 s wait can even start to run out (the batch is written from a timer, after this line).
    const handedIn = Date.now();
    await written;
    expect(Date.now() - before).toBeGreaterThanOrEqual(1_990);
    const [row] = await rowsOf('clock');
    // Stamped while it was handed in: a time stamped at the write would come after handedIn (by the 2 s wait), so this
    // proves it by order rather than by a bound that a stall of this process on a loaded machine could overrun.
    expect(row.occurred_at.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(row.occurred_at.getTime()).toBeLessThanOrEqual(handedIn);
  });

  it('when the database cannot be reached every caller is rejected, none left waiting', async () => {
    const down = testPool(db.url.replace(/\/[^/]+$/, '/t_chatnet_batcher_missing_db'), 2);
    const b = new OutboxBatcher({ pool: down, log, maxEvents: 100, maxWaitMs: 5 });
    try {
      const results = await Promise.allSettled([0, 1, 2].map((i) => b.enqueue(message('down', 't1', i))));
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    } finally {
      await b.close();
      await down.end();
    }
  });

  it('close() writes what is still waiting, then refuses new events', async () => {
    const b = new OutboxBatcher({ pool, log, maxEvents: 100, maxWaitMs: 60_000 });
    const pending = b.enqueue(message('close', 't1', 0));
    await b.close();
    await pending;
    expect(await rowsOf('close')).toHaveLength(1);
    await expect(b.enqueue(message('close', 't1', 1))).rejects.toThrow(/closed/);
  });
});
