import { randomBytes, randomUUID } from 'node:crypto';
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import { Client as PgClient } from 'pg';
import { amqpUser } from '@crm/events';
import { createTestDatabase, deleteRabbitPrefix, eventually, freePort, infra, internalAuthSeed, TestDatabase, uniqueName } from '@crm/testing';
import { eventData, messageData } from '../support/event-data';
import { client, newOrg, type Client } from '../support/http';
import { ServiceProcesses } from '../support/service-processes';
import { producerStampHeaders } from '../support/stamps';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/**
 * automation runs without AsyncLocalStorage unless spans are exported (its main.ts) and passes its trace context
 * explicitly. Started as `npm start` starts it (its own process, nothing exported), the trace still reaches what it
 * enqueues: the audit entry of an API call (a handler's ctx.traceparent → the outbox row), and the notifications a
 * consumed event raises (eventTraceparent → the outbox row), each event of a batch in its own trace.
 */
describe('trace context in automation without an active context (nothing exported)', () => {
  const procs = new ServiceProcesses();
  const dbs: Record<string, TestDatabase> = {};
  const exchange = uniqueName('t_events');
  let owner: Client;
  let orgId: string;
  let amqp: ChannelModel;
  let channel: ConfirmChannel;
  let db: PgClient;

  const traced = () => {
    const traceId = randomBytes(16).toString('hex');
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  };

  /** An event published as its producer's relay would, continuing `traceparent`. */
  const publish = async (type: string, data: unknown, traceparent: string) => {
    const id = randomUUID();
    const envelope = { id, type, orgId, occurredAt: new Date().toISOString(), data };
    channel.publish(exchange, type, Buffer.from(JSON.stringify(envelope)), {
      persistent: true,
      userId: amqpUser(infra.amqpUrl),
      contentType: 'application/json',
      messageId: id,
      headers: { ...producerStampHeaders(type, orgId, id), traceparent },
    });
    await channel.waitForConfirms();
  };

  /** The traceparent of automation's outbox row of `type` whose data matches, once it is there. */
  const outboxTraceparent = (type: string, where: string, value: string) =>
    eventually(async () => {
      const { rows } = await db.query<{ traceparent: string | null }>(`SELECT traceparent FROM outbox WHERE type = $1 AND ${where} = $2`, [
        type,
        value,
      ]);
      return rows[0];
    }, 15_000);

  beforeAll(async () => {
    for (const s of ['identity', 'automation']) dbs[s] = await createTestDatabase(s);
    const ports = { identity: await freePort(), automation: await freePort(), gateway: await freePort() };
    const common = {
      JWT_SECRET: randomBytes(32).toString('hex'),
      INTERNAL_AUTH_SEED: internalAuthSeed,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      REDIS_PREFIX: `${uniqueName('t')}:`,
      REDIS_URL: infra.redisUrl,
      AMQP_URL: infra.amqpUrl,
      EVENTS_EXCHANGE: exchange,
      LOG_LEVEL: 'warn',
      SIGNUP_ENABLED: 'true',
      METRICS_PORT: '0',
      IDENTITY_ADDR: `127.0.0.1:${ports.identity}`,
      AUTOMATION_ADDR: `127.0.0.1:${ports.automation}`,
      // Services this test does not run: a port nothing listens on, never a developer's `npm start`.
      CRM_ADDR: '127.0.0.1:9',
      MESSAGING_ADDR: '127.0.0.1:9',
      CONNECTOR_ADDR: '127.0.0.1:9',
    };
    const service = (s: 'identity' | 'automation') =>
      procs.launch(s, { ...common, DATABASE_URL: dbs[s].url, GRPC_PORT: String(ports[s]), LOG_LEVEL: 'info' }, `${s} listening`);
    await Promise.all([service('identity'), service('automation')]);
    await procs.launch(
      'gateway',
      { ...common, PORT: String(ports.gateway), SERVICES: 'identity,automation', LOG_LEVEL: 'info' },
      'gateway listening',
    );

    const made = await newOrg(client(`http://127.0.0.1:${ports.gateway}`), 'Explicit Automation');
    owner = made.owner;
    orgId = made.user.orgId;
    amqp = await connect(infra.amqpUrl);
    channel = await amqp.createConfirmChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    db = new PgClient({ connectionString: dbs.automation.url });
    await db.connect();
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await amqp?.close().catch(() => undefined);
    await procs.stop();
    for (const d of Object.values(dbs)) await d.drop();
    await deleteRabbitPrefix(infra.amqpUrl, exchange);
  });

  it("an API call's audit entry carries the client's trace id (DELETE a rule → audit.recorded)", async () => {
    const created = await owner.post('/api/v1/automation/rules', {
      name: 'Traced rule',
      trigger: { type: 'contact_created', conditions: [] },
      actions: [{ type: 'add_tag', tag: 'traced' }],
    });
    expect(created.status).toBe(201);
    const { traceId, traceparent } = traced();
    expect((await owner.del(`/api/v1/automation/rules/${created.body.id}`, { traceparent })).status).toBeLessThan(300);
    const row = await outboxTraceparent('audit.recorded', `data->>'resourceId'`, created.body.id);
    const [, rowTrace, rowSpan] = TRACEPARENT.exec(row.traceparent ?? '') ?? [];
    expect(rowTrace).toBe(traceId);
    // automation's own server span, a child of the gateway's.
    expect(rowSpan).not.toBe(traceparent.split('-')[2]);
  });

  it('a consumed event carries its trace id into the notification it raises (webhook.disabled → notification.created)', async () => {
    const { traceId, traceparent } = traced();
    const webhookId = randomUUID();
    await publish('webhook.disabled', eventData('webhook.disabled', { webhookId }), traceparent);
    const row = await outboxTraceparent('notification.created', `data->>'resourceId'`, webhookId);
    const [, rowTrace, rowSpan] = TRACEPARENT.exec(row.traceparent ?? '') ?? [];
    expect(rowTrace).toBe(traceId);
    // The consumer's span, a child of the producer's.
    expect(rowSpan).not.toBe(traceparent.split('-')[2]);
  });

  it('each inbound alert keeps the trace of its own message, however the consumer batches them', async () => {
    const assigneeId = randomUUID();
    const sent = await Promise.all(
      [0, 1, 2].map(async () => {
        const t = traced();
        const data = messageData('message.received', { assigneeId });
        await publish('message.received', data, t.traceparent);
        return { ...t, conversationId: data.conversationId as string };
      }),
    );
    for (const s of sent) {
      const row = await outboxTraceparent('notification.created', `data->>'resourceId'`, s.conversationId);
      expect(TRACEPARENT.exec(row.traceparent ?? '')?.[1]).toBe(s.traceId);
    }
  });
});
