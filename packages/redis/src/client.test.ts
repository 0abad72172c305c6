import net from 'node:net';
import pino from 'pino';
import { clearRedisPrefix, eventually, infra, uniqueName } from '@crm/testing';
import { closeRedisClient, createRedisClient, MAX_RECONNECT_DELAY_MS, reconnectDelay, redisAnswers, type RedisClient } from './client';
import { LuaScript } from './lua-script';

/** A logger that keeps its lines, so a test can read what an operator would see. */
function recordingLogger() {
  const lines: Array<{ level: number; msg: string; redis?: string; err?: { message: string } }> = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

/**
 * A TCP hop in front of the shared Redis that the test can cut and restore on the same port: an outage of "our"
 * Redis without touching the server other test runs use.
 */
async function cuttableProxy() {
  const target = new URL(infra.redisUrl);
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 6379), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server!.address() as net.AddressInfo).port));
    });
  const port = await listen(0);
  const url = new URL(infra.redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    async cut() {
      await new Promise<void>((resolve) => {
        server!.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
    restore: () => listen(port),
  };
}

describe('createRedisClient', () => {
  const prefix = `${uniqueName('t_redis')}:`;
  const clients: RedisClient[] = [];
  const track = (c: RedisClient) => (clients.push(c), c);

  afterAll(async () => {
    for (const c of clients) await closeRedisClient(c, 100);
    await clearRedisPrefix(prefix);
  });

  it('waits 50 ms more before each reconnection attempt, never more than 2 s, and never gives up', () => {
    expect([0, 1, 2, 9].map(reconnectDelay)).toEqual([50, 100, 150, 500]);
    expect(reconnectDelay(39)).toBe(MAX_RECONNECT_DELAY_MS);
    expect(reconnectDelay(100_000)).toBe(MAX_RECONNECT_DELAY_MS);
  });

  it('returns replies as strings and numbers, and a failed command in MULTI rejects the whole EXEC', async () => {
    const { log } = recordingLogger();
    const redis = track(createRedisClient(infra.redisUrl, log, 'test'));
    await redis.connect();
    const key = `${prefix}counter`;
    expect(await redis.incr(key)).toBe(1);
    expect(await redis.get(key)).toBe('1');
    expect(await redis.set(`${prefix}once`, 'a', { expiration: { type: 'EX', value: 60 }, condition: 'NX' })).toBe('OK');
    expect(await redis.set(`${prefix}once`, 'b', { expiration: { type: 'EX', value: 60 }, condition: 'NX' })).toBeNull();
    expect(await redis.multi().incr(key).ttl(key).exec()).toEqual([2, -1]);
    // INCR of a non-integer fails inside EXEC: node-redis turns the error reply into a rejection (ioredis resolved
    // with [err, value] pairs that every caller had to inspect).
    await expect(redis.multi().set(`${prefix}text`, 'x').incr(`${prefix}text`).exec()).rejects.toThrow(/1 commands failed/);
  });

  it('survives its Redis going away: logs instead of crashing, fails commands in bounded time, and reconnects by itself', async () => {
    const proxy = await cuttableProxy();
    const { log, lines } = recordingLogger();
    const redis = track(createRedisClient(proxy.url, log, 'outage', { commandTimeoutMs: 300 }));
    await redis.connect();
    await redis.set(`${prefix}outage`, 'before');

    await proxy.cut();
    await eventually(async () => !redis.isReady);
    const started = Date.now();
    await expect(redis.get(`${prefix}outage`)).rejects.toThrow();
    // Unbounded, it would wait for the reconnect, which cannot come before the restore below; 5 s is room for a
    // loaded machine over the 300 ms command timeout.
    expect(Date.now() - started).toBeLessThan(5000);
    await eventually(async () => lines.some((l) => l.msg === 'redis connection error' && l.redis === 'outage'));

    await proxy.restore();
    await eventually(async () => redis.isReady, 10_000);
    expect(await redis.get(`${prefix}outage`)).toBe('before');
    expect(lines.some((l) => l.msg === 'redis connection restored')).toBe(true);
    await proxy.cut();
  });

  it('answers the readiness check while connected, fails it at once while its Redis is away', async () => {
    const proxy = await cuttableProxy();
    const { log } = recordingLogger();
    const redis = track(createRedisClient(proxy.url, log, 'readiness', { commandTimeoutMs: 10_000 }));
    await redis.connect();
    await expect(redisAnswers(redis)).resolves.toBeUndefined();
    await proxy.cut();
    await eventually(async () => !redis.isReady);
    // Not a PING queued for the reconnect (it would wait the 10 s command timeout): a rejection now.
    const started = Date.now();
    await expect(redisAnswers(redis)).rejects.toThrow('Redis is not connected');
    // Well under the 10 s a queued PING would wait (2 s leaves room for a loaded machine).
    expect(Date.now() - started).toBeLessThan(2000);
    await proxy.restore();
    await eventually(async () => redis.isReady, 10_000);
    await expect(redisAnswers(redis)).resolves.toBeUndefined();
    await proxy.cut();
  });

  it('closes at shutdown even when Redis is unreachable and a command is still waiting', async () => {
    const proxy = await cuttableProxy();
    const { log } = recordingLogger();
    const redis = createRedisClient(proxy.url, log, 'closing', { commandTimeoutMs: 10_000 });
    await redis.connect();
    await proxy.cut();
    await eventually(async () => !redis.isReady);
    const pending = redis.get(`${prefix}never`).catch((e: Error) => e);
    const started = Date.now();
    await closeRedisClient(redis, 200);
    // Well under the 10 s the waiting command would hold a close that waited for it (room for a loaded machine).
    expect(Date.now() - started).toBeLessThan(5000);
    expect(redis.isOpen).toBe(false);
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('LuaScript', () => {
  const prefix = `${uniqueName('t_lua')}:`;
  const { log } = recordingLogger();
  const redis = createRedisClient(infra.redisUrl, log, 'lua');

  beforeAll(() => redis.connect());
  afterAll(async () => {
    await closeRedisClient(redis);
    await clearRedisPrefix(prefix);
  });

  it('sends the body once when the server does not know it, and only the SHA1 afterwards', async () => {
    // A body no other run has loaded (the run's prefix is in it), so the server starts without it.
    const script = new LuaScript(`-- ${prefix}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
    expect(await redis.scriptExists(script.sha1)).toEqual([0]);
    const evalSpy = jest.spyOn(redis, 'eval');
    expect(await script.run(redis, [`${prefix}n`], [5])).toBe(5);
    expect(evalSpy).toHaveBeenCalledTimes(1);
    expect(await redis.scriptExists(script.sha1)).toEqual([1]);
    expect(await script.run(redis, [`${prefix}n`], [2])).toBe(7);
    expect(evalSpy).toHaveBeenCalledTimes(1);
    evalSpy.mockRestore();
  });

  it('passes script errors to the caller', async () => {
    const script = new LuaScript(`-- ${prefix} failing\nreturn redis.call('INCR', KEYS[1])`);
    await redis.set(`${prefix}word`, 'not a number');
    await expect(script.run(redis, [`${prefix}word`], [])).rejects.toThrow(/not an integer/);
  });
});
