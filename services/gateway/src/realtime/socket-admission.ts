import type { IncomingMessage } from 'node:http';
import type { Logger } from '@crm/logger';
import type { Redis } from '../redis';

/**
 * Whether a socket.io request's Origin may connect: a client with no Origin (a server, a script: not a browser
 * page another site could open), a page of the gateway's own origin, or one listed in CORS_ORIGINS (`*`: any).
 * WebSocket connections are not subject to CORS in browsers, so the check is the server's (allowRequest), not a
 * header the browser would enforce.
 */
export function originAllowed(req: IncomingMessage, corsOrigins: string): boolean {
  const origin = req.headers.origin;
  if (!origin) return true;
  if (corsOrigins.trim() === '*') return true;
  const allowed = corsOrigins
    .split(',')
    .map((o) => o.trim().replace(/\/$/, ''))
    .filter(Boolean);
  if (allowed.includes(origin)) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** How long a socket's entry lives in Redis without its gateway renewing it (a gateway that died stops renewing). */
const ENTRY_TTL_MS = 3 * 60_000;
const RENEW_EVERY_MS = 60_000;
/** Users whose entries may all have run out, looked at per renewal (more wait for the next). */
const REAP_BATCH = 100;

/** A user's first live socket connected (`connected`) or their last one went; `seq` orders these across gateways. */
export type PresenceChange = { orgId: string; userId: string; connected: boolean; seq: number };

// KEYS: the user's sockets, the presence index, the presence counter. ARGV: now, entry expiry, limit, socket id,
// entry TTL, index member. -1: refused; 0: admitted beside live sockets; n > 0: admitted as the first, report n.
const ADMIT = `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
  local live = redis.call('ZCARD', KEYS[1])
  if live >= tonumber(ARGV[3]) then return -1 end
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('ZADD', KEYS[2], 'GT', ARGV[2], ARGV[6])
  if live == 0 then return redis.call('INCR', KEYS[3]) end
  return 0`;

// KEYS as ADMIT. ARGV: now, socket id (empty: none, a reaper's look), index member. 0: live sockets remain, or another
// gateway already reported the last one gone; n > 0: none remains, report n. With live sockets left the index keeps
// the latest expiry among them, so the reaper looks again only once they may all have run out.
const RELEASE = `if ARGV[2] ~= '' then redis.call('ZREM', KEYS[1], ARGV[2]) end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
  local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if #latest > 0 then
    if ARGV[2] == '' then redis.call('ZADD', KEYS[2], latest[2], ARGV[3]) end
    return 0
  end
  if redis.call('ZREM', KEYS[2], ARGV[3]) == 0 then return 0 end
  return redis.call('INCR', KEYS[3])`;

/**
 * The user's live sockets across every gateway: a sorted set per user in Redis, socket id → expiry, renewed by the
 * gateway holding the socket.
 *
 * At most `perUser` of them: a new socket is admitted (atomically, in one script) only while the user's live entries
 * are fewer than the limit; a refused handshake answers `too_many_connections`.
 *
 * Presence (issue #29 item 4): the script that admits the user's first live socket, and the one that removes their
 * last, also take a number from one Redis counter and hand the change to `onPresence` (the gateway tells identity),
 * so identity applies the reports of several gateways in the order Redis saw them. An index (user → the latest expiry
 * of their sockets) lets any gateway notice a user whose sockets all ran out without a disconnect, because the gateway
 * holding them died: each renewal looks at the users whose latest expiry has passed and reports them gone. A crashed
 * gateway's users thus count as disconnected at most ENTRY_TTL_MS + RENEW_EVERY_MS after the crash (then identity's
 * offline window runs); while no gateway runs at all, nobody notices, and the first to start looks at once.
 */
export class SocketsPerUser {
  private readonly mine = new Map<string, { userId: string; orgId: string }>(); // socket id → its user
  private readonly timer: NodeJS.Timeout;
  private readonly releasing = new Set<Promise<void>>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly perUser: number,
    private readonly log: Logger,
    private readonly onPresence: (change: PresenceChange) => void = () => undefined,
    /** Tests shorten these to see a dead gateway's users reaped. */
    private readonly timing = { entryTtlMs: ENTRY_TTL_MS, renewEveryMs: RENEW_EVERY_MS },
  ) {
    this.timer = setInterval(() => void this.renew(), timing.renewEveryMs);
    this.timer.unref();
    void this.reap();
  }

  private key(userId: string) {
    return `${this.prefix}sockets:${userId}`;
  }

  private presenceKeys(userId: string) {
    return [this.key(userId), `${this.prefix}sockets:presence`, `${this.prefix}sockets:presence-seq`];
  }

  /** Takes a place for `socketId`; false when the user already has `perUser` live sockets. */
  async admit(userId: string, orgId: string, socketId: string): Promise<boolean> {
    const now = Date.now();
    const answer = Number(
      await this.redis.eval(ADMIT, {
        keys: this.presenceKeys(userId),
        arguments: [
          String(now),
          String(now + this.timing.entryTtlMs),
          String(this.perUser),
          socketId,
          String(this.timing.entryTtlMs),
          `${orgId}:${userId}`,
        ],
      }),
    );
    if (answer < 0) return false;
    this.mine.set(socketId, { userId, orgId });
    if (answer > 0) this.onPresence({ orgId, userId, connected: true, seq: answer });
    return true;
  }

  release(socketId: string): Promise<void> {
    const owner = this.mine.get(socketId);
    if (!owner) return Promise.resolve();
    this.mine.delete(socketId);
    const p = this.removeEntry(owner.orgId, owner.userId, socketId)
      .catch((err) => this.log.warn({ err }, 'socket count: release failed; the entry expires'))
      .finally(() => this.releasing.delete(p));
    this.releasing.add(p);
    return p;
  }

  /** Removes the socket's entry (none: a reaper's look at the user) and reports the user gone when none is left. */
  private async removeEntry(orgId: string, userId: string, socketId: string): Promise<void> {
    const seq = Number(
      await this.redis.eval(RELEASE, { keys: this.presenceKeys(userId), arguments: [String(Date.now()), socketId, `${orgId}:${userId}`] }),
    );
    if (seq > 0) this.onPresence({ orgId, userId, connected: false, seq });
  }

  private async renew(): Promise<void> {
    if (this.mine.size) {
      const until = Date.now() + this.timing.entryTtlMs;
      const multi = this.redis.multi();
      for (const [socketId, { userId, orgId }] of this.mine) {
        multi
          .zAdd(this.key(userId), { score: until, value: socketId }, { condition: 'XX' })
          .pExpire(this.key(userId), this.timing.entryTtlMs)
          .zAdd(`${this.prefix}sockets:presence`, { score: until, value: `${orgId}:${userId}` }, { comparison: 'GT' });
      }
      await multi.exec().catch((err) => this.log.warn({ err }, 'socket count: renewal failed'));
    }
    await this.reap();
  }

  /** Users whose sockets all ran out without a disconnect (their gateway died): reported gone, once across gateways. */
  private async reap(): Promise<void> {
    try {
      const stale = await this.redis.zRangeByScore(`${this.prefix}sockets:presence`, '-inf', Date.now(), { LIMIT: { offset: 0, count: REAP_BATCH } });
      for (const member of stale) {
        const [orgId, userId] = member.split(':');
        if (orgId && userId) await this.removeEntry(orgId, userId, '');
      }
    } catch (err) {
      this.log.warn({ err }, 'socket presence: looking for users of a gone gateway failed; trying at the next renewal');
    }
  }

  /** Stops renewing; waits for the releases under way (their reports are handed over). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.releasing]);
  }
}

/** At most `max` joins per socket in any `windowMs`: a client cannot turn `join` into a flood of lookups. */
export function joinThrottle(max: number, windowMs: number): () => boolean {
  const times: number[] = [];
  return () => {
    const now = Date.now();
    while (times.length && times[0] <= now - windowMs) times.shift();
    if (times.length >= max) return false;
    times.push(now);
    return true;
  };
}
