import type { IncomingMessage } from 'node:http';
import { createLogger } from '@crm/logger';
import { clearRedisPrefix, uniqueName } from '@crm/testing';
import { closeRedis, createRedis } from '../redis';
import { peersKey, sessionPeers } from './session-peers';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** What sessionPeers takes of engine.io: its id maker, and the middleware it adds (kept, not run, here). */
function fakeEngine() {
  const middleware: unknown[] = [];
  return {
    generateId: (_req: IncomingMessage): string => 'engine.io default',
    use: (fn: unknown) => void middleware.push(fn),
    middleware,
  };
}

describe('gateway instances as socket.io session peers', () => {
  const log = createLogger('test', 'silent');
  const prefix = `${uniqueName('t_peers')}:`;
  const redis = createRedis(REDIS_URL, log, 'peers-test');

  beforeAll(() => redis.connect());
  afterAll(async () => {
    await clearRedisPrefix(prefix);
    await closeRedis(redis);
  });

  it('names each session after its instance, with 120 random bits after it', () => {
    const engine = fakeEngine();
    const peers = sessionPeers(engine, { redis, prefix, peerHost: '', log });
    const ids = Array.from({ length: 50 }, () => engine.generateId({} as IncomingMessage));
    for (const id of ids) expect([id.slice(0, 9), id.slice(9)]).toEqual([`${peers.instance}.`, expect.stringMatching(/^[A-Za-z0-9_-]{20}$/)]);
    expect(new Set(ids).size).toBe(50);
    // Another instance, another name.
    expect(sessionPeers(fakeEngine(), { redis, prefix, peerHost: '', log }).instance).not.toBe(peers.instance);
  });

  it('without GATEWAY_PEER_HOST announces nothing and adds no middleware', async () => {
    const engine = fakeEngine();
    const peers = sessionPeers(engine, { redis, prefix, peerHost: '', log });
    await peers.announce(8080);
    expect(await redis.hGetAll(peersKey(prefix))).toEqual({});
    expect(engine.middleware).toHaveLength(0);
  });

  it.each([
    ['10.0.0.7', 'http://10.0.0.7:8080'],
    ['gateway-0.gateway.crm.svc', 'http://gateway-0.gateway.crm.svc:8080'],
    // An IPv6 pod IP is bracketed in the URL.
    ['fd00::7', 'http://[fd00::7]:8080'],
  ])('announces %s on its port as %s, and withdraws it at stop', async (host, url) => {
    const engine = fakeEngine();
    const peers = sessionPeers(engine, { redis, prefix, peerHost: host, log });
    expect(engine.middleware).toHaveLength(1);
    await peers.announce(8080);
    expect(await redis.hGet(peersKey(prefix), peers.instance)).toBe(url);
    await peers.withdraw();
    expect(await redis.hGet(peersKey(prefix), peers.instance)).toBeNull();
  });
});
