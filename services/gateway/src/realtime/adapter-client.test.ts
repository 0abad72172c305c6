import { createLogger } from '@crm/logger';
import { createRedis } from '../redis';
import { adapterPublisher } from './adapter-client';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('the socket.io adapter publisher', () => {
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
