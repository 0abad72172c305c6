import { randomUUID } from 'node:crypto';
import { createLogger } from '@crm/logger';
import { closeRedis, createRedis, type Redis } from '../redis';
import { type PresenceChange, SocketsPerUser } from './socket-admission';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// Presence across gateways (issue #29 item 4): several SocketsPerUser on one Redis prefix play several gateway
// instances. Identity hears of a user's first socket and of their last, whichever gateway holds them, in Redis's order;
// a gateway that dies without disconnecting its sockets has its users reported gone by another once the entries run out.
describe('SocketsPerUser presence', () => {
  const log = createLogger('test', 'silent');
  const prefix = `t_presence_${randomUUID()}:`;
  const orgId = randomUUID();
  let redis: Redis;
  const gateways: SocketsPerUser[] = [];

  beforeAll(async () => {
    redis = createRedis(REDIS_URL, log);
    await redis.connect();
  });
  afterAll(async () => {
    for (const g of gateways) await g.stop();
    for await (const keys of redis.scanIterator({ MATCH: `${prefix}*` })) if (keys.length) await redis.del(keys);
    await closeRedis(redis);
  });

  function gateway(reports: PresenceChange[], timing?: { entryTtlMs: number; renewEveryMs: number }) {
    const g = new SocketsPerUser(redis, prefix, 5, log, (c) => reports.push(c), timing);
    gateways.push(g);
    return g;
  }

  it('reports the first socket across gateways and the last one, numbered in order; the limit still holds', async () => {
    const reports: PresenceChange[] = [];
    const [a, b] = [gateway(reports), gateway(reports)];
    const userId = randomUUID();
    expect(await a.admit(userId, orgId, 's1')).toBe(true);
    expect(await b.admit(userId, orgId, 's2')).toBe(true);
    await a.release('s1');
    expect(reports.map((r) => r.connected)).toEqual([true]);
    await b.release('s2');
    expect(reports.map(({ userId: u, orgId: o, connected }) => [u, o, connected])).toEqual([
      [userId, orgId, true],
      [userId, orgId, false],
    ]);
    expect(reports[1].seq).toBeGreaterThan(reports[0].seq);

    for (const id of ['x1', 'x2', 'x3', 'x4', 'x5']) expect(await a.admit(userId, orgId, id)).toBe(true);
    expect(await b.admit(userId, orgId, 'x6')).toBe(false);
    expect(reports).toHaveLength(3);
  });

  it('a dead gateway’s user is reported gone once, by one of the living, after the entries ran out', async () => {
    const reports: PresenceChange[] = [];
    const timing = { entryTtlMs: 300, renewEveryMs: 100 };
    const dead = gateway(reports, timing);
    const userId = randomUUID();
    expect(await dead.admit(userId, orgId, 'lost')).toBe(true);
    // It dies: no renewal, no release.
    await dead.stop();
    gateway(reports, timing);
    gateway(reports, timing);
    const deadline = Date.now() + 5_000;
    while (reports.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Two more renewals of both living gateways: still one report.
    await new Promise((r) => setTimeout(r, 250));
    expect(reports.map((r) => [r.userId, r.connected])).toEqual([
      [userId, true],
      [userId, false],
    ]);
  });

  it('a living gateway’s renewals keep its users present past the entry lifetime', async () => {
    const reports: PresenceChange[] = [];
    const timing = { entryTtlMs: 300, renewEveryMs: 100 };
    const living = gateway(reports, timing);
    gateway(reports, timing);
    const userId = randomUUID();
    expect(await living.admit(userId, orgId, 'kept')).toBe(true);
    await new Promise((r) => setTimeout(r, 900));
    expect(reports.map((r) => r.connected)).toEqual([true]);
    await living.release('kept');
    expect(reports.map((r) => r.connected)).toEqual([true, false]);
  });
});
