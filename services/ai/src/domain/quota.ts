import { AppError } from '@crm/grpc-kit';
import { LuaScript, type RedisClient } from '@crm/redis';

// Count and check in one step, so two calls racing for the last unit cannot both get it.
const TAKE = new LuaScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return -1 end
n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return n`);

/** The UTC day a moment falls in, as YYYY-MM-DD: the quota's counting period. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

export function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

function untilText(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.ceil((seconds % 3600) / 60);
  return h > 0 ? `${h} h ${m} min` : `${m} min`;
}

/**
 * Calls per organization per UTC day, counted in Redis under one key per org and day (the key expires
 * a day after the day ends, so old counters clean themselves up). A new UTC day is a new key: the count
 * starts again at midnight UTC.
 */
export class DailyQuota {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private key(orgId: string, at: Date): string {
    return `${this.prefix}ai:quota:${orgId}:${utcDay(at)}`;
  }

  async used(orgId: string): Promise<number> {
    return Number((await this.redis.get(this.key(orgId, this.now()))) ?? 0);
  }

  /** Take one call from today's quota; 429 with Retry-After (seconds to midnight UTC) when none is left. */
  async take(orgId: string, limit: number): Promise<{ used: number; remaining: number }> {
    const now = this.now();
    const reset = nextUtcMidnight(now);
    const ttl = Math.ceil((reset.getTime() - now.getTime()) / 1000) + 86_400;
    const n = Number(await TAKE.run(this.redis, [this.key(orgId, now)], [limit, ttl]));
    if (n < 0) {
      const wait = Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000));
      throw new AppError(
        'rate_limited',
        `The daily AI quota of ${limit} call${limit === 1 ? '' : 's'} for this organization is used up; it resets at 00:00 UTC (in ${untilText(wait)}). An admin can raise it in AI settings.`,
        { code: 'ai_quota_exceeded', retryAfter: wait },
      );
    }
    return { used: n, remaining: Math.max(0, limit - n) };
  }
}

/**
 * Vendor tokens per organization per UTC day (AI_DAILY_TOKENS_MAX), beside the call quota: a call's cost is what
 * the vendor counted, known only after it answered, so the cap is checked before a call and the tokens added after.
 * An organization at its cap is answered by the local engine (no vendor, no money) until midnight UTC.
 */
export class DailyTokens {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly max: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private key(orgId: string, at: Date): string {
    return `${this.prefix}ai:tokens:${orgId}:${utcDay(at)}`;
  }

  async left(orgId: string): Promise<boolean> {
    return Number((await this.redis.get(this.key(orgId, this.now()))) ?? 0) < this.max;
  }

  async add(orgId: string, tokens: number): Promise<void> {
    const now = this.now();
    const key = this.key(orgId, now);
    const ttl = Math.ceil((nextUtcMidnight(now).getTime() - now.getTime()) / 1000) + 86_400;
    await this.redis
      .multi()
      .incrBy(key, Math.max(0, Math.round(tokens)))
      .expire(key, ttl, 'NX')
      .exec();
  }
}

/**
 * Model lists asked per organization per minute (AI_MODELS_PER_MINUTE): each one calls the vendor with the
 * organization's (or the operator's) key, so a loop on the settings page must not become a flood of vendor calls.
 * Returns the seconds to wait, or 0 when the call may go ahead.
 */
export async function modelsThrottle(redis: RedisClient, prefix: string, orgId: string, perMinute: number, nowMs = Date.now()): Promise<number> {
  const minute = Math.floor(nowMs / 60_000);
  const key = `${prefix}ai:models:${orgId}:${minute}`;
  const [count] = await redis.multi().incr(key).expire(key, 61, 'NX').exec();
  return Number(count) > perMinute ? Math.max(1, Math.ceil(((minute + 1) * 60_000 - nowMs) / 1000)) : 0;
}
