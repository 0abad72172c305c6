import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { captureEvents } from './support';

// Inbound messages pushed through the sandbox in a burst: each answer comes once its message is committed
// to the connector's outbox, the burst is written by fewer transactions than messages (the connector
// batches), every message becomes exactly one chatnet.inbound, and each thread's events keep their order.
describe('POST /sandbox/accounts/:id/inbound under a burst', () => {
  let stack: Stack;
  let owner: Client;
  let bus: Awaited<ReturnType<typeof captureEvents>>;
  let pg: PgClient;
  let accountId: string;

  beforeAll(async () => {
    stack = await startStack({ services: ['chatnet-connector'] });
    const api = client(stack.url);
    owner = (await newOrg(api, 'Burst Co')).owner;
    bus = await captureEvents(stack.env.EVENTS_EXCHANGE, 'chatnet.#');
    accountId = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Busy line' })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${accountId}/scan`, {})).status).toBe(200);
    pg = new PgClient({ connectionString: stack.databaseUrl('chatnet-connector') });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await stack?.stop();
    await bus?.stop(true);
  });

  /** The connector's outbox rows of chatnet.inbound for this account, in seq (publishing) order. */
  const outbox = async () =>
    (
      await pg.query<{ seq: number; chatnet_message_id: string; thread_id: string; sent_at: string; created_at: string }>(
        `SELECT seq, data->>'chatnetMessageId' AS chatnet_message_id, data->>'threadId' AS thread_id, data->>'sentAt' AS sent_at,
                created_at::text AS created_at
         FROM outbox WHERE type = 'chatnet.inbound' AND data->>'accountId' = $1 ORDER BY seq`,
        [accountId],
      )
    ).rows;

  it('60 concurrent messages on 3 threads: 60 events, fewer transactions than messages, each thread in order', async () => {
    const threads = ['8800000000000000001', '8800000000000000002', '8800000000000000003'];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: threads[i % 3], content: `burst ${i}` })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(60).fill(200));
    const ids = answers.map((r) => r.body.chatnetMessageId as string);
    expect(new Set(ids).size).toBe(60);

    // Every answer came after its message was committed: all 60 rows are there the moment the last answer is in.
    const rows = await outbox();
    expect(rows.map((r) => r.chatnet_message_id).sort()).toEqual([...ids].sort());
    // created_at is now(), the start of the inserting transaction: rows of one batch share it.
    const transactions = new Set(rows.map((r) => r.created_at)).size;
    expect(transactions).toBeLessThan(60);

    await eventually(async () => bus.of('chatnet.inbound', accountId).length >= 60, 15_000);
    const events = bus.of('chatnet.inbound', accountId);
    expect(events).toHaveLength(60);
    for (const t of threads) {
      const published = events.filter((e) => e.data.threadId === t);
      const stored = rows.filter((r) => r.thread_id === t);
      expect(published).toHaveLength(20);
      // Published in the order they were stored, and stored in the order they reached the connector (sentAt is stamped on arrival).
      expect(published.map((e) => e.data.chatnetMessageId)).toEqual(stored.map((r) => r.chatnet_message_id));
      const stamps = stored.map((r) => Date.parse(r.sent_at));
      expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    }
  });

  it('the same network message handed over twice, together or later, is one row and one event', async () => {
    const chatnetMessageId = `dup-${Date.now()}`;
    const push = () => owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: '8800000000000000009', content: 'said once', chatnetMessageId });
    const together = await Promise.all([push(), push()]);
    expect(together.map((r) => r.status)).toEqual([200, 200]);
    expect((await push()).status).toBe(200);

    expect((await outbox()).filter((r) => r.chatnet_message_id === chatnetMessageId)).toHaveLength(1);
    await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === chatnetMessageId);
    // A marker pushed after them is published after them: once it is seen, a duplicate would have been too.
    const marker = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: '8800000000000000009', content: 'marker' });
    await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === marker.body.chatnetMessageId);
    expect(bus.of('chatnet.inbound', accountId).filter((e) => e.data.chatnetMessageId === chatnetMessageId)).toHaveLength(1);
  });
});
