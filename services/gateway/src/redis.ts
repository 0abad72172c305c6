import { createClient } from 'redis';
import type { Logger } from '@crm/logger';

/** The gateway's Redis client (node-redis). */
export type Redis = ReturnType<typeof createClient>;

/**
 * A client that fails commands at once while disconnected instead of queueing them: a request that needs Redis
 * then gets an error rather than hanging until Redis returns, and background work (rate-limit flushes, resyncs)
 * retries at its next tick. node-redis reconnects by itself; errors are logged, never thrown as events.
 */
export function createRedis(url: string, log: Logger): Redis {
  const client: Redis = createClient({ url, disableOfflineQueue: true });
  return watched(client, log, 'commands');
}

/** Another connection with the same options (pub/sub needs its own); its errors are logged like the first one's. */
export function duplicateRedis(client: Redis, log: Logger, role: string): Redis {
  return watched(client.duplicate(), log, role);
}

function watched(client: Redis, log: Logger, role: string): Redis {
  // An 'error' event without a listener would crash the process; a lost connection is retried by node-redis.
  client.on('error', (err: Error) => log.warn({ err, role }, 'redis connection error'));
  return client;
}

/**
 * Close after the commands already sent have their replies (socket.io's adapter unsubscribes without awaiting,
 * and an abrupt close would reject those as unhandled); a server that does not answer within a second is dropped.
 */
export async function closeRedis(client: Redis): Promise<void> {
  if (!client.isOpen) return;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)));
  await Promise.race([client.close().catch(() => undefined), gaveUp]);
  clearTimeout(timer);
  if (client.isOpen) client.destroy();
}
