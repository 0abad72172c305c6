import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { Redis } from '../redis';

interface Window {
  key: string;
  minute: number;
  /** The window's count in Redis as of our last flush (every gateway's flushed requests, ours included). */
  global: number;
  /** Requests counted here and not yet sent to Redis. */
  pending: number;
  /** Requests sent to Redis whose reply has not come back. */
  inFlight: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Seconds until the window ends (Retry-After). */
  resetIn: number;
}

/**
 * Which limit refused a request: per user (bearer), per API key, failed API-key checks per address, sign-in routes
 * per address, campaign email links per address.
 */
export type RateLimitName = 'user' | 'api_key' | 'api_key_failures' | 'auth_ip' | 'email_links';

/** Counts 429s by limit (`http_rate_limit_rejections_total`); a no-op without metrics. */
export function rateLimitRejections(metrics: Metrics | undefined): (limit: RateLimitName) => void {
  if (!metrics) return () => undefined;
  const counter = metrics.counter('http_rate_limit_rejections_total', 'Requests the gateway refused with 429, by the limit that refused them', [
    'limit',
  ]);
  return (limit) => counter.labels(limit).inc();
}

/**
 * Fixed one-minute windows per subject, counted in process and reconciled with Redis.
 *
 * Each request is counted locally and decided at once on `last known global count + local unflushed count`; no
 * Redis round trip is on the request path. Every `flushMs` the local counts of all subjects go to Redis in one
 * pipeline (INCRBY, EXPIRE NX), and the replies, the count of every gateway together, become the new known global
 * counts. One gateway alone is exact: its known count plus its unflushed count is the true count.
 *
 * Bound on overshoot with N gateways: a gateway learns the others' requests at its next flush after they flushed
 * theirs, so it can admit requests the others already spent for at most about two flush intervals plus a round
 * trip. Per subject, the requests admitted beyond the limit in a window are at most what the other N − 1 gateways
 * admit for that subject in about `2 × flushMs`, and never more than N × limit in total (each gateway alone stops
 * at the limit). With the default 100 ms, a user spread over two gateways at 100 req/s may get ~20 extra.
 * A request denied is still counted, as before, so hammering past the limit does not open it sooner.
 *
 * If Redis is unreachable the counts stay local (each gateway still enforces the limit on its own traffic) and are
 * sent when it returns.
 */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly flushMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  /** Count one request of `subject` and decide it against `limit` per minute. */
  hit(subject: string, limit: number, nowMs = Date.now()): RateDecision {
    const now = Math.floor(nowMs / 1000);
    const minute = Math.floor(now / 60);
    const key = `${this.prefix}rl:${subject}:${minute}`;
    let w = this.windows.get(key);
    if (!w) {
      w = { key, minute, global: 0, pending: 0, inFlight: 0 };
      this.windows.set(key, w);
    }
    w.pending++;
    return { allowed: w.global + w.inFlight + w.pending <= limit, resetIn: (minute + 1) * 60 - now };
  }

  /** Send the unflushed counts to Redis and read the global counts back (one pipeline); concurrent calls share it. */
  flush(): Promise<void> {
    this.flushing ??= this.send().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async send(): Promise<void> {
    const minute = Math.floor(Date.now() / 60_000);
    // Windows of past minutes with nothing left to send are done.
    for (const [key, w] of this.windows) if (w.minute < minute && !w.pending && !w.inFlight) this.windows.delete(key);
    const batch = [...this.windows.values()].filter((w) => w.pending > 0);
    if (!batch.length || !this.redis.isReady) return;
    const multi = this.redis.multi();
    for (const w of batch) {
      w.inFlight = w.pending;
      w.pending = 0;
      multi.incrBy(w.key, w.inFlight).expire(w.key, 61, 'NX');
    }
    try {
      const replies = await multi.execAsPipeline();
      batch.forEach((w, i) => {
        w.global = Number(replies[2 * i]);
        w.inFlight = 0;
      });
    } catch (err) {
      // Not known to be counted: send again next time (a count sent twice only makes the limit stricter).
      for (const w of batch) {
        w.pending += w.inFlight;
        w.inFlight = 0;
      }
      this.log.warn({ err }, 'rate-limit counts not flushed to Redis; retrying');
    }
  }
}
