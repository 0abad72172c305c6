import { AppError } from '@crm/grpc-kit';
import type { RedisClient } from '@crm/redis';

const WINDOW_SECONDS = 15 * 60;
const DAY_SECONDS = 24 * 60 * 60;

/**
 * Brute-force limits: consecutive failures per email+IP within 15 minutes, and failures per IP per day.
 * Keyed per email+IP so an office behind one address is never locked out by one person's typos.
 */
export class LoginThrottle {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly maxPerEmailIp: number,
    private readonly maxPerIpDay: number,
  ) {}

  private keys(email: string, ip: string) {
    return { pair: `${this.prefix}login:fail:${email}:${ip}`, ip: `${this.prefix}login:fail-ip:${ip}` };
  }

  async assertAllowed(email: string, ip: string): Promise<void> {
    const k = this.keys(email, ip);
    const [pair, perIp, pairTtl, ipTtl] = await this.redis.multi().get(k.pair).get(k.ip).ttl(k.pair).ttl(k.ip).exec();
    if (Number(pair ?? 0) >= this.maxPerEmailIp) throw tooMany(Number(pairTtl));
    if (Number(perIp ?? 0) >= this.maxPerIpDay) throw tooMany(Number(ipTtl));
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    const k = this.keys(email, ip);
    await this.redis.multi().incr(k.pair).expire(k.pair, WINDOW_SECONDS, 'NX').incr(k.ip).expire(k.ip, DAY_SECONDS, 'NX').exec();
  }

  async recordSuccess(email: string, ip: string): Promise<void> {
    await this.redis.del(this.keys(email, ip).pair);
  }
}

function tooMany(ttl: number): AppError {
  const retryAfter = ttl > 0 ? ttl : WINDOW_SECONDS;
  return new AppError('rate_limited', 'Too many failed sign-in attempts; try again later', { code: 'too_many_attempts', retryAfter });
}
