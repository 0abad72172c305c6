import { eventually } from '@crm/testing';
import { newOrg, client, type Client } from '../support/http';
import { ConsumerProbe } from '../support/consumers';
import { startStack, type Stack } from '../support/stack';
import { eventContact, sleep, startProducer, startReceiver, watchEvents, type Receiver } from './support';

// An endpoint that fails without a single success for WEBHOOK_DISABLE_AFTER (5 days by default; 1.5 s
// here) is disabled, what still waits for it fails, and `webhook.disabled` is published so automation
// can notify the organization. One success resets the clock.
describe('auto-disable after continuous failure', () => {
  let stack: Stack;
  let owner: Client;
  let orgId: string;
  let rx: Receiver;
  let producer: Awaited<ReturnType<typeof startProducer>>;
  let watcher: Awaited<ReturnType<typeof watchEvents>>;
  let fanOut: ConsumerProbe;

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      serviceEnv: {
        webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '300ms', WEBHOOK_DISABLE_AFTER: '1500ms' },
      },
    });
    const org = await newOrg(client(stack.url), 'Acme');
    owner = org.owner;
    orgId = org.user.orgId;
    rx = await startReceiver();
    producer = await startProducer(stack.env.EVENTS_EXCHANGE);
    watcher = await watchEvents(stack.env.EVENTS_EXCHANGE, 'webhook.disabled');
    fanOut = new ConsumerProbe(stack, 'webhooks', `${stack.env.EVENTS_EXCHANGE}.webhooks.deliveries`);
  });
  afterAll(async () => {
    await watcher?.close();
    await producer?.close();
    await rx?.close();
    await stack?.stop();
  });

  it('a success within the window keeps the endpoint active', async () => {
    const hook = (await owner.post('/api/v1/webhook-settings', { url: rx.url('/recovering'), events: ['contact.created'] })).body;
    rx.reply('/recovering', { status: 500 }, { status: 200 }, { status: 500 }, { status: 500 });
    for (let i = 0; i < 3; i++) {
      await producer.emit('contact.created', orgId, { contact: eventContact() });
      await sleep(700);
    }
    // Every delivery has its final outcome: nothing is pending, so no later attempt can still disable the endpoint.
    await eventually(async () => {
      const d = (await owner.get(`/api/v1/webhook-settings/${hook.id}/deliveries?limit=100`)).body.data as Array<{ status: string }>;
      return d.length === 3 && d.every((x) => x.status !== 'pending');
    });
    expect((await owner.get(`/api/v1/webhook-settings/${hook.id}`)).body.active).toBe(true);
  });

  it('disables the endpoint, fails what waits for it and publishes webhook.disabled', async () => {
    const hook = (await owner.post('/api/v1/webhook-settings', { url: rx.url('/broken'), events: ['contact.updated'] })).body;
    rx.setDown(true);
    // A steady trickle of events, every attempt failing, for longer than the window.
    const until = Date.now() + 2_500;
    while (Date.now() < until) {
      await producer.emit('contact.updated', orgId, { contact: eventContact(), changes: ['name'] });
      await sleep(250);
    }
    const disabled = await waitFor(() => watcher.seen.find((e) => e.data && (e.data as { webhookId: string }).webhookId === hook.id));
    expect(disabled).toEqual({
      id: expect.any(String),
      type: 'webhook.disabled',
      orgId,
      occurredAt: expect.any(String),
      version: 1,
      data: {
        webhookId: hook.id,
        url: rx.url('/broken'),
        reason: expect.stringMatching(/^failing continuously for \d+ seconds \(last error: HTTP 503\)$/),
      },
    });
    const setting = (await owner.get(`/api/v1/webhook-settings/${hook.id}`)).body;
    expect(setting).toEqual(
      expect.objectContaining({ active: false, disabledAt: expect.any(String), disabledReason: (disabled.data as { reason: string }).reason }),
    );
    // An attempt in flight when the endpoint was disabled is recorded failed when it ends (a moment later under load).
    const allFailed = await eventually(async () => {
      const log = (await owner.get(`/api/v1/webhook-settings/${hook.id}/deliveries?limit=100`)).body.data as Array<{ status: string }>;
      return log.length > 0 && log.every((d) => d.status === 'failed') ? true : undefined;
    }, 10_000).catch(() => false);
    expect(allFailed).toBe(true);

    // Nothing more is sent to it.
    rx.setDown(false);
    const count = rx.at('/broken').length;
    const mark = await fanOut.mark();
    await producer.emit('contact.updated', orgId, { contact: eventContact(), changes: ['name'] });
    // Fanned out without a row for the disabled endpoint, and only rows are ever sent.
    await fanOut.settled(mark, 1);
    expect(rx.at('/broken')).toHaveLength(count);
    expect(watcher.seen.filter((e) => (e.data as { webhookId: string }).webhookId === hook.id)).toHaveLength(1);
  });
});

async function waitFor<T>(fn: () => T | false | undefined, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await sleep(50);
  }
}
