import { closeRedisClient, createRedisClient, type RedisClient } from '@crm/redis';
import type { Logger } from '@crm/logger';

/** The gateway's Redis client (node-redis through @crm/redis). */
export type Redis = RedisClient;

/**
 * A client that fails commands at once while disconnected instead of queueing them: a request that needs Redis
 * then gets an error rather than hanging until Redis returns, and background work (rate-limit flushes, resyncs)
 * retries at its next tick. Reconnecting and error logging are @crm/redis's.
 */
export function createRedis(url: string, log: Logger, role = 'commands'): Redis {
  return createRedisClient(url, log, `gateway-${role.replace(/\W+/g, '-')}`, { offlineQueue: false });
}

/**
 * Another connection with the same options (pub/sub needs its own). A new client rather than `duplicate()`, which
 * would not carry the error listener.
 */
export function duplicateRedis(client: Redis, log: Logger, role: string): Redis {
  return createRedis(client.options?.url ?? '', log, role);
}

/**
 * Close after the commands already sent have their replies (socket.io's adapter unsubscribes without awaiting,
 * and an abrupt close would reject those as unhandled); a server that does not answer within a second is dropped.
 */
export function closeRedis(client: Redis): Promise<void> {
  return closeRedisClient(client, 1000);
}
