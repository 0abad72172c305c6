import { createLogger } from '@crm/logger';
import net from 'node:net';
import { closeRedis, createRedis } from '../redis';
import { adapterPublisher, adapterSubscriber } from './adapter-client';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('the socket.io adapter clients', () => {
  const log = createLogger('test', 'silent');

  it('turns a failed fire-and-forget publish into a log line, not an unhandled rejection', async () => {
    // Not connected and no offline queue: publish fails, as it does when Redis is away or a command times out.
    const client = createRedis(REDIS_URL, log, 'adapter-test');
    await expect(client.publish('t_adapter', 'x')).rejects.toThrow('closed');
    // The adapter's call pattern: the promise is dropped. Unwrapped, jest fails this test on the unhandled
    // rejection, as Node ended the gateway on it.
    void adapterPublisher(client, log).publish('t_adapter', 'x');
    await new Promise((r) => setTimeout(r, 50));
  });

  it('turns a failed unsubscribe (the adapter closing while Redis is away) into a log line, not an unhandled rejection', async () => {
    // A subscriber reaching Redis through a relay the test cuts, as the gateway's is when Redis goes away.
    const piped = new Set<net.Socket>();
    const relay = net.createServer((down) => {
      const up = net.connect(Number(new URL(REDIS_URL).port || 6379), new URL(REDIS_URL).hostname);
      for (const sock of [down, up]) piped.add(sock.on('error', () => undefined));
      down.pipe(up).pipe(down);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const url = Object.assign(new URL(REDIS_URL), { hostname: '127.0.0.1', port: String((relay.address() as net.AddressInfo).port) });
    const client = createRedis(url.toString(), log, 'adapter-test');
    await client.connect();
    await client.subscribe('t_adapter', () => undefined);
    await client.pSubscribe('t_adapter*', () => undefined);
    const closed = new Promise((resolve) => relay.close(resolve));
    piped.forEach((sock) => sock.destroy());
    await closed;
    // The adapter's close(): the promises are dropped. The connection is then dropped (closeRedis after its grace), which
    // fails them; unwrapped, jest fails this test on the unhandled rejections, as Node ended the stopping gateway on them.
    const sub = adapterSubscriber(client, log);
    void sub.pUnsubscribe('t_adapter*');
    void sub.unsubscribe('t_adapter');
    await closeRedis(client);
    await new Promise((r) => setTimeout(r, 50));
    expect(client.isOpen).toBe(false);
  });

  it('passes every call through to the real client', async () => {
    const client = createRedis(REDIS_URL, log, 'adapter-test');
    const wrapped = adapterPublisher(client, log);
    await wrapped.connect();
    try {
      expect(wrapped.isReady).toBe(true);
      expect(await wrapped.publish('t_adapter_nobody', 'x')).toBe(0);
      expect(await wrapped.ping()).toBe('PONG');
    } finally {
      await client.close();
    }
  });
});
