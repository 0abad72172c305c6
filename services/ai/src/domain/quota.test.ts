import { AppError } from '@crm/grpc-kit';
import { createLogger } from '@crm/logger';
import { closeRedisClient, createRedisClient } from '@crm/redis';
import { clearRedisPrefix, infra, uniqueName } from '@crm/testing';
import { DailyQuota, DailyTokens, nextUtcMidnight } from './quota';

// The daily quota against the real Redis: counts per org and UTC day, refuses with 429 and the wait
// until midnight UTC, and starts again at the next UTC day.
describe('DailyQuota', () => {
  const prefix = `${uniqueName('t_quota')}:`;
  const redis = createRedisClient(infra.redisUrl, createLogger('ai-test', 'warn'), 'ai-test');
  let now = new Date('2025-06-30T23:59:50.000Z');
  const quota = new DailyQuota(redis, prefix, () => now);

  beforeAll(() => redis.connect());
  afterAll(async () => {
    await closeRedisClient(redis);
    await clearRedisPrefix(prefix);
  });

  it('counts down, refuses when spent with Retry-After to midnight UTC, and resets on the next UTC day', async () => {
    expect(await quota.take('org-a', 2)).toEqual({ used: 1, remaining: 1 });
    expect(await quota.take('org-a', 2)).toEqual({ used: 2, remaining: 0 });
    const err = await quota.take('org-a', 2).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err.kind).toBe('rate_limited');
    expect(err.retryAfter).toBe(10);
    expect(await quota.used('org-a')).toBe(2);
    // Another organization has its own count.
    expect((await quota.take('org-b', 2)).used).toBe(1);

    now = new Date('2025-07-01T00:00:01.000Z');
    expect(await quota.used('org-a')).toBe(0);
    expect(await quota.take('org-a', 2)).toEqual({ used: 1, remaining: 1 });
  });

  it('never hands out more than the quota to concurrent callers', async () => {
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => quota.take('org-race', 5)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(await quota.used('org-race')).toBe(5);
  });

  it('the counter key expires by itself a day after its day ends', async () => {
    await quota.take('org-ttl', 3);
    const keys = await redis.keys(`${prefix}ai:quota:org-ttl:*`);
    expect(keys).toHaveLength(1);
    const ttl = await redis.ttl(keys[0]);
    expect(ttl).toBeGreaterThan(86_400);
    expect(ttl).toBeLessThanOrEqual(2 * 86_400);
  });

  it('next midnight is the start of the next UTC day', () => {
    expect(nextUtcMidnight(new Date('2025-12-31T13:00:00.000Z')).toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });
});

// AI_DAILY_TOKENS_MAX (issue #32 item 6): the vendor's tokens of each call are added up per org and UTC day; an org
// at or past the cap has none left (the local engine answers) until the next UTC day.
describe('DailyTokens', () => {
  const prefix = `${uniqueName('t_tokens')}:`;
  const redis = createRedisClient(infra.redisUrl, createLogger('ai-test', 'warn'), 'ai-test');
  let now = new Date('2025-06-30T23:00:00.000Z');
  const tokens = new DailyTokens(redis, prefix, 100, () => now);

  beforeAll(() => redis.connect());
  afterAll(async () => {
    await closeRedisClient(redis);
    await clearRedisPrefix(prefix);
  });

  it('adds what each call cost, per org, and has none left at the cap; the next UTC day starts at 0', async () => {
    expect(await tokens.left('org-a')).toBe(true);
    await tokens.add('org-a', 60);
    expect(await tokens.left('org-a')).toBe(true);
    await tokens.add('org-a', 39.6);
    // Counted in whole tokens: 60 + 40 = 100, the cap.
    expect(Number(await redis.get(`${prefix}ai:tokens:org-a:2025-06-30`))).toBe(100);
    expect(await tokens.left('org-a')).toBe(false);
    expect(await tokens.left('org-b')).toBe(true);
    // A negative count (a vendor's bad usage figure) never gives tokens back.
    await tokens.add('org-a', -50);
    expect(await tokens.left('org-a')).toBe(false);

    now = new Date('2025-07-01T00:00:01.000Z');
    expect(await tokens.left('org-a')).toBe(true);
  });

  it('the counter key expires by itself a day after its day ends', async () => {
    await tokens.add('org-ttl', 5);
    const [key] = await redis.keys(`${prefix}ai:tokens:org-ttl:*`);
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(86_400);
    expect(ttl).toBeLessThanOrEqual(2 * 86_400);
  });
});
