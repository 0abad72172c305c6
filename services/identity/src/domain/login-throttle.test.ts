import { AppError } from '@crm/grpc-kit';
import { createLogger } from '@crm/logger';
import { closeRedisClient, createRedisClient } from '@crm/redis';
import { clearRedisPrefix, infra, uniqueName } from '@crm/testing';
import { LoginThrottle } from './login-throttle';

// Sign-in failure counting against the real Redis: 3 consecutive failures per email and address, 5 per day.
describe('LoginThrottle', () => {
  const prefix = `${uniqueName('t_login_throttle')}:`;
  const redis = createRedisClient(infra.redisUrl, createLogger('identity-test', 'warn'), 'identity-test');
  const throttle = new LoginThrottle(redis, prefix, 3, 5);

  beforeAll(() => redis.connect());
  afterAll(async () => {
    await closeRedisClient(redis);
    await clearRedisPrefix(prefix);
  });

  /** The AppError assertAllowed refuses with, undefined if it allows; any other failure fails the test. */
  const refusal = (email: string, ip: string): Promise<AppError | undefined> =>
    throttle.assertAllowed(email, ip).then(
      () => undefined,
      (err: unknown) => {
        if (err instanceof AppError) return err;
        throw err;
      },
    );
  /** The refusal of a sign-in that must be refused. */
  const refused = async (email: string, ip: string): Promise<AppError> => {
    const err = await refusal(email, ip);
    if (!err) throw new Error(`${email} from ${ip} was allowed`);
    return err;
  };
  const fail = async (email: string, ip: string, times: number) => {
    for (let i = 0; i < times; i++) await throttle.recordFailure(email, ip);
  };

  it('refuses an email and address after the limit of consecutive failures, with Retry-After within the window', async () => {
    await fail('a@example.com', '10.0.0.1', 2);
    expect(await refusal('a@example.com', '10.0.0.1')).toBeUndefined();
    await fail('a@example.com', '10.0.0.1', 1);
    const err = await refused('a@example.com', '10.0.0.1');
    expect([err.kind, err.code]).toEqual(['rate_limited', 'too_many_attempts']);
    expect(err.retryAfter).toBeGreaterThan(0);
    expect(err.retryAfter).toBeLessThanOrEqual(15 * 60);
  });

  it('counts each email and address apart: neither another address nor another email is locked out', async () => {
    await fail('b@example.com', '10.0.0.2', 3);
    expect(await refusal('b@example.com', '10.0.0.2')).toBeInstanceOf(AppError);
    expect(await refusal('b@example.com', '10.0.0.3')).toBeUndefined();
    expect(await refusal('other@example.com', '10.0.0.2')).toBeUndefined();
  });

  it('a success clears the consecutive count but not the day’s', async () => {
    await fail('c@example.com', '10.0.0.4', 2);
    await throttle.recordSuccess('c@example.com', '10.0.0.4');
    await fail('c@example.com', '10.0.0.4', 2);
    expect(await refusal('c@example.com', '10.0.0.4')).toBeUndefined();
    await throttle.recordSuccess('c@example.com', '10.0.0.4');
    // Five failures today in all, never three in a row: the daily limit refuses, for up to a day.
    await fail('c@example.com', '10.0.0.4', 1);
    const err = await refused('c@example.com', '10.0.0.4');
    expect(err.retryAfter).toBeGreaterThan(15 * 60);
    expect(err.retryAfter).toBeLessThanOrEqual(24 * 60 * 60);
  });
});
