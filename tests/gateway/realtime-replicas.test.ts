import net from 'node:net';
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { createClient } from '@redis/client';
import { io as connect, Socket } from 'socket.io-client';
import { amqpUser } from '@crm/events';
import * as gateway from '@crm/gateway';
import { createLogger } from '@crm/logger';
import { parseSamples } from '@crm/metrics';
import { eventually, infra } from '@crm/testing';
import { eventData } from '../support/event-data';
import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

/**
 * socket.io through several gateway instances behind a balancer that is not sticky (what Kubernetes' Service and most
 * ingress controllers do by default; deploy/k8s runs two gateways at least). A client's first transport is HTTP
 * long-polling: its session lives in the instance that answered the handshake, and every later request of that session
 * must reach it. The balancer here hands each TCP connection to the next instance in turn and the client opens a new
 * connection per request, so consecutive requests of one session land on different instances.
 */
describe('realtime through several gateway instances', () => {
  let stack: Stack;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  const sockets: Socket[] = [];
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    stack = await startStack();
    acme = await newOrg(client(stack.url), 'Acme');
  });
  afterEach(async () => {
    sockets.splice(0).forEach((s) => s.disconnect());
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(() => stack.stop());

  /** Gateway instances on the stack's services; `peers`: each registers the address its peers reach it at. */
  async function instances(n: number, peers: boolean, extra: Record<string, string> = {}) {
    const started = [];
    for (let i = 0; i < n; i++) {
      const env = { ...stack.env, HOST: '127.0.0.1', PORT: '0', ...(peers ? { GATEWAY_PEER_HOST: '127.0.0.1' } : {}), ...extra };
      const g = await gateway.startGateway(gateway.loadConfig(env), createLogger('test', 'silent'));
      let stopped: Promise<void> | undefined;
      const once = { ...g, stop: () => (stopped ??= g.stop()) };
      closers.push(() => once.stop());
      started.push(once);
    }
    return started;
  }

  /** A TCP balancer: each new connection goes to the next of `ports`, round robin, or to the port `pick` names for it. */
  async function balancer(ports: number[], pick = (n: number) => ports[n % ports.length]): Promise<string> {
    let next = 0;
    const piped = new Set<net.Socket>();
    const server = net.createServer((downstream) => {
      const upstream = net.connect(pick(next++), '127.0.0.1');
      for (const s of [downstream, upstream]) {
        piped.add(s);
        s.on('close', () => piped.delete(s));
        s.on('error', () => undefined);
      }
      downstream.pipe(upstream).pipe(downstream);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      piped.forEach((s) => s.destroy());
      await new Promise((resolve) => server.close(resolve));
    });
    return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  }

  /** socket.io-client's defaults (long-polling first, then the upgrade), one connection per request (`agent: false`). */
  function open(url: string, transports?: string[]): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = connect(url, {
        auth: { token: acme.token },
        reconnection: false,
        agent: false,
        forceNew: true,
        ...(transports ? { transports } : {}),
      });
      sockets.push(s);
      s.once('connect', () => resolve(s));
      s.once('connect_error', (err) => reject(err));
    });
  }

  async function publishNotification(title: string) {
    const conn = await amqp.connect(infra.amqpUrl);
    const ch = await conn.createConfirmChannel();
    const { userId: _oneUser, ...orgWide } = eventData('notification.created', { id: randomUUID() });
    const event = {
      id: randomUUID(),
      type: 'notification.created',
      orgId: acme.user.orgId,
      occurredAt: new Date().toISOString(),
      data: { ...orgWide, title },
    };
    ch.publish(stack.env.EVENTS_EXCHANGE, event.type, Buffer.from(JSON.stringify(event)), {
      persistent: true,
      userId: amqpUser(infra.amqpUrl),
      contentType: 'application/json',
    });
    await ch.waitForConfirms();
    await conn.close();
  }

  /** How many socket.io requests the instances passed on to a peer, by outcome (their /metrics). */
  async function forwards(...gateways: Array<{ metricsPort: number }>): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const g of gateways) {
      const text = await (await fetch(`http://127.0.0.1:${g.metricsPort}/metrics`)).text();
      for (const m of parseSamples(text).filter((m) => m.name === 'socketio_peer_forwards_total'))
        out[m.labels.outcome] = (out[m.labels.outcome] ?? 0) + m.value;
    }
    return out;
  }

  const engineGet = (url: string, sid: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/socket.io/?EIO=4&transport=polling&sid=${encodeURIComponent(sid)}`, { headers });

  it('without GATEWAY_PEER_HOST a session whose requests reach another instance is refused (the failure this guards)', async () => {
    const [a, b] = await instances(2, false);
    const url = await balancer([a.port, b.port]);
    await expect(open(url, ['polling'])).rejects.toThrow();
  });

  it('with GATEWAY_PEER_HOST a long-polling session works through every instance: connects, acks, receives', async () => {
    const [a, b] = await instances(2, true);
    const url = await balancer([a.port, b.port]);
    const s = await open(url, ['polling']);
    for (let i = 0; i < 4; i++) expect(await s.emitWithAck('join', `account:${randomUUID()}`)).toEqual(expect.objectContaining({ ok: false }));
    const got = new Promise((resolve) => s.on('notification', (n) => n.title === 'Through peers' && resolve(n)));
    await publishNotification('Through peers');
    await got;
    expect(s.io.engine.transport.name).toBe('polling');
    // Half the session's requests reached the instance that does not hold it, and were passed on.
    expect((await forwards(a, b)).forwarded).toBeGreaterThanOrEqual(4);
  });

  it('upgrades to WebSocket when the upgrade reaches another instance than the handshake', async () => {
    const [a, b] = await instances(2, true);
    // The handshake reaches `a`, everything after it `b`: the upgrade too.
    const url = await balancer([a.port, b.port], (n) => (n === 0 ? a.port : b.port));
    const s = await open(url);
    await eventually(async () => s.io.engine.transport.name === 'websocket');
    // Every request after the handshake, the upgrade included, was passed on by `b`.
    expect((await forwards(b)).forwarded).toBeGreaterThanOrEqual(2);
    expect(await s.emitWithAck('join', `account:${randomUUID()}`)).toEqual(expect.objectContaining({ ok: false }));
    const got = new Promise((resolve) => s.on('notification', (n) => n.title === 'Upgraded' && resolve(n)));
    await publishNotification('Upgraded');
    await got;
  });

  it('a session of an instance that is gone, or that nobody registered, is answered as unknown (400), never 5xx', async () => {
    const [a, b] = await instances(2, true);
    const redis = createClient({ url: infra.redisUrl });
    await redis.connect();
    closers.push(() => redis.quit());
    // An instance that crashed leaves its address behind: nothing listens there any more.
    const dead = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    await redis.hSet(`${stack.env.REDIS_PREFIX}gateway:peers`, 'deadpeer', `http://127.0.0.1:${dead}`);
    for (const sid of ['deadpeer.AAAAAAAAAAAAAAAAAAAA', 'nobody00.AAAAAAAAAAAAAAAAAAAA', 'not-a-session-id']) {
      const res = await engineGet(b.url, sid);
      expect([sid, res.status, await res.json()]).toEqual([sid, 400, { code: 1, message: 'Session ID unknown' }]);
    }
    // The first was tried at its address, the second looked up and not found; the third is no session this code made.
    expect(await forwards(b)).toEqual({ unreachable: 1, unknown_instance: 1 });
    // A WebSocket upgrade for the dead instance's session is refused as engine.io refuses one it does not know.
    const upgrade = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(Number(new URL(b.url).port), '127.0.0.1', () =>
        sock.write(
          'GET /socket.io/?EIO=4&transport=websocket&sid=deadpeer.AAAAAAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
            'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
        ),
      );
      let got = '';
      sock.on('data', (d) => (got += d.toString()));
      sock.on('close', () => resolve(got));
      sock.on('error', reject);
    });
    expect(upgrade.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(await forwards(b)).toEqual({ unreachable: 2, unknown_instance: 1 });
    // An instance that stopped took its address out: its sessions are unknown everywhere at once.
    const s = await open(a.url, ['polling']);
    const sid = s.io.engine.id as string;
    await a.stop();
    const res = await engineGet(b.url, sid);
    expect(res.status).toBe(400);
    expect((await forwards(b)).unknown_instance).toBe(2);
    expect(await redis.hGet(`${stack.env.REDIS_PREFIX}gateway:peers`, sid.split('.')[0])).toBeNull();
  });

  it('passes a request on once only: one that arrives already passed on is answered where it lands', async () => {
    const [a, b] = await instances(2, true);
    // A session opened at `a` by hand (engine.io's handshake), and a noop packet posted for it at `b`.
    const handshake = await (await fetch(`${a.url}/socket.io/?EIO=4&transport=polling`)).text();
    const sid = (JSON.parse(handshake.slice(1)) as { sid: string }).sid;
    // Named after the instance that made it.
    expect(sid).toMatch(/^[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{20}$/);
    const noop = (headers: Record<string, string> = {}) =>
      fetch(`${b.url}/socket.io/?EIO=4&transport=polling&sid=${encodeURIComponent(sid)}`, { method: 'POST', body: '6', headers });
    const refused = await noop({ 'x-crm-peer-forwarded': '1' });
    expect([refused.status, await refused.json()]).toEqual([400, { code: 1, message: 'Session ID unknown' }]);
    expect(await forwards(a, b)).toEqual({});
    // The same request without the header is passed on, and answered by the session's instance.
    const passed = await noop();
    expect([passed.status, await passed.text()]).toEqual([200, 'ok']);
    expect(await forwards(b)).toEqual({ forwarded: 1 });
  });

  it('answers a request for another instance’s session as unknown while Redis cannot be asked where it is', async () => {
    const [a] = await instances(1, true);
    // `b` reaches Redis through a relay that the test cuts: its client is then offline and fails commands at once.
    const relayed = new Set<net.Socket>();
    const relay = net.createServer((down) => {
      const up = net.connect(Number(new URL(infra.redisUrl).port || 6379), new URL(infra.redisUrl).hostname);
      for (const s of [down, up]) relayed.add(s).add(s.on('error', () => undefined));
      down.pipe(up).pipe(down);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const redisUrl = Object.assign(new URL(infra.redisUrl), { hostname: '127.0.0.1', port: String((relay.address() as net.AddressInfo).port) });
    const [b] = await instances(1, true, { REDIS_URL: redisUrl.toString() });
    const handshake = await (await fetch(`${a.url}/socket.io/?EIO=4&transport=polling`)).text();
    const sid = (JSON.parse(handshake.slice(1)) as { sid: string }).sid;
    // No new connections, and the open ones cut (close() answers once they are gone).
    const closed = new Promise((resolve) => relay.close(resolve));
    relayed.forEach((s) => s.destroy());
    await closed;
    const res = await fetch(`${b.url}/socket.io/?EIO=4&transport=polling&sid=${encodeURIComponent(sid)}`, { method: 'POST', body: '6' });
    expect([res.status, await res.json()]).toEqual([400, { code: 1, message: 'Session ID unknown' }]);
    expect(await forwards(b)).toEqual({ lookup_failed: 1 });
  });
});
