import type { CrmServer, CrmSocket } from './socket-events';
import { AccessClaims, authKeys, Revocation } from '@crm/auth';
import type { Logger } from '@crm/logger';
import type { AuthSync } from '../http/auth-sync';
import type { TokenRevocations } from '../http/token-revocations';
import type { Redis } from '../redis';

/**
 * Keeps live sockets within their token's rights. The HTTP bearer check runs on every request, but a socket is
 * checked once at the handshake, so without this a logged-out, deactivated or demoted user (or an expired token)
 * would keep receiving the organization's events for as long as the connection lasts.
 *
 * Three ways a session ends, each reported to the client as `session_ended` `{reason}` just before the server
 * disconnects it (socket.io reason "io server disconnect", after which the client does not reconnect by itself):
 * - a revocation message that identity publishes on `auth:revocations` right after writing the Redis key;
 *   every gateway instance receives it (through the HTTP auth state's subscription, auth-sync.ts) and ends the
 *   matching sockets it holds;
 * - a timer at the token's `exp`;
 * - a periodic re-check of every local socket against the same Redis keys, in one pipelined round trip, because
 *   pub/sub delivers at most once: a message published while this instance was reconnecting is lost.
 */
export type SessionEndReason = 'logged_out' | 'access_changed' | 'token_expired';

export interface SessionGuard {
  /** The handshake's check: the HTTP bearer check's own state (memory when subscribed, else Redis). */
  check(claims: AccessClaims): Promise<SessionEndReason | undefined>;
  /** Start watching an accepted socket (its token's room and expiry timer). */
  watch(socket: CrmSocket): void;
  stop(): Promise<void>;
}

interface GuardDeps {
  io: CrmServer;
  redis: Redis;
  sync: AuthSync;
  tokens: TokenRevocations;
  prefix: string;
  resyncMs: number;
  log: Logger;
}

/** Room of the sockets opened with one token, so a logout ends those and not the user's other sessions. */
const sessionRoom = (jti: string) => `session:${jti}`;
const userRoom = (userId: string) => `user:${userId}`;
/** setTimeout fires at once for delays above this (about 24.8 days); longer waits are left to the resync. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Keys per MGET in the resync, so one huge command does not hold Redis up for other clients. */
const MGET_CHUNK = 500;

/** A logout deny-list entry, or a valid-after time at or after the token's issue, ends the token. */
export function revocationReason(claims: AccessClaims, revoked: string | null, validAfter: string | null): SessionEndReason | undefined {
  if (revoked) return 'logged_out';
  if (validAfter && claims.ims <= Number(validAfter)) return 'access_changed';
  return undefined;
}

const expired = (claims: AccessClaims, now = Date.now()) => claims.exp * 1000 <= now;

export async function startSessionGuard(deps: GuardDeps): Promise<SessionGuard> {
  const { io, redis, log } = deps;
  const keys = authKeys(deps.prefix);
  const timers = new Map<string, NodeJS.Timeout>();

  const end = (socket: CrmSocket, reason: SessionEndReason) => {
    if (!socket.connected) return;
    log.info({ socketId: socket.id, userId: socket.data.claims.sub, reason }, 'live session ended');
    // Queued before the disconnect packet on the same transport, so the client gets it first.
    socket.emit('session_ended', { reason });
    socket.disconnect(true);
  };

  /** Sockets of a room held by this instance (the adapter's room map is local; every instance runs this). */
  const localSockets = (room: string): CrmSocket[] =>
    [...(io.of('/').adapter.rooms.get(room) ?? [])].map((id) => io.of('/').sockets.get(id)).filter((s): s is CrmSocket => !!s);

  const apply = (r: Revocation) => {
    if ('jti' in r) {
      for (const s of localSockets(sessionRoom(r.jti))) end(s, 'logged_out');
      return;
    }
    // A token issued after the change (a fresh sign-in with the new role) stays connected.
    for (const s of localSockets(userRoom(r.userId))) {
      if (s.data.claims.ims <= r.validAfter) end(s, 'access_changed');
    }
  };

  let resyncing = false;
  const resync = async () => {
    if (resyncing) return;
    resyncing = true;
    try {
      const sockets = [...io.of('/').sockets.values()].filter((s) => s.data.claims);
      const now = Date.now();
      const live = sockets.filter((s) => {
        if (!expired(s.data.claims, now)) return true;
        end(s, 'token_expired');
        return false;
      });
      if (!live.length) return;
      const keyList = live.flatMap((s) => {
        const c = s.data.claims;
        return [keys.revokedJti(c.jti), keys.validAfter(c.sub)];
      });
      const chunks: Promise<(string | null)[]>[] = [];
      // Issued in one tick, node-redis sends them as one pipeline.
      for (let i = 0; i < keyList.length; i += MGET_CHUNK) chunks.push(redis.mGet(keyList.slice(i, i + MGET_CHUNK)));
      const values = (await Promise.all(chunks)).flat();
      live.forEach((s, i) => {
        const reason = revocationReason(s.data.claims, values[2 * i], values[2 * i + 1]);
        if (reason) end(s, reason);
      });
    } catch (err) {
      log.warn({ err }, 'live session re-check failed; retrying at the next interval');
    } finally {
      resyncing = false;
    }
  };

  deps.sync.onRevocation(apply);
  // After a reconnect of the subscription, whatever was published in between is caught up at once.
  deps.sync.onResubscribed(() => void resync());
  const interval = setInterval(() => void resync(), deps.resyncMs);
  interval.unref();

  return {
    async check(claims) {
      const known = deps.sync.live ? deps.tokens.local(claims) : undefined;
      return known ? known.reason : deps.tokens.load(claims);
    },
    watch(socket) {
      const claims = socket.data.claims;
      // A revocation published between the handshake check and this join is caught by the next resync.
      void socket.join(sessionRoom(claims.jti)); // the Redis adapter keeps rooms in memory: join is synchronous
      const delay = claims.exp * 1000 - Date.now();
      if (delay <= MAX_TIMER_MS) {
        timers.set(
          socket.id,
          setTimeout(() => end(socket, 'token_expired'), Math.max(0, delay)),
        );
      }
      socket.once('disconnect', () => {
        clearTimeout(timers.get(socket.id));
        timers.delete(socket.id);
      });
    },
    async stop() {
      clearInterval(interval);
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
    },
  };
}
