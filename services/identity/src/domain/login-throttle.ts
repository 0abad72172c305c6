import { AppError } from '@crm/grpc-kit';
import type { RedisClient } from '@crm/redis';

const WINDOW_SECONDS = 15 * 60;
const DAY_SECONDS = 24 * 60 * 60;

/**
 * Brute-force limits: consecutive failures per email+IP within 15 minutes, and failures per email+IP per day.
 * Both keyed per email+IP, so neither one person's typos nor an attacker behind the same address (an office, a
 * proxy) locks anyone else out, and an attacker elsewhere never locks an account out of its owner's address.
 */
export class LoginThrottle {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly maxPerEmailIp: number,
    private readonly maxPerDay: number,
  ) {}

  private keys(email: string, ip: string) {
    return { pair: `${this.prefix}login:fail:${email}:${ip}`, day: `${this.prefix}login:fail-day:${email}:${ip}` };
  }

  async assertAllowed(email: string, ip: string): Promise<void> {
    const k = this.keys(email, ip);
    const [pair, day, pairTtl, dayTtl] = await this.redis.multi().get(k.pair).get(k.day).ttl(k.pair).ttl(k.day).exec();
    if (Number(pair ?? 0) >= this.maxPerEmailIp) throw tooMany(Number(pairTtl));
    if (Number(day ?? 0) >= this.maxPerDay) throw tooMany(Number(dayTtl));
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    const k = this.keys(email, ip);
    await this.redis.multi().incr(k.pair).expire(k.pair, WINDOW_SECONDS, 'NX').incr(k.day).expire(k.day, DAY_SECONDS, 'NX').exec();
  }

  async recordSuccess(email: string, ip: string): Promise<void> {
    await this.redis.del(this.keys(email, ip).pair);
  }
}

function tooMany(ttl: number): AppError {
  const retryAfter = ttl > 0 ? ttl : WINDOW_SECONDS;
  return new AppError('rate_limited', 'Too many failed sign-in attempts; try again later', { code: 'too_many_attempts', retryAfter });
}
