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
  const allowed = corsOrigins.split(',').map((o) => o.trim().replace(/\/$/, '')).filter(Boolean);
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

/**
 * At most `perUser` live sockets per user across every gateway: a sorted set per user in Redis, socket id →
 * expiry, renewed by the gateway holding the socket. A new socket is admitted (atomically, in one script) only
 * while the user's live entries are fewer than the limit; a refused handshake answers `too_many_connections`.
 */
export class SocketsPerUser {
  private readonly mine = new Map<string, string>(); // socket id → user id
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly perUser: number,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.timer.unref();
  }

  private key(userId: string) {
    return `${this.prefix}sockets:${userId}`;
  }

  /** Takes a place for `socketId`; false when the user already has `perUser` live sockets. */
  async admit(userId: string, socketId: string): Promise<boolean> {
    const now = Date.now();
    const admitted = await this.redis.eval(
      `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
       if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
       redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
       redis.call('PEXPIRE', KEYS[1], ARGV[5])
       return 1`,
      { keys: [this.key(userId)], arguments: [String(now), String(now + ENTRY_TTL_MS), String(this.perUser), socketId, String(ENTRY_TTL_MS)] },
    );
    if (Number(admitted) === 1) this.mine.set(socketId, userId);
    return Number(admitted) === 1;
  }

  async release(socketId: string): Promise<void> {
    const userId = this.mine.get(socketId);
    if (!userId) return;
    this.mine.delete(socketId);
    await this.redis.zRem(this.key(userId), socketId).catch((err) => this.log.warn({ err }, 'socket count: release failed; the entry expires'));
  }

  private async renew(): Promise<void> {
    if (!this.mine.size) return;
    const until = Date.now() + ENTRY_TTL_MS;
    const multi = this.redis.multi();
    for (const [socketId, userId] of this.mine) multi.zAdd(this.key(userId), { score: until, value: socketId }, { condition: 'XX' }).pExpire(this.key(userId), ENTRY_TTL_MS);
    await multi.exec().catch((err) => this.log.warn({ err }, 'socket count: renewal failed'));
  }

  stop(): void {
    clearInterval(this.timer);
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
