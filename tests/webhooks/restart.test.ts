import { connect } from 'amqplib';
import { infra } from '@crm/testing';
import { newOrg, client, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { eventContact, sleep, startProducer, startReceiver, verifySignature, type Receiver } from './support';

// Deliveries are durable: pending ones survive a restart of the webhooks service, and events published
// while it is down wait in its queue. Every event is delivered; none is lost.
describe('webhooks service restart', () => {
  let stack: Stack;
  let owner: Client;
  let orgId: string;
  let rx: Receiver;
  let producer: Awaited<ReturnType<typeof startProducer>>;

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s' } },
    });
    const org = await newOrg(client(stack.url), 'Acme');
    owner = org.owner;
    orgId = org.user.orgId;
    rx = await startReceiver();
    producer = await startProducer(stack.env.EVENTS_EXCHANGE);
  });
  afterAll(async () => {
    await producer?.close();
    await rx?.close();
    await stack?.stop();
  });

  it('delivers every pending delivery and every event published while it was down, after a restart', async () => {
    const hook = (await owner.post('/api/v1/webhook-settings', { url: rx.url('/r'), events: ['contact.created'] })).body;
    // The endpoint is down: the first attempt of each event fails and the deliveries wait for a retry.
    const N = 20;
    rx.setDown(true);
    const before = await Promise.all(Array.from({ length: N }, () => producer.emit('contact.created', orgId, { contact: eventContact() })));
    await waitFor(async () => rx.at('/r').length >= N);
    // A first attempt is made before its row is written, and a failed one recorded after: the rows and their failed
    // attempts follow the requests by a few milliseconds.
    await waitFor(async () => {
      const list = (await owner.get(`/api/v1/webhook-settings/${hook.id}/deliveries?status=pending&limit=100`)).body;
      return list.pagination.total === N && list.data.length === N && list.data.every((d: { attemptCount: number }) => d.attemptCount >= 1);
    });
    await stack.stopService('webhooks');

    // While the service is down, more events arrive on the bus, and the endpoint recovers.
    const during = await Promise.all(Array.from({ length: N }, () => producer.emit('contact.created', orgId, { contact: eventContact() })));
    rx.setDown(false);
    // They wait in its queue (the producer's relay has published them) before it starts again.
    const broker = await connect(infra.amqpUrl);
    try {
      const channel = await broker.createChannel();
      const queue = `${stack.env.EVENTS_EXCHANGE}.webhooks.deliveries`;
      await waitFor(async () => (await channel.checkQueue(queue)).messageCount >= N);
    } finally {
      await broker.close();
    }
    await stack.startService('webhooks');

    const ids = [...before, ...during].map((e) => e.id);
    await waitFor(() => ids.every((id) => rx.received.some((r) => r.id === id && r.path === '/r')), 20_000);
    // A first attempt is made before its row is written: the requests can all have arrived while the last rows are
    // still being written, so wait for every row, each succeeded. The page and its total are two reads, which can
    // straddle a commit (a total of 2N beside a page of N was seen): the page itself must hold every row.
    const ok = await waitFor(async () => {
      const list = (await owner.get(`/api/v1/webhook-settings/${hook.id}/deliveries?limit=100`)).body;
      return (
        list.pagination.total === 2 * N && list.data.length === 2 * N && list.data.every((d: { status: string }) => d.status === 'succeeded') && list
      );
    });
    expect(ok.pagination.total).toBe(2 * N);
    expect(new Set(ok.data.map((d: { eventId: string }) => d.eventId))).toEqual(new Set(ids));
    for (const r of rx.at('/r')) expect(verifySignature(hook.secret, r)).toBe(true);
  });
});

async function waitFor<T>(fn: () => Promise<T | false | undefined> | T | false | undefined, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await sleep(50);
  }
}
