import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/**
 * messaging runs without AsyncLocalStorage unless spans are exported (its main.ts) and passes its trace context
 * explicitly. Started as `npm start` starts it (its own process, nothing exported), a client's trace id still reaches
 * the events it enqueues: from a gRPC handler (its ctx.traceparent: a priority change, an inbox settings change and
 * its audit entry), and from a consumed event (eventTraceparent: identity's user.deactivated releasing the user's
 * conversations, announced as conversation.assigned).
 */
describe('messaging without an active context (nothing exported): the trace travels explicitly', () => {
  const procs = new ServiceProcesses();
  const dbs: Record<string, TestDatabase> = {};
  const prefix = `${uniqueName('t')}:`;
  const exchange = uniqueName('t_events');
  let attachmentsDir: string;
  let owner: Client;
  let orgId: string;

  const traced = () => {
    const traceId = randomBytes(16).toString('hex');
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  };

  /** A query on messaging's database (its outbox, a conversation written directly: no chat-network account needed). */
  const messagingDb = async <T>(fn: (db: PgClient) => Promise<T>): Promise<T> => {
    const db = new PgClient({ connectionString: dbs.messaging.url });
    await db.connect();
    try {
      return await fn(db);
    } finally {
      await db.end();
    }
  };

  /** The traceparents of messaging's outbox rows of `type` whose data has `key` = `value`, in order. */
  const outboxTraces = (type: string, key?: string, value?: string) =>
    messagingDb(async (db) => {
      const { rows } = await db.query<{ traceparent: string | null }>(
        `SELECT traceparent FROM outbox WHERE type = $1 AND ($2::text IS NULL OR data->>$2 = $3) ORDER BY seq`,
        [type, key ?? null, value ?? null],
      );
      return rows.map((r) => r.traceparent);
    });

  const traceIdOf = (traceparent: string | null | undefined) => TRACEPARENT.exec(traceparent ?? '')?.[1];

  /** An open conversation of the org on an account nobody connected, assigned to `assigneeId` (or nobody). */
  const conversation = (assigneeId: string | null = null) =>
    messagingDb(async (db) => {
      const id = randomUUID();
      await db.query(
        `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, contact_name, assignee_id)
         VALUES ($1, $2, $3, 'user', $4, 'Tracy Trace', $5)`,
        [id, orgId, randomUUID(), `thread-${id}`, assigneeId],
      );
      return id;
    });

  beforeAll(async () => {
    for (const s of ['identity', 'messaging']) dbs[s] = await createTestDatabase(s);
    attachmentsDir = await mkdtemp(path.join(tmpdir(), 'trace-explicit-'));
    const ports = { identity: await freePort(), messaging: await freePort(), messagingHttp: await freePort(), gateway: await freePort() };
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
      DATABASE_POOL_SIZE: '5',
      IDENTITY_ADDR: `127.0.0.1:${ports.identity}`,
      MESSAGING_ADDR: `127.0.0.1:${ports.messaging}`,
      MESSAGING_HTTP_URL: `http://127.0.0.1:${ports.messagingHttp}`,
      // Services this test does not run: a port nothing listens on (9, discard), never their defaults (`npm start`'s).
      CRM_ADDR: '127.0.0.1:9',
      CONNECTOR_ADDR: '127.0.0.1:9',
      AI_ADDR: '127.0.0.1:9',
    };
    await procs.launch(
      'identity',
      { ...common, DATABASE_URL: dbs.identity.url, GRPC_PORT: String(ports.identity), LOG_LEVEL: 'info' },
      'identity listening',
    );
    await procs.launch(
      'messaging',
      {
        ...common,
        DATABASE_URL: dbs.messaging.url,
        GRPC_PORT: String(ports.messaging),
        HTTP_PORT: String(ports.messagingHttp),
        ATTACHMENTS_DIR: attachmentsDir,
        LOG_LEVEL: 'info',
      },
      'messaging listening',
    );
    await procs.launch('gateway', { ...common, PORT: String(ports.gateway), SERVICES: 'identity,messaging', LOG_LEVEL: 'info' }, 'gateway listening');
    const api = client(`http://127.0.0.1:${ports.gateway}`);
    const org = await newOrg(api, 'Explicit Messaging Trace');
    owner = org.owner;
    orgId = org.user.orgId;
  }, 90_000);

  afterAll(async () => {
    await procs.stop();
    for (const db of Object.values(dbs)) await db.drop();
    if (attachmentsDir) await rm(attachmentsDir, { recursive: true, force: true });
    await clearRedisPrefix(prefix);
    await deleteRabbitPrefix(infra.amqpUrl, exchange);
  });

  it("a handler's event carries the trace id of the API call (conversation.priority_changed)", async () => {
    const id = await conversation();
    const { traceId, traceparent } = traced();
    const set = await owner.put(`/api/v1/conversations/${id}/priority`, { priority: 'high' }, { traceparent });
    expect(set.status).toBe(200);
    const traces = await outboxTraces('conversation.priority_changed', 'conversationId', id);
    expect(traces).toHaveLength(1);
    expect(traceIdOf(traces[0])).toBe(traceId);
  });

  it("a consumed event's work carries the trace id of the call that caused the event (user.deactivated → conversation.assigned)", async () => {
    const made = await owner.post('/api/v1/users', {
      email: `${randomUUID()}@example.test`,
      fullName: 'Rhea Leased',
      role: 'agent',
      password: 'correct horse battery',
    });
    expect(made.status).toBe(201);
    const id = await conversation(made.body.id);
    const { traceId, traceparent } = traced();
    expect((await owner.del(`/api/v1/users/${made.body.id}`, { traceparent })).status).toBe(204);
    // identity → user.deactivated (the call's trace) → messaging's consumer releases the conversation, in the event's.
    const traces = await eventually(async () => {
      const found = await outboxTraces('conversation.assigned', 'conversationId', id);
      return found.length > 0 && found;
    }, 15_000);
    expect(traces).toHaveLength(1);
    expect(traceIdOf(traces[0])).toBe(traceId);
    // A span of its own (the consumer's), not the caller's.
    expect(traces[0]!.split('-')[2]).not.toBe(traceparent.split('-')[2]);
  });

  it('an inbox settings change and its audit entry carry the trace id of the API call', async () => {
    const { traceId, traceparent } = traced();
    const put = await owner.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' }, { traceparent });
    expect(put.status).toBe(200);
    const [updated] = await outboxTraces('inbox_settings.updated');
    expect(traceIdOf(updated)).toBe(traceId);
    const audits = await messagingDb(async (db) => {
      const { rows } = await db.query<{ traceparent: string | null }>(
        `SELECT traceparent FROM outbox WHERE type = 'audit.recorded' AND data->>'action' = 'settings.inbox_updated'`,
      );
      return rows;
    });
    expect(audits).toHaveLength(1);
    expect(traceIdOf(audits[0].traceparent)).toBe(traceId);
  });

  it('without a traceparent the event still starts a trace of its own: a valid traceparent, never the zero trace', async () => {
    const id = await conversation();
    expect((await owner.put(`/api/v1/conversations/${id}/priority`, { priority: 'low' })).status).toBe(200);
    const [untraced] = await outboxTraces('conversation.priority_changed', 'conversationId', id);
    const traceId = traceIdOf(untraced);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('0'.repeat(32));
  });
});
