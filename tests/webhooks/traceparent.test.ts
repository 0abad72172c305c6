import { randomBytes } from 'node:crypto';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { sleep, startReceiver, type Received, type Receiver } from './support';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/**
 * One trace across the bus: a request's W3C `traceparent` goes gateway → gRPC (crm) → crm's outbox row →
 * the AMQP message → the webhooks consumer's span → the delivery row → the webhook request's header.
 */
describe('traceparent from an API request to the webhook it causes', () => {
  let stack: Stack;
  let pub: Client;
  let rx: Receiver;

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'webhooks'],
      serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' } },
    });
    const api = client(stack.url);
    const { owner } = await newOrg(api, 'Traced');
    rx = await startReceiver();
    expect((await owner.post('/api/v1/webhook-settings', { url: rx.url('/traced'), events: ['contact.created'] })).status).toBe(201);
    const key = await owner.post('/api/v1/settings/api-key/generate');
    pub = api.withKey(key.body.apiKey);
  });
  afterAll(async () => {
    await rx?.close();
    await stack?.stop();
  });

  async function deliveryOf(contactId: string): Promise<Received> {
    const until = Date.now() + 10_000;
    for (;;) {
      const got = rx.at('/traced').find((r) => r.json?.data?.contact?.id === contactId);
      if (got) return got;
      if (Date.now() > until) throw new Error(`no contact.created delivery for ${contactId}`);
      await sleep(50);
    }
  }

  it('POST /api/public/contacts with traceparent → the contact.created delivery carries the same trace id, a new span id', async () => {
    const traceId = randomBytes(16).toString('hex');
    const spanId = randomBytes(8).toString('hex');
    const created = await pub.post('/api/public/contacts', { fullName: 'Tracy Trace' }, { traceparent: `00-${traceId}-${spanId}-01` });
    expect(created.status).toBe(201);

    const delivered = await deliveryOf(created.body.id);
    expect(delivered.json.type).toBe('contact.created');
    const [, deliveredTrace, deliveredSpan] = TRACEPARENT.exec(delivered.traceparent ?? '') ?? [];
    expect(deliveredTrace).toBe(traceId);
    expect(deliveredSpan).toMatch(/^[0-9a-f]{16}$/);
    expect(deliveredSpan).not.toBe(spanId);
  });

  it('POST /api/public/contacts without traceparent → the delivery still carries a valid traceparent of a new trace', async () => {
    const created = await pub.post('/api/public/contacts', { fullName: 'Newt Trace' });
    expect(created.status).toBe(201);

    const delivered = await deliveryOf(created.body.id);
    const [, traceId, spanId] = TRACEPARENT.exec(delivered.traceparent ?? '') ?? [];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('0'.repeat(32));
    expect(spanId).not.toBe('0'.repeat(16));
  });

  it('a malformed traceparent is ignored: the request succeeds and its delivery starts a new trace', async () => {
    const created = await pub.post('/api/public/contacts', { fullName: 'Mal Formed' }, { traceparent: '00-not-a-trace-01' });
    expect(created.status).toBe(201);

    const delivered = await deliveryOf(created.body.id);
    expect(delivered.traceparent).toMatch(TRACEPARENT);
  });
});
