import type { RedisClientType } from '@redis/client';
import NodeRedisClient from '@redis/client/dist/lib/client';
import type { Logger } from '@crm/logger';

/** The client every service holds: node-redis's core client (RESP2, replies as strings and numbers), no modules. */
export type RedisClient = RedisClientType;

/**
 * node-redis's createClient builds a class holding every command for each client it makes (its cache of one is keyed
 * by the options, which differ per client: the name): measured at 20-700 ms of CPU per client, and a test stack makes
 * about twenty. One class for the process instead, made here once. The `redis` package's modules (JSON, search,
 * bloom, time series) are left out: nothing uses them, and loading them cost more than the rest of the client.
 */
const newClient = NodeRedisClient.factory();

export interface RedisClientOptions {
  /**
   * How long one command may wait, queued while the client reconnects or in flight, before it is rejected. A caller
   * (a login, a send) then fails in bounded time instead of hanging for the length of an outage.
   */
  commandTimeoutMs?: number;
  /** While Redis stays unreachable, log its error at most this often (the first one is logged at once). */
  errorLogEveryMs?: number;
  /**
   * false: while disconnected, commands fail at once instead of waiting for the reconnect (a request path that has a
   * fallback, like the gateway's, answers rather than hangs). Default true.
   */
  offlineQueue?: boolean;
}

/**
 * How long a command may wait by default. Long enough that a test process running every service in one starved event
 * loop does not see spurious timeouts (a timer can fire before a reply already received is read), short enough that
 * a caller fails well within the gateway's 10 s gRPC deadline. It is also node-redis's own default.
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5000;

/** The longest pause between two reconnection attempts: the same cap ioredis uses. */
export const MAX_RECONNECT_DELAY_MS = 2000;

/**
 * Pause before reconnection attempt `retries` (0-based): 50 ms more each time, capped at 2 s, and never giving up,
 * which is what ioredis did by default. node-redis's own default gives up on a socket timeout; a service whose Redis
 * comes back must find it again without a restart.
 */
export function reconnectDelay(retries: number): number {
  return Math.min((retries + 1) * 50, MAX_RECONNECT_DELAY_MS);
}

/**
 * A node-redis client for `url`, not yet connected: the caller awaits `connect()` at start (it resolves once Redis
 * answers, retrying meanwhile), so a service does not serve before its Redis is there.
 *
 * Every client gets an 'error' listener here: node-redis emits 'error' on each failed (re)connection and an unheard
 * 'error' event would crash the process. `duplicate()` does not copy listeners, so a second connection (a subscriber)
 * is made with another call to this function, never with `duplicate()`.
 */
export function createRedisClient(url: string, log: Logger, name: string, options: RedisClientOptions = {}): RedisClient {
  const client: RedisClient = newClient({
    url,
    // Shown by CLIENT LIST, so an operator can tell which service holds a connection.
    name: `crm-${name}`,
    socket: { reconnectStrategy: reconnectDelay },
    commandOptions: { timeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS },
    // By default commands issued during a short reconnect wait for it (bounded by the timeout above) rather than fail.
    disableOfflineQueue: options.offlineQueue === false,
    // Maintenance push notifications are a Redis Enterprise / Cloud feature; the handshake for them would be one more
    // round trip (and a DNS lookup) on every connection to a plain Redis.
    maintNotifications: 'disabled',
  });
  watchConnection(client, log.child({ redis: name }), options.errorLogEveryMs ?? 30_000);
  return client;
}

/**
 * Log the connection's life without flooding: the first error of an outage at once, then one line per
 * `errorLogEveryMs` with the number of failures in between, and one line when the connection is back.
 */
function watchConnection(client: RedisClient, log: Logger, errorLogEveryMs: number): void {
  let lastLoggedAt = 0;
  let suppressed = 0;
  let outage = false;
  client.on('error', (err: Error) => {
    const now = Date.now();
    if (!outage || now - lastLoggedAt >= errorLogEveryMs) {
      log.error({ err, failuresSinceLastLog: suppressed }, outage ? 'redis still unavailable' : 'redis connection error');
      lastLoggedAt = now;
      suppressed = 0;
    } else {
      suppressed += 1;
    }
    outage = true;
  });
  client.on('ready', () => {
    if (outage) log.info('redis connection restored');
    else log.debug('redis connected');
    outage = false;
    suppressed = 0;
  });
  client.on('reconnecting', () => log.debug('redis reconnecting'));
}

/**
 * Readiness of a Redis connection: not connected fails at once (a queued PING would only wait for the reconnect),
 * otherwise PING (the caller bounds the wait).
 */
export async function redisAnswers(client: Pick<RedisClient, 'isReady' | 'ping'>): Promise<void> {
  if (!client.isReady) throw new Error('Redis is not connected');
  await client.ping();
}

/**
 * Close at shutdown: let in-flight commands finish, but do not wait past `graceMs` (node-redis's graceful close
 * waits for replies that never come while Redis is down), then drop the connection.
 */
export async function closeRedisClient(client: RedisClient, graceMs = 2000): Promise<void> {
  if (!client.isOpen) return;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
  const result = await Promise.race([client.close().then(() => 'closed' as const), timedOut]);
  clearTimeout(timer);
  if (result !== 'timeout') return;
  try {
    client.destroy();
  } catch {
    // Already closed meanwhile (the graceful close finished as the grace ran out): nothing left to drop.
  }
}
