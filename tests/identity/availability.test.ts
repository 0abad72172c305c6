import { connect as amqpConnect, type ChannelModel } from 'amqplib';
import { io as connect, type Socket } from 'socket.io-client';
import { eventually, infra } from '@crm/testing';
import { client, email, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Issue #29 item 4: a user's availability. They choose online, away or offline; others see that choice while a socket
// of theirs is connected to the gateway (or was, less than the offline window ago: AVAILABILITY_OFFLINE_AFTER_MS, 1 s
// here) and offline otherwise. Changes are published as user.availability_changed and reach the org's sockets as
// `user.availability`; deactivating a user publishes user.deactivated.
const OFFLINE_AFTER_MS = 1000;

interface BusEvent {
  id: string;
  type: string;
  orgId: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

describe('availability (PUT/GET /api/v1/profile/availability, ?availability=, user.* events)', () => {
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;
  let agent: { id: string; token: string; as: Client };
  let bus: ChannelModel;
  const seen: BusEvent[] = [];
  const sockets: Socket[] = [];
  const password = 'correct horse battery';

  beforeAll(async () => {
    stack = await startStack({ serviceEnv: { identity: { AVAILABILITY_OFFLINE_AFTER_MS: String(OFFLINE_AFTER_MS) } } });
    api = client(stack.url);
    // Everything identity publishes about users, as it reaches the exchange.
    bus = await amqpConnect(infra.amqpUrl);
    const ch = await bus.createChannel();
    await ch.assertExchange(stack.env.EVENTS_EXCHANGE, 'topic', { durable: true });
    const q = await ch.assertQueue('', { exclusive: true, autoDelete: true });
    await ch.bindQueue(q.queue, stack.env.EVENTS_EXCHANGE, 'user.*');
    await ch.consume(q.queue, (m) => m && seen.push(JSON.parse(m.content.toString())), { noAck: true });

    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
    const e = email('agent');
    const created = await acme.owner.post('/api/v1/users', { email: e, fullName: 'Avery Agent', role: 'agent', password });
    expect(created.status).toBe(201);
    const token = (await api.post('/api/v1/auth/login', { email: e, password })).body.token as string;
    agent = { id: created.body.id, token, as: api.as(token) };
  }, 60_000);

  afterAll(async () => {
    sockets.forEach((s) => s.disconnect());
    await bus?.close().catch(() => undefined);
    await stack?.stop();
  });

  function open(token: string): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = connect(stack.url, { auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true });
      sockets.push(s);
      s.once('connect', () => resolve(s));
      s.once('connect_error', reject);
    });
  }

  /** A socket's `user.availability` events, as they arrive. */
  function listen(s: Socket) {
    const got: Array<{ userId: string; status: string }> = [];
    s.on('user.availability', (e) => got.push(e));
    return got;
  }

  const availabilityOf = async (who: Client) => (await who.get('/api/v1/profile/availability')).body;
  const changesOf = (userId: string) => seen.filter((e) => e.type === 'user.availability_changed' && e.data.userId === userId);

  it('a user who never connected a socket is offline whatever they choose; a bad status is 400 naming status', async () => {
    const fresh = await availabilityOf(agent.as);
    expect(fresh).toEqual({ status: 'offline', chosenStatus: 'online', connected: false, updatedAt: expect.any(String) });

    for (const body of [{ status: 'busy' }, {}, { status: 1 }]) {
      const bad = await agent.as.put('/api/v1/profile/availability', body);
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['status']);
    }

    const set = await agent.as.put('/api/v1/profile/availability', { status: 'away' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ status: 'offline', chosenStatus: 'away', connected: false, updatedAt: expect.any(String) });
    expect(await availabilityOf(agent.as)).toEqual(set.body);
    // The user's shape shows the effective status.
    expect((await acme.owner.get(`/api/v1/users/${agent.id}`)).body.availability).toBe('offline');
  });

  it('a socket makes the choice effective: user.availability_changed, and `user.availability` to the org’s sockets only', async () => {
    // Globex's owner is connected throughout: their own change says their socket receives events; nothing of Acme's arrives.
    const globexSocket = await open(globex.token);
    const globexGot = listen(globexSocket);
    await eventually(async () => globexGot.some((e) => e.userId === globex.user.id && e.status === 'online'));
    const ownerSocket = await open(acme.token);
    const ownerGot = listen(ownerSocket);
    await eventually(async () => ownerGot.some((e) => e.userId === acme.user.id && e.status === 'online'));

    await open(agent.token);
    const now = await eventually(async () => {
      const a = await availabilityOf(agent.as);
      return a.connected && a;
    });
    expect(now).toEqual({ status: 'away', chosenStatus: 'away', connected: true, updatedAt: expect.any(String) });
    const published = await eventually(async () => changesOf(agent.id)[0]);
    expect(published).toEqual(
      expect.objectContaining({
        orgId: acme.user.orgId,
        data: { userId: agent.id, status: 'away', previousStatus: 'offline', chosenStatus: 'away' },
      }),
    );
    await eventually(async () => ownerGot.some((e) => e.userId === agent.id && e.status === 'away'));
    expect(ownerGot.find((e) => e.userId === agent.id)).toEqual({ userId: agent.id, status: 'away' });

    // While connected, a choice is effective at once.
    const online = await agent.as.put('/api/v1/profile/availability', { status: 'online' });
    expect(online.body).toEqual(expect.objectContaining({ status: 'online', chosenStatus: 'online', connected: true }));
    await eventually(async () => ownerGot.some((e) => e.userId === agent.id && e.status === 'online'));

    // Globex's later change arrives at its socket after Acme's (one queue, in order): none of Acme's reached it.
    await globex.owner.put('/api/v1/profile/availability', { status: 'away' });
    await eventually(async () => globexGot.some((e) => e.status === 'away'));
    expect(globexGot.map((e) => e.userId)).toEqual([globex.user.id, globex.user.id]);
  }, 30_000);

  it('GET /api/v1/users?availability= filters within the org; a bad value is 400 naming availability', async () => {
    const online = await acme.owner.get('/api/v1/users?availability=online');
    expect(online.status).toBe(200);
    expect(online.body.data.map((u: { id: string }) => u.id).sort()).toEqual([acme.user.id, agent.id].sort());
    expect(online.body.data.every((u: { availability: string }) => u.availability === 'online')).toBe(true);
    expect((await acme.owner.get('/api/v1/users?availability=offline')).body.data).toEqual([]);
    // Globex's away owner is theirs alone; Acme's online users are not visible to Globex.
    expect((await globex.owner.get('/api/v1/users?availability=away')).body.data.map((u: { id: string }) => u.id)).toEqual([globex.user.id]);
    expect((await globex.owner.get('/api/v1/users?availability=online')).body.data).toEqual([]);
    const bad = await acme.owner.get('/api/v1/users?availability=busy');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['availability']);
  });

  it('offline once no socket was connected for the window (within 2 s of it), online again on reconnect', async () => {
    const ownerSocket = await open(acme.token);
    const ownerGot = listen(ownerSocket);
    // A second socket of the agent's: closing one of two leaves them connected.
    const first = sockets.find((s) => s.connected && (s.auth as { token: string }).token === agent.token)!;
    const second = await open(agent.token);
    first.disconnect();
    // The marker: another user's last socket closes after it. The gateways' reports of a user's first and last
    // socket reach identity in the order Redis numbered them, so once identity has that user disconnected it has
    // every report made before, a (wrong) one that the agent left included; the agent is still connected, so no
    // offline window is running for them.
    const e = email('agent');
    const markerUser = await acme.owner.post('/api/v1/users', { email: e, fullName: 'Mark Er', role: 'agent', password });
    expect(markerUser.status).toBe(201);
    const otherToken = (await api.post('/api/v1/auth/login', { email: e, password })).body.token as string;
    const other = api.as(otherToken);
    const otherSocket = await open(otherToken);
    await eventually(async () => (await availabilityOf(other)).connected === true || undefined);
    otherSocket.disconnect();
    await eventually(async () => (await availabilityOf(other)).connected === false || undefined);
    expect(await availabilityOf(agent.as)).toEqual(expect.objectContaining({ status: 'online', connected: true }));

    second.disconnect();
    const gone = await eventually(async () => {
      const a = await availabilityOf(agent.as);
      return !a.connected && a;
    });
    // Still what they chose during the window.
    expect(gone.status).toBe('online');
    const offline = await eventually(async () => {
      const a = await availabilityOf(agent.as);
      return a.status === 'offline' && a;
    }, 10_000);
    expect(offline).toEqual({ status: 'offline', chosenStatus: 'online', connected: false, updatedAt: expect.any(String) });
    // Identity's own clock: the disconnect's record, then the timer's, one window later (and not 2 s past it).
    const late = Date.parse(offline.updatedAt) - Date.parse(gone.updatedAt) - OFFLINE_AFTER_MS;
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(2000);
    const change = await eventually(async () => changesOf(agent.id).find((e) => e.data.status === 'offline'));
    expect(change.data).toEqual({ userId: agent.id, status: 'offline', previousStatus: 'online', chosenStatus: 'online' });
    await eventually(async () => ownerGot.some((e) => e.userId === agent.id && e.status === 'offline'));
    // The agent, and the marker's user, offline too since their socket closed.
    expect((await acme.owner.get('/api/v1/users?availability=offline')).body.data.map((u: { id: string }) => u.id).sort()).toEqual(
      [agent.id, markerUser.body.id].sort(),
    );

    await open(agent.token);
    await eventually(async () => (await availabilityOf(agent.as)).status === 'online');
    await eventually(async () => changesOf(agent.id).some((e) => e.data.status === 'online' && e.data.previousStatus === 'offline'));
    await eventually(async () => ownerGot.some((e) => e.userId === agent.id && e.status === 'online'));
  }, 30_000);

  it('deactivating a user publishes user.deactivated (DELETE and PUT status inactive alike), once', async () => {
    const make = async () =>
      (await acme.owner.post('/api/v1/users', { email: email('leaver'), fullName: 'Lee Leaver', role: 'agent', password })).body.id as string;
    const [byDelete, byUpdate] = [await make(), await make()];
    expect((await acme.owner.del(`/api/v1/users/${byDelete}`)).status).toBe(204);
    expect((await acme.owner.put(`/api/v1/users/${byUpdate}`, { status: 'inactive' })).status).toBe(200);
    // Deactivating again changes nothing and publishes nothing more.
    expect((await acme.owner.del(`/api/v1/users/${byDelete}`)).status).toBe(204);
    // Another org's user is not found, and nothing is published for it.
    expect((await globex.owner.del(`/api/v1/users/${agent.id}`)).status).toBe(404);
    const deactivated = await eventually(async () => {
      const got = seen.filter((e) => e.type === 'user.deactivated');
      return got.length >= 2 && got;
    });
    // A marker published after all of the above: once it is seen, nothing else is on its way.
    await agent.as.put('/api/v1/profile/availability', { status: 'away' });
    await eventually(async () => changesOf(agent.id).some((e) => e.data.status === 'away'));
    expect(seen.filter((e) => e.type === 'user.deactivated').map((e) => [e.orgId, e.data])).toEqual([
      [acme.user.orgId, { userId: byDelete }],
      [acme.user.orgId, { userId: byUpdate }],
    ]);
    expect(deactivated).toHaveLength(2);
  }, 20_000);
});
