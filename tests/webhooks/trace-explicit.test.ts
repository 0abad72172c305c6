import { randomBytes, randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import {
  clearRedisPrefix,
  createTestDatabase,
  deleteRabbitPrefix,
  eventually,
  freePort,
  infra,
  internalAuthSeed,
  TestDatabase,
  uniqueName,
} from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { ServiceProcesses } from '../support/service-processes';
import { startReceiver, type Receiver } from './support';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/**
 * identity and webhooks run without AsyncLocalStorage unless spans are exported (their main.ts), and pass their trace
 * context explicitly. Started as `npm start` starts them (their own processes, nothing exported), a client's trace id
 * still reaches: the webhook a crm event causes (webhooks' consumer → delivery row → attempt span → header), a test
 * send (a webhooks handler's ctx → the request's header), and the events identity enqueues (a handler's ctx → the
 * outbox row).
 */
describe('trace context in services without an active context (nothing exported)', () => {
  const procs = new ServiceProcesses();
  const dbs: Record<string, TestDatabase> = {};
  const prefix = `${uniqueName('t')}:`;
  const exchange = uniqueName('t_events');
  let rx: Receiver;
  let owner: Client;
  let pub: Client;
  let webhookId: string;

  const traced = () => {
    const traceId = randomBytes(16).toString('hex');
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  };

  beforeAll(async () => {
    for (const s of ['identity', 'crm', 'webhooks']) dbs[s] = await createTestDatabase(s);
    const ports = { identity: await freePort(), crm: await freePort(), webhooks: await freePort(), gateway: await freePort() };
    const common = {
      JWT_SECRET: randomBytes(32).toString('hex'),
      INTERNAL_AUTH_SEED: internalAuthSeed,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      REDIS_PREFIX: prefix,
      REDIS_URL: infra.redisUrl,
      AMQP_URL: infra.amqpUrl,
      EVENTS_EXCHANGE: exchange,
      LOG_LEVEL: 'warn',
      SIGNUP_ENABLED: 'true',
      METRICS_PORT: '0',
      IDENTITY_ADDR: `127.0.0.1:${ports.identity}`,
      CRM_ADDR: `127.0.0.1:${ports.crm}`,
      WEBHOOKS_ADDR: `127.0.0.1:${ports.webhooks}`,
    };
    const service = (s: 'identity' | 'crm' | 'webhooks', extra: Record<string, string> = {}) =>
      procs.launch(s, { ...common, DATABASE_URL: dbs[s].url, GRPC_PORT: String(ports[s]), LOG_LEVEL: 'info', ...extra }, `${s} listening`);
    await Promise.all([service('identity'), service('crm'), service('webhooks', { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' })]);
    await procs.launch(
      'gateway',
      { ...common, PORT: String(ports.gateway), SERVICES: 'identity,crm,webhooks', LOG_LEVEL: 'info' },
      'gateway listening',
    );

    const api = client(`http://127.0.0.1:${ports.gateway}`);
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
    await procs.stop();
    for (const db of Object.values(dbs)) await db.drop();
    await clearRedisPrefix(prefix);
    await deleteRabbitPrefix(infra.amqpUrl, exchange);
  });

  it('a crm event delivered by webhooks carries the trace id of the request that caused it, in a span of its own', async () => {
    const { traceId, traceparent } = traced();
    const created = await pub.post('/api/public/contacts', { fullName: 'Tess Trace' }, { traceparent });
    expect(created.status).toBe(201);
    const delivered = await eventually(async () => rx.at('/explicit').find((r) => r.json?.data?.contact?.id === created.body.id), 15_000);
    const [, deliveredTrace, deliveredSpan] = TRACEPARENT.exec(delivered.traceparent ?? '') ?? [];
    expect(deliveredTrace).toBe(traceId);
    expect(deliveredSpan).not.toBe(traceparent.split('-')[2]);
  });

  it('a test send carries the trace id of the API call that asked for it', async () => {
    const { traceId, traceparent } = traced();
    const sent = await owner.post(`/api/v1/webhook-settings/${webhookId}/test`, undefined, { traceparent });
    expect(sent.status).toBe(200);
    const got = await eventually(
      async () => rx.at('/explicit').find((r) => r.json?.type === 'webhook.test' && r.traceparent?.includes(traceId)),
      10_000,
    );
    expect(TRACEPARENT.exec(got.traceparent ?? '')?.[1]).toBe(traceId);
  });

  it("identity's events carry the trace id of the call that caused them (user.deactivated)", async () => {
    const made = await owner.post('/api/v1/users', {
      email: `${randomUUID()}@example.test`,
      fullName: 'Dee Activated',
      role: 'agent',
      password: 'correct horse battery',
    });
    expect(made.status).toBe(201);
    const { traceId, traceparent } = traced();
    expect((await owner.del(`/api/v1/users/${made.body.id}`, { traceparent })).status).toBe(204);
    const db = new PgClient({ connectionString: dbs.identity.url });
    await db.connect();
    try {
      const { rows } = await db.query<{ traceparent: string | null }>(
        `SELECT traceparent FROM outbox WHERE type = 'user.deactivated' AND data->>'userId' = $1`,
        [made.body.id],
      );
      expect(rows).toHaveLength(1);
      expect(TRACEPARENT.exec(rows[0].traceparent ?? '')?.[1]).toBe(traceId);
    } finally {
      await db.end();
    }
  });

  it('without a traceparent each still starts a trace of its own: a valid traceparent, never the zero trace', async () => {
    const created = await pub.post('/api/public/contacts', { fullName: 'Newt Untraced' });
    expect(created.status).toBe(201);
    const delivered = await eventually(async () => rx.at('/explicit').find((r) => r.json?.data?.contact?.id === created.body.id), 15_000);
    const [, traceId] = TRACEPARENT.exec(delivered.traceparent ?? '') ?? [];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('0'.repeat(32));
  });
});
