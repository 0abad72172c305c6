import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { captureEvents } from './support';
import { connectPatiently } from '../support/patient-client';

// Inbound messages pushed through the sandbox in a burst: with the broker up they are published straight to it (each
// answer comes once the broker confirmed its message; no outbox row), every message becomes exactly one chatnet.inbound,
// and each thread's events keep their order. The outbox fallback is tested in services/chatnet-connector/test.
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
    pg = await connectPatiently(stack.databaseUrl('chatnet-connector'));
  });
  afterAll(async () => {
    await pg?.end();
    await stack?.stop();
    await bus?.stop(true);
  });

  /** The connector's outbox rows of chatnet.inbound for this account. */
  const outbox = async () =>
    (
      await pg.query<{ chatnet_message_id: string }>(
        `SELECT data->>'chatnetMessageId' AS chatnet_message_id FROM outbox WHERE type = 'chatnet.inbound' AND data->>'accountId' = $1`,
        [accountId],
      )
    ).rows;

  it('60 concurrent messages on 3 threads: 60 events published directly, none through the outbox, each thread in order', async () => {
    const threads = ['8800000000000000001', '8800000000000000002', '8800000000000000003'];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: threads[i % 3], content: `burst ${i}` })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(60).fill(200));
    const ids = answers.map((r) => r.body.chatnetMessageId as string);
    expect(new Set(ids).size).toBe(60);
    expect(await outbox()).toEqual([]);

    await eventually(async () => bus.of('chatnet.inbound', accountId).length >= 60, 15_000);
    const events = bus.of('chatnet.inbound', accountId);
    expect(events.map((e) => e.data.chatnetMessageId).sort()).toEqual([...ids].sort());
    for (const t of threads) {
      const published = events.filter((e) => e.data.threadId === t);
      expect(published).toHaveLength(20);
      // Published in the order they reached the connector (sentAt is stamped on arrival).
      const stamps = published.map((e) => Date.parse(e.data.sentAt));
      expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    }
  });

  it('the same network message handed over twice, together or later, is one event', async () => {
    const chatnetMessageId = `dup-${Date.now()}`;
    const push = () =>
      owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: '8800000000000000009', content: 'said once', chatnetMessageId });
    const together = await Promise.all([push(), push()]);
    expect(together.map((r) => r.status)).toEqual([200, 200]);
    expect((await push()).status).toBe(200);

    await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === chatnetMessageId);
    // A marker pushed after them is published after them: once it is seen, a duplicate would have been too.
    const marker = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: '8800000000000000009', content: 'marker' });
    await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === marker.body.chatnetMessageId);
    expect(bus.of('chatnet.inbound', accountId).filter((e) => e.data.chatnetMessageId === chatnetMessageId)).toHaveLength(1);
  });
});
