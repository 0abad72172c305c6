import { authKeys, parseRevocation, Revocation } from '@crm/auth';
import type { Logger } from '@crm/logger';
import { duplicateRedis, type Redis } from '../redis';
import type { ApiKeyCache } from './api-key-cache';
import type { TokenRevocations } from './token-revocations';

/**
 * Keeps the gateway's in-memory auth state ({@link TokenRevocations}, {@link ApiKeyCache}) in step with Redis so the
 * request path needs no Redis round trip:
 * - one subscriber connection hears identity's messages: `auth:revocations` (logout, deactivation, role change: also
 *   for the API keys bound to that user) and `auth:api-key-revocations` (rotation, revocation), applied as they arrive;
 * - pub/sub delivers at most once (a message published while the subscriber reconnects is lost), so every
 *   `resyncMs` one GET reads the generation counter identity bumps with each of those writes; only when it changed
 *   (or after a reconnect) are the held tokens, users and keys re-read. A missed message costs at most `resyncMs`.
 * - `live` is false until subscribed and resynced, and again from a disconnect until the next resync after the
 *   subscription is back: meanwhile the bearer check reads Redis on every request, as it did before.
 */
export interface AuthSync {
  readonly live: boolean;
  /** Called with each revocation message (the socket session guard ends live sockets with it). */
  onRevocation(listener: (r: Revocation) => void): void;
  /** Called when the subscription is back after a disconnect (messages may have been missed). */
  onResubscribed(listener: () => void): void;
  /** Resync now (tests, and the reconnect handler). */
  resync(force?: boolean): Promise<void>;
  stop(): Promise<void>;
}

interface Deps {
  redis: Redis;
  prefix: string;
  resyncMs: number;
  tokens: TokenRevocations;
  apiKeys: ApiKeyCache;
  log: Logger;
}

export async function startAuthSync(deps: Deps): Promise<AuthSync> {
  const { redis, tokens, apiKeys, log } = deps;
  const keys = authKeys(deps.prefix);
  const revocationListeners: ((r: Revocation) => void)[] = [];
  const resubscribeListeners: (() => void)[] = [];
  let subscribed = false;
  let synced = false;
  let generation: string | null | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  /** Bumped at each disconnect: a resync that began before one cannot vouch for the state after it. */
  let epoch = 0;

  const resyncOnce = async (force: boolean) => {
    const startedIn = epoch;
    // Read before the re-reads: a change made while they run shows up as a new generation at the next tick.
    const current = await redis.get(keys.revocationsGeneration);
    if (force || current !== generation) {
      await Promise.all([tokens.resync(), apiKeys.resync()]);
      generation = current;
    }
    tokens.prune();
    apiKeys.prune();
    if (subscribed && startedIn === epoch) synced = true;
  };

  const resync = (force = false): Promise<void> => {
    if (running) {
      // A forced resync asked for during one that started earlier must still run after it.
      if (force) again = true;
      return running;
    }
    running = resyncOnce(force)
      .catch((err) => log.warn({ err }, 'auth state resync failed; retrying at the next interval'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          void resync(true);
        }
      });
    return running;
  };

  const sub = duplicateRedis(redis, log, 'auth-sync subscriber');
  const down = () => {
    epoch++;
    subscribed = false;
    synced = false;
  };
  sub.on('end', down);
  sub.on('reconnecting', down);
  sub.on('error', down);
  await sub.connect();
  await sub.subscribe(keys.revocations, (raw) => {
    const r = parseRevocation(raw);
    if (!r) return log.warn({ channel: keys.revocations }, 'ignored a malformed revocation message');
    tokens.apply(r);
    // A user's access changed: the API keys bound to them are asked about again (auth.ts).
    if ('userId' in r) apiKeys.dropUser(r.userId, r.validAfter);
    for (const l of revocationListeners) l(r);
  });
  await sub.subscribe(keys.apiKeyRevocations, (hash) => apiKeys.drop(hash));
  subscribed = true;
  // node-redis subscribes again before 'ready' after a reconnect; what was published in between is caught up now.
  sub.on('ready', () => {
    subscribed = true;
    void resync(true);
    for (const l of resubscribeListeners) l();
  });
  await resync(true);

  const interval = setInterval(() => void resync(), deps.resyncMs);
  interval.unref();

  return {
    get live() {
      return subscribed && synced;
    },
    onRevocation: (l) => void revocationListeners.push(l),
    onResubscribed: (l) => void resubscribeListeners.push(l),
    resync,
    async stop() {
      clearInterval(interval);
      await running;
      if (sub.isOpen) sub.destroy();
    },
  };
}
