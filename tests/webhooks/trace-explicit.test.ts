import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { newTrace, startProcessStack, traceIdOf, type ProcessStack } from '../support/service-processes';
import { startReceiver, type Receiver } from './support';

/**
 * identity and webhooks run without AsyncLocalStorage unless spans are exported (their main.ts), and pass their trace
 * context explicitly. Started as `npm start` starts them (their own processes, nothing exported), a client's trace id
 * still reaches: the webhook a crm event causes (webhooks' consumer → delivery row → attempt span → header), a test
 * send (a webhooks handler's ctx → the request's header), and the events identity enqueues (a handler's ctx → the
 * outbox row).
 */
describe('trace context in services without an active context (nothing exported)', () => {
  let stack: ProcessStack;
  let rx: Receiver;
  let owner: Client;
  let pub: Client;
  let webhookId: string;

  beforeAll(async () => {
    stack = await startProcessStack(['crm', 'webhooks'], { serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' } } });
    const api = client(stack.url);
    ({ owner } = await newOrg(api, 'Explicit Trace'));
    rx = await startReceiver();
    const created = await owner.post('/api/v1/webhook-settings', { url: rx.url('/explicit'), events: ['contact.created'] });
    expect(created.status).toBe(201);
    webhookId = created.body.id;
    const key = await owner.post('/api/v1/settings/api-key/generate');
    pub = api.withKey(key.body.apiKey);
  }, 60_000);

  afterAll(async () => {
    await rx?.close();
    await stack?.stop();
  });

  it('a crm event delivered by webhooks carries the trace id of the request that caused it, in a span of its own', async () => {
    const { traceId, traceparent } = newTrace();
    const created = await pub.post('/api/public/contacts', { fullName: 'Tess Trace' }, { traceparent });
    expect(created.status).toBe(201);
    const delivered = await eventually(async () => rx.at('/explicit').find((r) => r.json?.data?.contact?.id === created.body.id), 15_000);
    expect(traceIdOf(delivered.traceparent)).toBe(traceId);
    expect(delivered.traceparent!.split('-')[2]).not.toBe(traceparent.split('-')[2]);
  });

  it('a test send carries the trace id of the API call that asked for it', async () => {
    const { traceId, traceparent } = newTrace();
    const sent = await owner.post(`/api/v1/webhook-settings/${webhookId}/test`, undefined, { traceparent });
    expect(sent.status).toBe(200);
    const got = await eventually(
      async () => rx.at('/explicit').find((r) => r.json?.type === 'webhook.test' && r.traceparent?.includes(traceId)),
      10_000,
    );
    expect(traceIdOf(got.traceparent)).toBe(traceId);
  });

  it("identity's events carry the trace id of the call that caused them (user.deactivated)", async () => {
    const made = await owner.post('/api/v1/users', {
      email: `${randomUUID()}@example.test`,
      fullName: 'Dee Activated',
      role: 'agent',
      password: 'correct horse battery',
    });
    expect(made.status).toBe(201);
    const { traceId, traceparent } = newTrace();
    expect((await owner.del(`/api/v1/users/${made.body.id}`, { traceparent })).status).toBe(204);
    const rows = await stack.query<{ traceparent: string | null }>(
      'identity',
      `SELECT traceparent FROM outbox WHERE type = 'user.deactivated' AND data->>'userId' = $1`,
      [made.body.id],
    );
    expect(rows).toHaveLength(1);
    expect(traceIdOf(rows[0].traceparent)).toBe(traceId);
  });

  it('without a traceparent each still starts a trace of its own: a valid traceparent, never the zero trace', async () => {
    const created = await pub.post('/api/public/contacts', { fullName: 'Newt Untraced' });
    expect(created.status).toBe(201);
    const delivered = await eventually(async () => rx.at('/explicit').find((r) => r.json?.data?.contact?.id === created.body.id), 15_000);
    const traceId = traceIdOf(delivered.traceparent);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('0'.repeat(32));
  });
});
