import { createClient } from '@redis/client';
import { createTestDatabase, eventually, freePort, infra, type TestDatabase } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { captureEvents, connectorClient, grpcCtx, type ConnectorProcess, leaseHolder, spawnConnector as startConnector } from './support';

const ACCOUNTS = 30;

// The session pool rebalances: when a connector instance joins, the others hand sessions over one at a
// time until each holds its fair share; when one stops, the rest take its sessions. Each moved account
// reconnects from its stored session data, and messages the network pushes meanwhile all arrive exactly
// once (the sandbox network keeps a message for an account between two connections, as a real one does).
describe('session rebalancing across three connector processes', () => {
  let stack: Stack;
  let db: TestDatabase;
  let owner: Client;
  let user: { id: string; orgId: string; role: string };
  let bus: Awaited<ReturnType<typeof captureEvents>>;
  let redis: ReturnType<typeof createClient>;
  let env: Record<string, string>;
  let a: ConnectorProcess;
  let b: ConnectorProcess;
  let c: ConnectorProcess;
  const ids: string[] = [];

  const spawnConnector = (port: number): Promise<ConnectorProcess> => startConnector(env, port);

  /** Which process holds an account's lease, by the address it registered. */
  const holderAddress = (id: string) => leaseHolder(redis, env.REDIS_PREFIX, id);

  /** How many of the accounts each process holds (by the address it registered); `unheld` counts the rest. */
  const distribution = async (): Promise<Record<string, number>> => {
    const holders = await redis.mGet(ids.map((id) => `${env.REDIS_PREFIX}chatnet:lease:${id}`));
    const counts: Record<string, number> = {};
    for (const h of holders) {
      const where = h ? ((await redis.get(`${env.REDIS_PREFIX}chatnet:instance:${h}`)) ?? 'gone') : 'unheld';
      counts[where] = (counts[where] ?? 0) + 1;
    }
    return counts;
  };

  /** Every account held, by exactly the given processes, each within ±2 of `each`. */
  const balanced = (d: Record<string, number>, on: ConnectorProcess[], each: number) =>
    Object.keys(d).length === on.length && on.every((i) => Math.abs((d[i.address] ?? 0) - each) <= 2);

  /** Every account connected and published live by its holder, as the API shows it. */
  const allLive = async () => {
    const list = (await owner.get('/api/v1/chatnet-accounts')).body as Array<{ id: string; status: string; liveStatus: { state: string } }>;
    const ours = list.filter((x) => ids.includes(x.id));
    return ours.length === ACCOUNTS && ours.every((x) => x.status === 'connected' && x.liveStatus.state === 'connected');
  };

  /** Push inbound messages round-robin over the accounts until stopped; each must be answered 200. */
  const startPushing = (label: string) => {
    const sent: string[] = [];
    const failures: string[] = [];
    let stopped = false;
    const done = (async () => {
      for (let i = 0; !stopped; i++) {
        const chatnetMessageId = `${label}-${i}`;
        const res = await owner.post(`/sandbox/accounts/${ids[i % ACCOUNTS]}/inbound`, {
          fromUid: '5500000000000000001',
          content: `hello ${i}`,
          chatnetMessageId,
        });
        if (res.status === 200) sent.push(chatnetMessageId);
        else failures.push(`${chatnetMessageId}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    })();
    return {
      sent,
      failures,
      async stop() {
        stopped = true;
        await done;
      },
    };
  };

  /** Every message pushed reached the exchange as exactly one chatnet.inbound. */
  const expectEachOnce = async (sent: string[]) => {
    // Enough pushed while sessions moved for the check to mean something (fewer on a busy machine).
    expect(sent.length).toBeGreaterThan(5);
    const want = new Set(sent);
    const seen = () => bus.of('chatnet.inbound').filter((e) => want.has(e.data.chatnetMessageId));
    await eventually(async () => new Set(seen().map((e) => e.data.chatnetMessageId)).size === want.size, 15_000, 100).catch(() => undefined);
    const counts = new Map<string, number>();
    for (const e of seen()) counts.set(e.data.chatnetMessageId, (counts.get(e.data.chatnetMessageId) ?? 0) + 1);
    expect(sent.filter((m) => counts.get(m) !== 1)).toEqual([]);
  };

  beforeAll(async () => {
    db = await createTestDatabase('chatnet_rebalance');
    const portA = await freePort();
    // The gateway talks to A, which stays up throughout; calls for sessions held elsewhere are forwarded.
    stack = await startStack({ env: { CONNECTOR_ADDR: `127.0.0.1:${portA}` } });
    // Short intervals so the whole move fits in seconds: a lease lapses after 3 s, scans every 0.5 s, one hand-over per 0.25 s.
    env = { ...stack.env, DATABASE_URL: db.url, LEASE_TTL_MS: '3000', HEARTBEAT_MS: '1000', SCAN_INTERVAL_MS: '500', REBALANCE_INTERVAL_MS: '250' };
    redis = createClient({ url: infra.redisUrl });
    redis.on('error', () => undefined);
    await redis.connect();
    bus = await captureEvents(env.EVENTS_EXCHANGE, 'chatnet.#');
    a = await spawnConnector(portA);
    b = await spawnConnector(await freePort());
    const org = await newOrg(client(stack.url), 'Rebalance Co');
    owner = org.owner;
    user = org.user;
  }, 90_000);

  afterAll(async () => {
    for (const i of [a, b, c]) if (i && i.proc.exitCode === null && i.proc.signalCode === null) i.proc.kill('SIGKILL');
    await stack?.stop();
    await bus?.stop(true);
    redis?.destroy();
    await db?.drop();
  });

  it(`${ACCOUNTS} accounts logged in on two processes end up 15±2 on each, all live`, async () => {
    const rpcB = connectorClient(b.address);
    try {
      for (let i = 0; i < ACCOUNTS; i += 2) {
        await Promise.all(
          [i, i + 1].map(async (n) => {
            const id = (await owner.post('/api/v1/chatnet-accounts', { displayName: `Line ${n}` })).body.id as string;
            // Even ones log in on A (through the gateway), odd ones on B directly, as a balancer would spread the calls.
            if (n % 2 === 0) expect((await owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
            else await rpcB.Login({ id }, grpcCtx(user));
            expect((await owner.post(`/sandbox/accounts/${id}/scan`, { chatnetUid: `9900000000000000${String(n).padStart(2, '0')}` })).status).toBe(
              200,
            );
            ids.push(id);
          }),
        );
      }
    } finally {
      rpcB.close();
    }
    const d = await eventually(
      async () => {
        const d = await distribution();
        return balanced(d, [a, b], 15) && (await allLive()) && d;
      },
      20_000,
      250,
    );
    expect(d[a.address] + d[b.address]).toBe(ACCOUNTS);
  }, 60_000);

  it('a third process joins: within 20 s each holds 10±2, every account live, every message pushed meanwhile arrives exactly once', async () => {
    const pusher = startPushing('join');
    c = await spawnConnector(await freePort());
    // Joined once it is up and answering: its start-up, which a loaded machine can make slow, is not the rebalance's.
    const joinedAt = Date.now();
    const spread = await eventually(
      async () => {
        const d = await distribution();
        return balanced(d, [a, b, c], 10) && (await allLive()) && d;
      },
      20_000,
      250,
    ).catch(async (err) => {
      throw new Error(`${err.message}; distribution ${JSON.stringify(await distribution())}`);
    });
    expect(Date.now() - joinedAt).toBeLessThan(20_000);
    expect(spread[c.address]).toBeGreaterThanOrEqual(8);
    // The moves go on to the exact split (30 over 3), and then it stays put: nothing moves back and forth.
    const exact = { [a.address]: 10, [b.address]: 10, [c.address]: 10 };
    const isExact = (d: Record<string, number>) => Object.keys(d).length === 3 && Object.entries(exact).every(([k, n]) => d[k] === n);
    await eventually(async () => isExact(await distribution()), 10_000, 250).catch(() => undefined);
    expect(await distribution()).toEqual(exact);
    await new Promise((r) => setTimeout(r, 1500));
    await pusher.stop();
    expect(pusher.failures).toEqual([]);
    expect(await distribution()).toEqual(exact);
    expect(await allLive()).toBe(true);
    await expectEachOnce(pusher.sent);

    // A send arriving at A for an account the new process took over is carried out there (the peer path).
    let onC: string | undefined;
    for (const id of ids) if ((await holderAddress(id)) === c.address) onC ??= id;
    const rpcA = connectorClient(a.address);
    try {
      const sent = await rpcA.SendChatMessage<{ chatnetMessageId: string }>(
        { accountId: onC!, threadId: '5500000000000000001', threadType: 'user', content: 'after the move', contentType: 'text', clientMessageId: '' },
        grpcCtx(user),
      );
      expect((await owner.get(`/sandbox/accounts/${onC}/sent`)).body.data[0]).toMatchObject({
        chatnetMessageId: sent.chatnetMessageId,
        content: 'after the move',
      });
    } finally {
      rpcA.close();
    }
  }, 60_000);

  it('a message for a connected account between two connections is kept by the network and delivered once when it reconnects', async () => {
    const id = ids[3];
    const holder = (await holderAddress(id))!;
    // Hold every scan off the account for 6 s (a reconnect back-off), then close its session on the holder without
    // changing its status. (6 s: the checks of the time between connections below are over before it ends, even on a
    // loaded machine.)
    await redis.set(`${env.REDIS_PREFIX}chatnet:backoff:${id}`, '1', { PX: 6000 });
    const peer = connectorClient(holder, 'ConnectorPeerService');
    try {
      expect((await peer.PeerRelease({ accountId: id, restart: false }, { orgId: user.orgId })).ok).toBe(true);
    } finally {
      peer.close();
    }
    expect(await redis.get(`${env.REDIS_PREFIX}chatnet:lease:${id}`)).toBeNull();
    const res = await owner.post(`/sandbox/accounts/${id}/inbound`, {
      fromUid: '5500000000000000002',
      content: 'while away',
      chatnetMessageId: 'kept-1',
    });
    expect(res.status).toBe(200);
    expect(await redis.lLen(`${env.REDIS_PREFIX}sandbox:held:${id}`)).toBe(1);
    expect(bus.of('chatnet.inbound', id).filter((e) => e.data.chatnetMessageId === 'kept-1')).toEqual([]);

    await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === 'kept-1', 20_000);
    expect(await redis.get(`${env.REDIS_PREFIX}chatnet:lease:${id}`)).not.toBeNull();
    // The network forgets the kept message once it has handed it over (after the connector took it: the event may be
    // seen first).
    await eventually(async () => (await redis.lLen(`${env.REDIS_PREFIX}sandbox:held:${id}`)) === 0, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(bus.of('chatnet.inbound', id).filter((e) => e.data.chatnetMessageId === 'kept-1')).toHaveLength(1);
    expect(bus.of('chatnet.inbound', id).find((e) => e.data.chatnetMessageId === 'kept-1')!.data.content).toBe('while away');
  }, 30_000);

  it('one process stops (SIGTERM): within 20 s the other two hold 15±2 each, all live, every message pushed meanwhile arrives exactly once', async () => {
    const pusher = startPushing('leave');
    await new Promise((r) => setTimeout(r, 300));
    const stoppedAt = Date.now();
    b.proc.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    await eventually(
      async () => {
        const d = await distribution();
        return balanced(d, [a, c], 15) && (await allLive()) && d;
      },
      20_000,
      250,
    ).catch(async (err) => {
      throw new Error(`${err.message}; distribution ${JSON.stringify(await distribution())}`);
    });
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
    await new Promise((r) => setTimeout(r, 500));
    await pusher.stop();
    expect(pusher.failures).toEqual([]);
    await expectEachOnce(pusher.sent);
  }, 60_000);
});
