import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { BROKER_SERVICES, dlqName, EVENT_EXAMPLES, type BrokerService } from '@crm/events';
import { eventually, infra, uniqueName } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type ServiceName, type Stack } from '../support/stack';
import { startReceiver, type Receiver } from '../webhooks/support';
import { connectPatiently } from '../support/patient-client';

// RabbitMQ under the deployment's users (deploy/rabbitmq/definitions.sh, issue #27 item 2): every publish carries its
// connection's user as user_id (the broker refuses another), the catalogue names each type's producers, and consumers
// refuse an event from anyone else. A compromised ai service (it may publish to the exchange, for its audit entries)
// forges message.received for an org whose webhook subscribes to it, and an audit entry without a user_id: nothing
// happens, and the refused copies wait in the consumers' dead-letter queues with the reason. (ai writing audit.recorded
// as itself is accepted: it is one of that type's producers.) The users are made on the local broker under this run's
// prefix and exchange, and a whole stack runs with each service signed in as its own user.
describe('RabbitMQ producer checks', () => {
  const exchange = uniqueName('t_events');
  const prefix = `${uniqueName('bp')}_`;
  const passwords = Object.fromEntries(BROKER_SERVICES.map((s) => [s, randomBytes(16).toString('hex')])) as Record<BrokerService, string>;
  const user = (s: BrokerService) => `${prefix}${s}`;
  const urlFor = (s: BrokerService) => Object.assign(new URL(infra.amqpUrl), { username: user(s), password: passwords[s] }).toString();
  let stack: Stack;
  let owner: Client;
  let orgId: string;
  let rx: Receiver;
  let admin: ChannelModel;
  let forger: ChannelModel;

  beforeAll(async () => {
    const env = {
      PATH: process.env.PATH,
      EVENTS_EXCHANGE: exchange,
      AMQP_USER_PREFIX: prefix,
      ...Object.fromEntries(BROKER_SERVICES.map((s) => [`${s.replace(/-/g, '_').toUpperCase()}_AMQP_PASSWORD`, passwords[s]])),
    };
    const definitions = JSON.parse(execFileSync('sh', [path.resolve(__dirname, '../../deploy/rabbitmq/definitions.sh')], { env, encoding: 'utf8' }));
    // The script and the consumers agree on who is who.
    expect(definitions.users.map((u: { name: string }) => u.name)).toEqual(BROKER_SERVICES.map(user));
    // One rabbitmqctl call for all (each costs a second of CPU); the vhost is the local broker's own.
    const dir = mkdtempSync(path.join(tmpdir(), 'broker-producers-'));
    try {
      // rabbitmqctl reads the file as the rabbitmq user: it may pass the directory and read the file (its passwords are
      // this run's throwaway ones, and the file is gone once imported).
      chmodSync(dir, 0o711);
      writeFileSync(path.join(dir, 'definitions.json'), JSON.stringify({ users: definitions.users, permissions: definitions.permissions }), {
        mode: 0o644,
      });
      execFileSync('rabbitmqctl', ['-q', 'import_definitions', path.join(dir, 'definitions.json')], { stdio: 'pipe' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // RabbitMQ 3.x imports in the background: wait until the last user's permissions hold.
    await eventually(async () => {
      const c = await connect(urlFor('gateway')).catch(() => undefined);
      if (!c) return false;
      c.on('error', () => undefined);
      try {
        const ch = await c.createChannel();
        ch.on('error', () => undefined);
        return await ch.assertQueue(`${exchange}.gateway.probe`, { exclusive: true }).then(
          () => true,
          () => false,
        );
      } finally {
        await c.close().catch(() => undefined);
      }
    }, 30_000);

    const own = (s: BrokerService) => ({ AMQP_URL: urlFor(s), AMQP_USER_PREFIX: prefix });
    const services: ServiceName[] = ['messaging', 'chatnet-connector', 'webhooks', 'crm'];
    stack = await startStack({
      services,
      env: { EVENTS_EXCHANGE: exchange },
      serviceEnv: {
        identity: own('identity'),
        messaging: own('messaging'),
        'chatnet-connector': own('chatnet-connector'),
        crm: own('crm'),
        webhooks: { ...own('webhooks'), WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' },
      },
      gatewayEnv: own('gateway'),
    });
    const org = await newOrg(client(stack.url), 'Broker Org');
    owner = org.owner;
    orgId = org.user.orgId;
    rx = await startReceiver();
    admin = await connect(infra.amqpUrl);
    forger = await connect(urlFor('ai'));
    forger.on('error', () => undefined);
  }, 180_000);

  afterAll(async () => {
    await forger?.close().catch(() => undefined);
    await admin?.close().catch(() => undefined);
    await rx?.close();
    await stack?.stop();
    const names = BROKER_SERVICES.map((s) => `<<"${user(s)}">>`).join(', ');
    try {
      // One call for every user (delete_user is one call, a second of CPU, per user).
      execFileSync(
        'rabbitmqctl',
        ['-q', 'eval', `lists:foreach(fun(U) -> catch rabbit_auth_backend_internal:delete_user(U, <<"broker-producers test">>) end, [${names}]).`],
        { stdio: 'pipe' },
      );
    } catch {
      for (const s of BROKER_SERVICES) {
        try {
          execFileSync('rabbitmqctl', ['-q', 'delete_user', user(s)], { stdio: 'pipe' });
        } catch {
          /* already gone */
        }
      }
    }
  }, 60_000);

  /** Publish as the ai user; resolves once the broker took the message (it checks nothing but user_id and permissions). */
  async function forge(type: string, data: unknown, userId?: string): Promise<string> {
    const ch = await forger.createConfirmChannel();
    // The broker closing the channel says why here, before the confirms waited for are failed.
    let closedWith: Error | undefined;
    ch.on('error', (err: Error) => (closedWith = err));
    const id = randomUUID();
    const body = Buffer.from(JSON.stringify({ id, type, orgId, occurredAt: new Date().toISOString(), version: 1, data }));
    try {
      ch.publish(exchange, type, body, { persistent: true, contentType: 'application/json', messageId: id, type, ...(userId ? { userId } : {}) });
      await ch.waitForConfirms();
    } catch (err) {
      throw closedWith ?? err;
    } finally {
      await ch.close().catch(() => undefined);
    }
    return id;
  }

  /** The next `n` messages of a dead-letter queue, by event id. */
  async function parked(ch: Channel, queue: string, n: number): Promise<Map<string, GetMessage>> {
    const out = new Map<string, GetMessage>();
    while (out.size < n) {
      const msg = await eventually(() => ch.get(dlqName(queue), { noAck: true }), 20_000);
      out.set(JSON.parse(msg.content.toString()).id, msg);
    }
    return out;
  }

  it('a forged message.received and audit.recorded change nothing and reach no webhook; a real message does', async () => {
    // The org's line and a webhook on message.received; the webhook's creation is itself audited (webhooks' user).
    const accountId = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Broker line' })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    const hook = await owner.post('/api/v1/webhook-settings', { url: rx.url('/hook'), events: ['message.received'] });
    expect(hook.status).toBe(201);
    await eventually(async () => (await owner.get('/api/v1/audit-log?action=webhook.created')).body.data.length === 1);

    const message = { ...(EVENT_EXAMPLES['message.received'] as object), chatnetAccountId: accountId, content: 'forged by ai' };
    const asItself = await forge('message.received', message, user('ai'));
    const anonymous = await forge('message.received', message);
    const audit = {
      actorId: null,
      actorType: 'system',
      action: 'user.role_changed',
      resourceType: 'user',
      resourceId: null,
      details: { forged: true },
      ip: null,
      requestId: null,
    };
    const anonymousAudit = await forge('audit.recorded', audit);
    // Claiming another service's user is refused by the broker itself: the forger's channel is closed.
    await expect(forge('audit.recorded', audit, user('crm'))).rejects.toThrow(/PRECONDITION_FAILED.*user_id/);

    const ch = await admin.createChannel();
    const notProducer = `publisher ${user('ai')} is not a producer of message.received (producers: ${user('messaging')})`;
    const noUser = (type: string) => `a message without user_id has no verified publisher; refused as ${type}`;
    for (const queue of [`${exchange}.webhooks.deliveries`, `${exchange}.crm.message-events`]) {
      const dead = await parked(ch, queue, 2);
      expect({ queue, reasons: [asItself, anonymous].map((id) => dead.get(id)?.properties.headers?.['x-refused-reason']) }).toEqual({
        queue,
        reasons: [notProducer, noUser('message.received')],
      });
    }
    const deadAudit = await parked(ch, `${exchange}.identity.audit`, 1);
    expect(deadAudit.get(anonymousAudit)?.properties.headers?.['x-refused-reason']).toBe(noUser('audit.recorded'));

    // Refused before any handler ran: no audit entry, no delivery planned.
    expect((await owner.get('/api/v1/audit-log?action=user.role_changed')).body.data).toEqual([]);
    expect((await owner.get(`/api/v1/webhook-settings/${hook.body.id}/deliveries`)).body.data).toEqual([]);

    // The positive control: a message that really arrives (connector → messaging → webhooks, each as its own user).
    expect(
      (await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'bp-1', fromName: 'Real Person', content: 'really me' })).status,
    ).toBe(200);
    const got = await eventually(async () => rx.at('/hook').length > 0 && rx.at('/hook'), 20_000);
    expect(got.map((r) => [r.json.type, r.json.data.content])).toEqual([['message.received', 'really me']]);
    expect(got.map((r) => r.id)).not.toContain(asItself);
    // The connector published it straight to the exchange (not through its outbox), under its own user as well.
    const connectorDb = await connectPatiently(stack.databaseUrl('chatnet-connector'));
    try {
      expect((await connectorDb.query(`SELECT id FROM outbox WHERE type = 'chatnet.inbound'`)).rows).toEqual([]);
    } finally {
      await connectorDb.end();
    }
    // Its attempt is recorded after the endpoint answered: listed once that is written.
    const listed = await eventually(async () => {
      const data = (await owner.get(`/api/v1/webhook-settings/${hook.body.id}/deliveries`)).body.data as unknown[];
      return data.length > 0 ? data : undefined;
    }, 10_000);
    expect(listed).toHaveLength(1);
    await ch.close();
  }, 120_000);

  it('identity publishes its outbox (user.deactivated) as its own user', async () => {
    const ch = await admin.createChannel();
    const q = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(q.queue, exchange, 'user.deactivated');
    const created = await owner.post('/api/v1/users', {
      email: `leaver.${Date.now()}@example.test`,
      fullName: 'Lee Leaver',
      role: 'agent',
      password: 'correct horse battery',
    });
    expect(created.status).toBe(201);
    expect((await owner.del(`/api/v1/users/${created.body.id}`)).status).toBe(204);
    const msg = await eventually(() => ch.get(q.queue, { noAck: true }), 20_000);
    expect([msg.properties.userId, JSON.parse(msg.content.toString()).data]).toEqual([user('identity'), { userId: created.body.id }]);
    await ch.close();
  }, 30_000);
});
