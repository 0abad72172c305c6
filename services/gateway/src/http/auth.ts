import type { RequestHandler } from 'express';
import type Redis from 'ioredis';
import { authKeys, createTokenVerifier } from '@crm/auth';
import { sha256Hex } from '@crm/crypto';
import { status, type ServiceClient } from '@crm/grpc-kit';
import { HttpError } from './errors';
import type { Principal } from './principal';

/** Cache value identity writes over a rotated key's entry (a tombstone). */
const REVOKED = 'revoked';
/** Cache value the gateway writes for a key identity refused (the negative cache). */
const INVALID = 'invalid';

interface AuthDeps {
  redis: Redis;
  prefix: string;
  jwtSecret: string;
  identity: ServiceClient;
  apiKeyCacheSeconds: number;
  apiKeyInvalidCacheSeconds: number;
  apiKeyFailuresPerMinute: number;
  userRatePerMinute: number;
  publicRatePerMinute: number;
}

const unauthorized = (message: string, code = 'unauthenticated') => new HttpError(401, code, message);

function rateLimited(windowEndsIn: number) {
  return new HttpError(429, 'rate_limited', 'Too many requests; slow down', undefined, Math.max(1, windowEndsIn));
}

/** Fixed one-minute window key for a subject. */
function windowKey(prefix: string, subject: string): { key: string; resetIn: number } {
  const now = Math.floor(Date.now() / 1000);
  const minute = Math.floor(now / 60);
  return { key: `${prefix}rl:${subject}:${minute}`, resetIn: (minute + 1) * 60 - now };
}

/**
 * The bearer check's Redis work as one script (one command and one reply instead of MULTI, MGET, INCR, EXPIRE
 * and EXEC): the jti deny-list entry, the user's valid-after time, and the rate-limit counter incremented,
 * with the window's expiry set when the counter is new.
 */
const BEARER_CHECK = `
local revoked = redis.call('GET', KEYS[1])
local validAfter = redis.call('GET', KEYS[2])
local count = redis.call('INCR', KEYS[3])
if count == 1 then redis.call('EXPIRE', KEYS[3], 61) end
return {revoked or false, validAfter or false, count}`;

type BearerCheck = (revokedKey: string, validAfterKey: string, rateKey: string) => Promise<[string | null, string | null, number]>;

export function authMiddleware(deps: AuthDeps) {
  const verify = createTokenVerifier(deps.jwtSecret);
  const keys = authKeys(deps.prefix);
  // EVALSHA, with the script loaded on first use and again after a Redis restart (ioredis handles NOSCRIPT).
  deps.redis.defineCommand('bearerCheck', { numberOfKeys: 3, lua: BEARER_CHECK });
  const bearerCheck = (deps.redis as unknown as { bearerCheck: BearerCheck }).bearerCheck.bind(deps.redis);

  /**
   * Bearer JWT: signature and expiry checked locally with a pinned algorithm; then one Redis round
   * trip checks logout (jti), deactivation or role change (valid-after) and the per-user rate limit.
   */
  const bearer: RequestHandler = async (req, res, next) => {
    const header = req.header('authorization') ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m) return next(unauthorized('Missing bearer token'));
    const claims = verify(m[1].trim());
    if (!claims) return next(unauthorized('Invalid or expired token', 'invalid_token'));
    const rl = windowKey(deps.prefix, `u:${claims.sub}`);
    const [revoked, validAfter, count] = await bearerCheck(keys.revokedJti(claims.jti), keys.validAfter(claims.sub), rl.key);
    if (revoked) return next(unauthorized('Token has been revoked', 'invalid_token'));
    if (validAfter && claims.ims <= Number(validAfter)) return next(unauthorized('Token is no longer valid; sign in again', 'invalid_token'));
    if (count > deps.userRatePerMinute) return next(rateLimited(rl.resetIn));
    const principal: Principal = { kind: 'user', orgId: claims.org, userId: claims.sub, role: claims.role, jti: claims.jti, exp: claims.exp };
    res.locals.principal = principal;
    next();
  };

  /** Count one failed API-key check for the client's address in its minute window. */
  const apiKeyFailed = async (failures: { key: string }) => {
    await deps.redis.multi().incr(failures.key).expire(failures.key, 61, 'NX').exec();
    return unauthorized('Missing or invalid API key', 'invalid_api_key');
  };

  /**
   * X-API-Key: resolved to its organization through identity, cached briefly in Redis. Rotation writes a
   * tombstone over the old key's cache entry and we cache with NX, so an old key fails at once.
   * Guessing is made slow and cheap for identity: a key identity refused is cached as invalid for a while,
   * and a client address with too many failed checks this minute gets 429 for any key not already known
   * to be good, before identity is asked (a valid cached key keeps working from a noisy office address).
   */
  const apiKey: RequestHandler = async (req, res, next) => {
    const key = req.header('x-api-key');
    if (!key) return next(unauthorized('Missing X-API-Key header', 'invalid_api_key'));
    const hash = sha256Hex(key);
    const cacheKey = keys.apiKey(hash);
    const failures = windowKey(deps.prefix, `akf:${req.ip}`);
    const [cached, failed] = await deps.redis.mget(cacheKey, failures.key);
    let orgId = cached;
    if (!orgId || orgId === REVOKED || orgId === INVALID) {
      if (Number(failed ?? 0) >= deps.apiKeyFailuresPerMinute) return next(rateLimited(failures.resetIn));
      if (orgId) return next(await apiKeyFailed(failures));
      try {
        const found = await deps.identity.VerifyApiKey<{ orgId: string }>({ apiKey: key }, { requestId: res.locals.requestId });
        orgId = found.orgId;
      } catch (err) {
        if ((err as { code?: number }).code !== status.UNAUTHENTICATED) throw err;
        // NX: never shorten a rotation tombstone; a refused key has no good entry to overwrite.
        if (deps.apiKeyInvalidCacheSeconds > 0) await deps.redis.set(cacheKey, INVALID, 'EX', deps.apiKeyInvalidCacheSeconds, 'NX');
        return next(await apiKeyFailed(failures));
      }
      if (deps.apiKeyCacheSeconds > 0) await deps.redis.set(cacheKey, orgId, 'EX', deps.apiKeyCacheSeconds, 'NX');
    }
    const rl = windowKey(deps.prefix, `k:${hash.slice(0, 32)}`);
    const [[, count]] = (await deps.redis.multi().incr(rl.key).expire(rl.key, 61, 'NX').exec()) as [[unknown, number]];
    if (count > deps.publicRatePerMinute) return next(rateLimited(rl.resetIn));
    // Integrations act with an agent's rights inside their organization, as no particular user.
    const principal: Principal = { kind: 'api_key', orgId, userId: '', role: 'agent' };
    res.locals.principal = principal;
    next();
  };

  return { bearer, apiKey };
}

/** Per-IP limit for sign-in style routes that have no credential yet. */
export function ipRateLimit(redis: Redis, prefix: string, perMinute: number): RequestHandler {
  return async (req, _res, next) => {
    const rl = windowKey(prefix, `ip:${req.ip}`);
    const [[, count]] = (await redis.multi().incr(rl.key).expire(rl.key, 61, 'NX').exec()) as [[unknown, number]];
    if (count > perMinute) return next(rateLimited(rl.resetIn));
    next();
  };
}
