import { newOrg, client, type Client } from '../support/http';
import { ConsumerProbe } from '../support/consumers';
import { startStack, type Stack } from '../support/stack';
import { eventContact, sample, sleep, startProducer, startReceiver, verifySignature, type Receiver } from './support';

type Producer = Awaited<ReturnType<typeof startProducer>>;

// Events on the bus become signed webhooks: only public events, only to active endpoints of the event's
// organization that subscribe to its type; failed attempts are retried on the schedule and logged.
describe('webhook delivery', () => {
  let stack: Stack;
  let owner: Client;
  let orgId: string;
  let otherOrgId: string;
  let rx: Receiver;
  let producer: Producer;
  let fanOut: ConsumerProbe;

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      serviceEnv: {
        webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s', WEBHOOK_TIMEOUT_MS: '1000' },
      },
    });
    const api = client(stack.url);
    const org = await newOrg(api, 'Acme');
    owner = org.owner;
    orgId = org.user.orgId;
    otherOrgId = (await newOrg(api, 'Globex')).user.orgId;
    rx = await startReceiver();
    producer = await startProducer(stack.env.EVENTS_EXCHANGE);
    fanOut = new ConsumerProbe(stack, 'webhooks', `${stack.env.EVENTS_EXCHANGE}.webhooks.deliveries`);
  });
  afterAll(async () => {
    await producer?.close();
    await rx?.close();
    await stack?.stop();
  });

  const createHook = async (path: string, events: string[]) => {
    const res = await owner.post('/api/v1/webhook-settings', { url: rx.url(path), events });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  };
  const deliveriesOf = async (id: string) => (await owner.get(`/api/v1/webhook-settings/${id}/deliveries`)).body.data;
  const waitFor = async <T>(fn: () => Promise<T | false | undefined> | T | false | undefined, timeoutMs = 10_000): Promise<T> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > until) throw new Error('timed out waiting');
      await sleep(50);
    }
  };

  it('delivers contact.created and message.received to 127.0.0.1 with valid Standard Webhooks signatures', async () => {
    const hook = await createHook('/crm', ['contact.created', 'message.received']);
    const contact = eventContact({
      id: 'c0ffee00-0000-4000-8000-000000000001',
      name: 'Ada',
      phone: '+84900000001',
      email: '',
      status: 'lead',
      tags: ['vip'],
    });
    const created = await producer.emit('contact.created', orgId, { contact });
    const message = sample('message.received', { contactId: contact.id, content: 'Xin chào', sentAt: new Date().toISOString() });
    const received = await producer.emit('message.received', orgId, message);

    const got = await waitFor(() => rx.at('/crm').length >= 2 && rx.at('/crm'));
    const byType = Object.fromEntries(got.map((r) => [r.json.type, r]));
    // The public API's contact: fullName, not the internal name; an empty email is null.
    const publicContact = {
      id: contact.id,
      fullName: 'Ada',
      phone: '+84900000001',
      email: null,
      source: contact.source,
      status: 'lead',
      notes: contact.notes,
      tags: ['vip'],
      customFields: contact.customFields,
      createdAt: contact.createdAt,
      updatedAt: contact.updatedAt,
    };
    expect(byType['contact.created'].json).toEqual({ type: 'contact.created', timestamp: created.occurredAt, data: { contact: publicContact } });
    expect(byType['message.received'].json).toEqual({ type: 'message.received', timestamp: received.occurredAt, data: message });
    expect(byType['contact.created'].id).toBe(created.id);
    expect(byType['message.received'].id).toBe(received.id);
    for (const r of got) {
      expect(verifySignature(hook.secret, r)).toBe(true);
      expect(Math.abs(Number(r.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    }
    // A body altered in transit fails verification (the contact.created body holds the name; arrival order varies).
    const signed = byType['contact.created'];
    const altered = signed.body.replace('Ada', 'Eve');
    expect(altered).not.toBe(signed.body);
    expect(verifySignature(hook.secret, { ...signed, body: altered })).toBe(false);

    const log = await waitFor(async () => {
      const d = await deliveriesOf(hook.id);
      return d.length === 2 && d.every((x: { status: string }) => x.status === 'succeeded') && d;
    });
    expect(log.map((d: { eventType: string }) => d.eventType).sort()).toEqual(['contact.created', 'message.received']);
    expect(log[0].attempts).toEqual([expect.objectContaining({ attempt: 1, trigger: 'auto', ok: true, statusCode: 200 })]);
  });

  it("sends only subscribed public events of the endpoint's own organization, never internal ones", async () => {
    const hook = await createHook('/filter', ['contact.updated']);
    const mark = await fanOut.mark();
    await producer.emit('chatnet_account.qr', orgId, sample('chatnet_account.qr'));
    await producer.emit('chatnet.inbound', orgId, sample('chatnet.inbound', { content: 'raw' }));
    await producer.emit('contact.deleted', orgId, sample('contact.deleted'));
    await producer.emit('contact.updated', otherOrgId, { contact: eventContact(), changes: ['name'] });
    const mine = await producer.emit('contact.updated', orgId, { contact: eventContact(), changes: ['name'] });
    await waitFor(() => rx.at('/filter').length >= 1);
    // The three public events were fanned out (the internal ones are not even bound to the queue): the only
    // delivery row is the one already received, so nothing else can be sent later.
    await fanOut.settled(mark, 3);
    expect(rx.at('/filter').map((r) => r.id)).toEqual([mine.id]);
    expect(await deliveriesOf(hook.id)).toHaveLength(1);
  });

  it('does not deliver to an inactive endpoint', async () => {
    const hook = await createHook('/inactive', ['contact.deleted']);
    await owner.put(`/api/v1/webhook-settings/${hook.id}`, { active: false });
    const mark = await fanOut.mark();
    await producer.emit('contact.deleted', orgId, sample('contact.deleted'));
    // Fanned out without a delivery for the inactive endpoint: only what the fan-out plans (active, subscribed endpoints) is sent.
    await fanOut.settled(mark, 1);
    expect(rx.at('/inactive')).toHaveLength(0);
    expect(await deliveriesOf(hook.id)).toHaveLength(0);
  });

  it('retries a failing endpoint on the schedule (200ms, 500ms, 1s) until it answers 2xx', async () => {
    const hook = await createHook('/flaky', ['appointment.created']);
    rx.reply('/flaky', { status: 500, body: 'down' }, { status: 502 }, { status: 302 });
    const event = await producer.emit('appointment.created', orgId, sample('appointment.created'));

    const attempts = await waitFor(() => rx.at('/flaky').length >= 4 && rx.at('/flaky'), 15_000);
    expect(attempts.map((a) => a.id)).toEqual([event.id, event.id, event.id, event.id]);
    for (const a of attempts) expect(verifySignature(hook.secret, a)).toBe(true);
    const gaps = attempts.slice(1).map((a, i) => a.at - attempts[i].at);
    expect(gaps[0]).toBeGreaterThanOrEqual(180);
    expect(gaps[1]).toBeGreaterThanOrEqual(480);
    expect(gaps[2]).toBeGreaterThanOrEqual(980);
    expect(gaps[0]).toBeLessThan(gaps[1]);

    const [d] = await waitFor(async () => {
      const list = await deliveriesOf(hook.id);
      return list[0]?.status === 'succeeded' && list;
    });
    expect(d.attemptCount).toBe(4);
    expect(
      d.attempts.map((a: { statusCode: number; ok: boolean; error: string | null; trigger: string }) => [a.trigger, a.statusCode, a.ok, a.error]),
    ).toEqual([
      ['auto', 500, false, 'HTTP 500'],
      ['auto', 502, false, 'HTTP 502'],
      ['auto', 302, false, 'HTTP 302: redirects are not followed'],
      ['auto', 200, true, null],
    ]);
    expect(d.attempts[0].responseBody).toBe('down');
  });

  it('gives up after the last retry (failed), and a manual redelivery then succeeds', async () => {
    const hook = await createHook('/dead', ['conversation.archived']);
    rx.reply('/dead', ...Array.from({ length: 4 }, () => ({ status: 503 })));
    await producer.emit('conversation.archived', orgId, sample('conversation.archived'));
    const [d] = await waitFor(async () => {
      const list = await deliveriesOf(hook.id);
      return list[0]?.status === 'failed' && list;
    }, 15_000);
    expect(d.attemptCount).toBe(4);
    expect(d.nextAttemptAt).toBeNull();
    expect(d.lastStatusCode).toBe(503);

    expect((await owner.post(`/api/v1/webhook-settings/deliveries/${d.id}/redeliver`)).status).toBe(202);
    const [again] = await waitFor(async () => {
      const list = await deliveriesOf(hook.id);
      return list[0]?.status === 'succeeded' && list;
    });
    expect(again.attempts.map((a: { trigger: string }) => a.trigger)).toEqual(['auto', 'auto', 'auto', 'auto', 'manual']);
    expect(rx.at('/dead')).toHaveLength(5);
  });

  it('abandons an attempt that outlives the timeout and retries it', async () => {
    const hook = await createHook('/slow', ['chatnet_account.disconnected']);
    rx.reply('/slow', { status: 200, delayMs: 1_500 });
    await producer.emit('chatnet_account.disconnected', orgId, sample('chatnet_account.disconnected', { reason: 'dropped' }));
    const [d] = await waitFor(async () => {
      const list = await deliveriesOf(hook.id);
      return list[0]?.status === 'succeeded' && list;
    });
    expect(d.attempts.map((a: { ok: boolean; error: string | null; statusCode: number | null }) => [a.ok, a.statusCode, a.error])).toEqual([
      [false, null, 'timed out after 1000 ms'],
      [true, 200, null],
    ]);
    expect(d.attempts[0].durationMs).toBeGreaterThanOrEqual(990);
  });
});
