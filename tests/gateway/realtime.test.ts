import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { io as connect, Socket } from 'socket.io-client';
import { amqpUser, EventConsumer } from '@crm/events';
import * as gateway from '@crm/gateway';
import { createLogger } from '@crm/logger';
import { parseSamples } from '@crm/metrics';
import { eventually, infra } from '@crm/testing';
import { eventData } from '../support/event-data';
import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

// socket.io at the gateway: JWT in the handshake, org/user rooms, events from RabbitMQ pushed to rooms.
describe('realtime (socket.io)', () => {
  let stack: Stack;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    stack = await startStack();
    const api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
  });
  afterAll(async () => {
    sockets.forEach((s) => s.disconnect());
    await stack.stop();
  });

  function open(token: string | undefined, url = stack.url): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = connect(url, { auth: token ? { token } : {}, transports: ['websocket'], reconnection: false });
      sockets.push(s);
      s.once('connect', () => resolve(s));
      s.once('connect_error', (err) => reject(err));
    });
  }

  async function publish(type: string, orgId: string, data: unknown, id: string = randomUUID()) {
    const conn = await amqp.connect(infra.amqpUrl);
    const ch = await conn.createConfirmChannel();
    await ch.assertExchange(stack.env.EVENTS_EXCHANGE, 'topic', { durable: true });
    ch.publish(stack.env.EVENTS_EXCHANGE, type, Buffer.from(JSON.stringify({ id, type, orgId, occurredAt: new Date().toISOString(), data })), {
      persistent: true,
      userId: amqpUser(infra.amqpUrl),
      contentType: 'application/json',
    });
    await ch.waitForConfirms();
    await conn.close();
  }

  /** notification.created as automation publishes it, for the whole org unless `patch` names a user or role. */
  function notification(patch: Record<string, unknown>) {
    const { userId: _oneUser, ...orgWide } = eventData('notification.created', { id: randomUUID() });
    return { ...orgWide, ...patch };
  }

  it('refuses a handshake without a valid token', async () => {
    await expect(open(undefined)).rejects.toThrow('unauthorized');
    await expect(open('not-a-token')).rejects.toThrow('unauthorized');
  });

  it('pushes an org’s events to that org’s sockets only', async () => {
    const mine = await open(acme.token);
    const theirs = await open(globex.token);
    const seenByOther: Array<{ title: string }> = [];
    const marker = new Promise((resolve) => theirs.on('notification', (n) => (seenByOther.push(n), n.title === 'Marker' && resolve(n))));
    const got = new Promise((resolve) => mine.once('notification', resolve));
    await publish(
      'notification.created',
      acme.user.orgId,
      notification({ type: 'high_value_lead', title: 'Hot lead', message: 'Score 90', resourceId: 'c1' }),
    );
    expect(await got).toEqual(expect.objectContaining({ type: 'high_value_lead', title: 'Hot lead' }));
    // The gateway's realtime consumer handles its queue in order (one handler at a time) and a socket receives in
    // emit order: once Globex's own later notification arrives, Acme's was routed and did not reach Globex.
    await publish('notification.created', globex.user.orgId, notification({ type: 'high_value_lead', title: 'Marker', message: 'x' }));
    await marker;
    expect(seenByOther.map((n) => n.title)).toEqual(['Marker']);
  });

  it('sends a notification meant for admins to admins and owners only', async () => {
    const api = client(stack.url);
    const agentEmail = `agent.${Date.now()}@example.test`;
    await acme.owner.post('/api/v1/users', { email: agentEmail, fullName: 'Agent', role: 'agent', password: 'correct horse battery' });
    const agentToken = (await api.post('/api/v1/auth/login', { email: agentEmail, password: 'correct horse battery' })).body.token;
    const owner = await open(acme.token);
    const agent = await open(agentToken);
    const seenByAgent: Array<{ title: string }> = [];
    const marker = new Promise((resolve) => agent.on('notification', (n) => (seenByAgent.push(n), n.title === 'Marker' && resolve(n))));
    const got = new Promise((resolve) => owner.once('notification', resolve));
    await publish(
      'notification.created',
      acme.user.orgId,
      notification({ type: 'webhook_disabled', title: 'Webhook disabled', message: 'x', audienceRole: 'admin' }),
    );
    expect(await got).toEqual(expect.objectContaining({ type: 'webhook_disabled' }));
    // A later org-wide notification is the marker (queue handled in order, socket receives in emit order): when
    // the agent has it, the admins-only one was routed before and passed the agent by.
    await publish('notification.created', acme.user.orgId, notification({ type: 'high_value_lead', title: 'Marker', message: 'x' }));
    await marker;
    expect(seenByAgent.map((n) => n.title)).toEqual(['Marker']);
  });

  /** A gateway's own count of the deliveries its consumer of `queue` settled with `outcome`. */
  async function settled(outcome: string, queue = 'sockets', metricsPort = stack.metricsPort('gateway')): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    return parseSamples(await res.text())
      .filter((m) => m.name === 'amqp_messages_consumed_total' && m.labels.queue === `${stack.env.EVENTS_EXCHANGE}.gateway.${queue}`)
      .filter((m) => m.labels.outcome === outcome)
      .reduce((sum, m) => sum + m.value, 0);
  }

  /** Another gateway instance on the same services, Redis and exchange. */
  function secondGateway() {
    return gateway.startGateway(gateway.loadConfig({ ...stack.env, HOST: '127.0.0.1', PORT: '0' }), createLogger('test', 'silent'));
  }

  it('an event whose data does not fit its schema reaches no socket and is dropped, counted', async () => {
    const owner = await open(acme.token);
    const seen: Array<{ title: string }> = [];
    const marker = new Promise((resolve) => owner.on('notification', (n) => (seen.push(n), n.title === 'Marker' && resolve(n))));
    const dropped = await settled('dropped');
    const { title: _none, ...untitled } = notification({ message: 'no title' });
    await publish('notification.created', acme.user.orgId, untitled);
    await publish('notification.created', acme.user.orgId, notification({ title: 'Marker', message: 'x' }));
    await marker;
    expect(seen.map((n) => n.title)).toEqual(['Marker']);
    // A push is worth nothing later: the instance's own queue has no dead-letter queue, and the event is counted.
    expect(await settled('dropped')).toBe(dropped + 1);
  });

  it('every gateway instance pushes each event to its own sockets, once', async () => {
    const second = await secondGateway();
    try {
      const here = await open(acme.token);
      const there = await open(acme.token, second.url);
      const seen = { here: [] as string[], there: [] as string[] };
      here.on('notification', (n) => seen.here.push(n.title));
      there.on('notification', (n) => seen.there.push(n.title));
      await publish('notification.created', acme.user.orgId, notification({ title: 'Once', message: 'x' }));
      // Each instance handles its queue in order: once both sockets have the marker, a second copy of the first would
      // have arrived before it.
      await publish('notification.created', acme.user.orgId, notification({ title: 'Marker', message: 'x' }));
      await eventually(async () => seen.here.includes('Marker') && seen.there.includes('Marker'));
      expect(seen).toEqual({ here: ['Once', 'Marker'], there: ['Once', 'Marker'] });
    } finally {
      await second.stop();
    }
  });

  it('an upgraded instance unbinds the queue instances shared before and pushes what was left in it', async () => {
    // The shared queue as the earlier version declared and bound it (durable, one retry level), with an event left in it.
    const shared = `${stack.env.EVENTS_EXCHANGE}.gateway.realtime`;
    const earlier = new EventConsumer({
      amqpUrl: infra.amqpUrl,
      exchange: stack.env.EVENTS_EXCHANGE,
      queue: shared,
      bindings: ['notification.created'],
      logger: createLogger('test', 'silent'),
      maxAttempts: 2,
      batchSize: 100,
      batchHandler: async () => undefined,
    });
    await earlier.start();
    await earlier.stop();
    const conn = await amqp.connect(infra.amqpUrl);
    const ch = await conn.createChannel();
    try {
      await publish('notification.created', acme.user.orgId, notification({ title: 'Left over', message: 'x' }));
      await eventually(async () => (await ch.checkQueue(shared)).messageCount === 1);

      const second = await secondGateway();
      // Drained: the event left over was taken and acked (pushed to the sockets of that instance, which had none yet).
      await eventually(async () => (await settled('ack', 'realtime', second.metricsPort)) === 1);
      await second.stop();
      expect((await ch.checkQueue(shared)).messageCount).toBe(0);
      // Unbound: with no instance of the earlier version left, nothing published reaches the old queue any more.
      const s = await open(acme.token);
      const got = new Promise((resolve) => s.on('notification', (n) => n.title === 'After' && resolve(n)));
      await publish('notification.created', acme.user.orgId, notification({ title: 'After', message: 'x' }));
      await got;
      expect((await ch.checkQueue(shared)).messageCount).toBe(0);
    } finally {
      await ch.deleteQueue(shared);
      await conn.close();
    }
  });

  it('refuses to join a room that is not an account of the caller’s organization', async () => {
    const s = await open(acme.token);
    const bad = await s.emitWithAck('join', 'org:someone-else');
    expect(bad.ok).toBe(false);
    const unknown = await s.emitWithAck('join', `account:${randomUUID()}`);
    expect(unknown.ok).toBe(false);
  });
});
