import { randomBytes, randomUUID } from 'node:crypto';
import { connect, type ChannelModel } from 'amqplib';
import type { CallContext, ClientFor } from '@crm/grpc-kit';
import {
  clearRedisPrefix,
  createTestDatabase,
  deleteRabbitPrefix,
  eventually,
  freePort,
  infra,
  internalAuthSeed,
  type TestDatabase,
  uniqueName,
} from '@crm/testing';
import { newTrace, traceIdOf } from '../support/service-processes';
import { connectorClient, type ConnectorProcess, spawnConnector, spawnSandboxNetwork } from './support';

interface Published {
  type: string;
  data: Record<string, any>;
  traceId?: string;
}

/**
 * The connector runs without AsyncLocalStorage unless spans are exported (its main.ts) and passes its trace context
 * explicitly. Started from its build (its own process, nothing exported), what a call causes keeps the call's trace id,
 * also when the network's callbacks record it later: a login's QR code and connected event (the flow keeps the Login
 * call's trace), the news a sandbox push makes the session announce (it names the push's call), a drop's disconnected
 * event, a deletion's events. With the in-process sandbox network and with the standalone one (over its wire).
 */
describe.each([
  ['the in-process sandbox network', false],
  ['the standalone sandbox network', true],
])('trace context in the connector without an active context, with %s', (_name, standalone) => {
  const prefix = `${uniqueName('t')}:`;
  const exchange = uniqueName('t_events');
  const orgId = randomUUID();
  const user = { orgId, userId: randomUUID(), role: 'owner', requestId: 'trace-test' };
  let db: TestDatabase;
  let network: (ConnectorProcess & { url: string }) | undefined;
  let connector: ConnectorProcess;
  let rpc: ClientFor<'connector.v1.ConnectorService'>;
  let amqp: ChannelModel;
  const published: Published[] = [];
  let accountId: string;

  const traced = () => {
    const { traceId, traceparent } = newTrace();
    return { traceId, ctx: { ...user, traceparent } as Partial<CallContext> };
  };

  /** The first event of `type` about the account (and matching `pred`) the connector published, once it is there. */
  const event = (type: string, pred: (e: Published) => boolean = () => true) =>
    eventually(async () => published.find((e) => e.type === type && e.data.accountId === accountId && pred(e)), 15_000);

  beforeAll(async () => {
    db = await createTestDatabase('chatnet_trace');
    if (standalone) network = await spawnSandboxNetwork({ REDIS_URL: infra.redisUrl, REDIS_PREFIX: prefix }, await freePort());
    amqp = await connect(infra.amqpUrl);
    const channel = await amqp.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, exchange, '#');
    await channel.consume(
      queue,
      (msg) => {
        if (!msg) return;
        const e = JSON.parse(msg.content.toString()) as { type: string; data: Record<string, any> };
        const header = msg.properties.headers?.traceparent;
        published.push({ type: e.type, data: e.data, traceId: traceIdOf(typeof header === 'string' ? header : undefined) });
      },
      { noAck: true },
    );
    connector = await spawnConnector(
      {
        NODE_ENV: 'test',
        DATABASE_URL: db.url,
        REDIS_URL: infra.redisUrl,
        REDIS_PREFIX: prefix,
        AMQP_URL: infra.amqpUrl,
        EVENTS_EXCHANGE: exchange,
        ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        INTERNAL_AUTH_SEED: internalAuthSeed,
        METRICS_PORT: '0',
        GRPC_HOST: '127.0.0.1',
        // Services this test does not run: a port nothing listens on.
        IDENTITY_ADDR: '127.0.0.1:9',
        MESSAGING_HTTP_URL: 'http://127.0.0.1:9',
        REBALANCE_INTERVAL_MS: '0',
        ...(network ? { CHATNET_SANDBOX_URL: network.url } : {}),
      },
      await freePort(),
    );
    rpc = connectorClient(connector.address);
    accountId = (await rpc.CreateAccount<{ id: string }>({ displayName: 'Traced line' }, user)).id;
  }, 60_000);

  afterAll(async () => {
    rpc?.close();
    await amqp?.close().catch(() => undefined);
    for (const p of [connector, network]) {
      if (!p || p.proc.exitCode !== null || p.proc.signalCode !== null) continue;
      p.proc.kill('SIGTERM');
      await p.exited;
    }
    await db?.drop();
    await clearRedisPrefix(prefix).catch(() => undefined);
    await deleteRabbitPrefix(infra.amqpUrl, exchange).catch(() => undefined);
  });

  it("a login's QR code and, once scanned, its connected event keep the Login call's trace id", async () => {
    const login = traced();
    await rpc.Login({ id: accountId }, login.ctx);
    expect((await event('chatnet_account.qr')).traceId).toBe(login.traceId);
    // The scan is another call: the session that comes up is still the login's doing, recorded from the network's answer.
    await rpc.SandboxScan({ id: accountId, chatnetUid: '7100000000000000001' }, traced().ctx);
    expect((await event('chatnet_account.connected')).traceId).toBe(login.traceId);
    expect((await event('chatnet_account.friends')).traceId).toBe(login.traceId);
  });

  it("what a sandbox push makes the session announce keeps the push's trace id (an inbound message, a read receipt)", async () => {
    const push = traced();
    const sent = await rpc.SandboxInbound<{ chatnetMessageId: string }>(
      { id: accountId, fromUid: '7200000000000000001', content: 'traced hello' },
      push.ctx,
    );
    expect((await event('chatnet.inbound', (e) => e.data.chatnetMessageId === sent.chatnetMessageId)).traceId).toBe(push.traceId);
    const read = traced();
    await rpc.SandboxSeen({ id: accountId, threadId: '7200000000000000001', threadType: 'user', chatnetMessageIds: ['traced-read'] }, read.ctx);
    expect((await event('chatnet.seen', (e) => e.data.chatnetMessageIds.includes('traced-read'))).traceId).toBe(read.traceId);
  });

  it("a dropped connection's disconnected event keeps the drop's trace id; a deletion's events keep the deletion's", async () => {
    const drop = traced();
    await rpc.SandboxDrop({ id: accountId, reason: 'traced_drop', expireSession: true }, drop.ctx);
    expect((await event('chatnet_account.disconnected', (e) => e.data.reason === 'traced_drop')).traceId).toBe(drop.traceId);
    const removal = traced();
    await rpc.DeleteAccount({ id: accountId, purge: false }, removal.ctx);
    const audit = await eventually(async () => published.find((e) => e.type === 'audit.recorded' && e.data.resourceId === accountId), 15_000);
    expect(audit.traceId).toBe(removal.traceId);
  });
});
