import type { RequestHandler } from 'express';
import { authKeys, createTokenVerifier } from '@crm/auth';
import { sha256Hex } from '@crm/crypto';
import { type ClientFor, status } from '@crm/grpc-kit';
import type { Redis } from '../redis';
import { ApiKeyCache, INVALID, REVOKED } from './api-key-cache';
import type { AuthSync } from './auth-sync';
import { HttpError } from './errors';
import type { Principal } from './principal';
import type { RateLimiter, RateLimitName } from './rate-limiter';
import type { TokenRevocations } from './token-revocations';
import { rememberVerified } from './verified-tokens';

interface AuthDeps {
  redis: Redis;
  prefix: string;
  jwtSecret: string;
  identity: ClientFor<'identity.v1.IdentityService'>;
  tokens: TokenRevocations;
  apiKeys: ApiKeyCache;
  sync: AuthSync;
  limiter: RateLimiter;
  apiKeyCacheSeconds: number;
  apiKeyInvalidCacheSeconds: number;
  apiKeyFailuresPerMinute: number;
  userRatePerMinute: number;
  publicRatePerMinute: number;
  /** Called for every 429, with the limit that refused (rate-limiter.ts `rateLimitRejections`). */
  rejected: (limit: RateLimitName) => void;
}

const unauthorized = (message: string, code = 'unauthenticated') => new HttpError(401, code, message);

function rateLimited(windowEndsIn: number, limit: RateLimitName, rejected: (limit: RateLimitName) => void) {
  rejected(limit);
  return new HttpError(429, 'rate_limited', 'Too many requests; slow down', undefined, Math.max(1, windowEndsIn));
}

/** Fixed one-minute window key for a subject counted in Redis directly (failed API keys, sign-in routes). */
function windowKey(prefix: string, subject: string): { key: string; resetIn: number } {
  const now = Math.floor(Date.now() / 1000);
  const minute = Math.floor(now / 60);
  return { key: `${prefix}rl:${subject}:${minute}`, resetIn: (minute + 1) * 60 - now };
}

/** INCR with the window's expiry set when the counter is new: the count after this request. */
async function countInRedis(redis: Redis, key: string): Promise<number> {
  const [count] = await redis.multi().incr(key).expire(key, 61, 'NX').exec();
  return Number(count);
}

export function authMiddleware(deps: AuthDeps) {
  const verify = rememberVerified(createTokenVerifier(deps.jwtSecret));
  const keys = authKeys(deps.prefix);

  /**
   * Bearer JWT: signature and expiry checked locally with a pinned algorithm (a token already verified here is
   * remembered until it expires: verified-tokens.ts); logout (jti), deactivation and role
   * change (valid-after) answered from memory kept current by identity's messages (auth-sync.ts), and the per-user
   * rate limit counted in memory and reconciled with Redis in the background (rate-limiter.ts). Redis is read only
   * the first time this instance sees a token, and on every request while the revocation subscription is down.
   */
  const bearer: RequestHandler = async (req, res, next) => {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m) return next(unauthorized('Missing bearer token'));
    const claims = verify(m[1].trim());
    if (!claims) return next(unauthorized('Invalid or expired token', 'invalid_token'));
    const known = deps.sync.live ? deps.tokens.local(claims) : undefined;
    const reason = known ? known.reason : await deps.tokens.load(claims);
    if (reason === 'logged_out') return next(unauthorized('Token has been revoked', 'invalid_token'));
    if (reason === 'access_changed') return next(unauthorized('Token is no longer valid; sign in again', 'invalid_token'));
    const rl = deps.limiter.hit(`u:${claims.sub}`, deps.userRatePerMinute);
    if (!rl.allowed) return next(rateLimited(rl.resetIn, 'user', deps.rejected));
    const principal: Principal = { kind: 'user', orgId: claims.org, userId: claims.sub, role: claims.role, jti: claims.jti, exp: claims.exp };
    res.locals.principal = principal;
    next();
  };

  const apiKeyRefused = () => unauthorized('Missing or invalid API key', 'invalid_api_key');

  /** Remember identity's answer in Redis for other gateways (NX: never over a rotation tombstone); true if it is now there. */
  const shareAnswer = async (cacheKey: string, value: string, seconds: number): Promise<boolean> => {
    if (seconds <= 0) return false;
    const previous = await deps.redis.set(cacheKey, value, { expiration: { type: 'EX', value: seconds }, condition: 'NX', GET: true });
    return previous === null || previous === value;
  };

  /**
   * X-API-Key: resolved to its organization through identity; cached in process (api-key-cache.ts) and, shared
   * between gateways, in Redis. Rotation writes a tombstone over the old key's Redis entry and publishes the hash:
   * every gateway drops it from memory at once, and the tombstone keeps it from being cached again anywhere.
   * Guessing is made slow and cheap for identity: a key identity refused is cached as invalid for a while, and a
   * client address with too many failed checks this minute gets 429 for any key not already known to be good,
   * before identity is asked (a valid cached key keeps working from a noisy office address). Only the failure path
   * counts in Redis; a known good key costs no Redis round trip.
   */
  const apiKey: RequestHandler = async (req, res, next) => {
    const key = req.header('x-api-key');
    if (!key) return next(unauthorized('Missing X-API-Key header', 'invalid_api_key'));
    const hash = sha256Hex(key);
    let orgId = deps.apiKeys.get(hash);
    if (!orgId || orgId === INVALID) {
      const cacheKey = keys.apiKey(hash);
      const shared = orgId ? INVALID : await deps.redis.get(cacheKey);
      orgId = shared ?? undefined;
      if (orgId && orgId !== REVOKED && orgId !== INVALID) {
        deps.apiKeys.setValid(hash, orgId);
      } else {
        // A key not known to be good counts against its address before anything else (increment, then compare):
        // reading the count first let a concurrent burst of guesses all pass the check. One that turns out good, or
        // that identity could not judge, is taken back off.
        const failures = windowKey(deps.prefix, `akf:${req.ip}`);
        const attempts = await countInRedis(deps.redis, failures.key);
        if (attempts > deps.apiKeyFailuresPerMinute) return next(rateLimited(failures.resetIn, 'api_key_failures', deps.rejected));
        if (orgId) {
          deps.apiKeys.setInvalid(hash);
          return next(apiKeyRefused());
        }
        try {
          const found = await deps.identity.VerifyApiKey({ apiKey: key }, { requestId: res.locals.requestId, traceparent: res.locals.traceparent });
          orgId = found.orgId;
        } catch (err) {
          if ((err as { code?: number }).code !== status.UNAUTHENTICATED) {
            await deps.redis.decr(failures.key).catch(() => undefined);
            throw err;
          }
          await shareAnswer(cacheKey, INVALID, deps.apiKeyInvalidCacheSeconds);
          deps.apiKeys.setInvalid(hash);
          return next(apiKeyRefused());
        }
        await deps.redis.decr(failures.key);
        // Cached here only if Redis holds no tombstone: a rotation between identity's answer and now wins.
        if (await shareAnswer(cacheKey, orgId, deps.apiKeyCacheSeconds)) deps.apiKeys.setValid(hash, orgId);
      }
    }
    const rl = deps.limiter.hit(`k:${hash.slice(0, 32)}`, deps.publicRatePerMinute);
    if (!rl.allowed) return next(rateLimited(rl.resetIn, 'api_key', deps.rejected));
    // Integrations act with an agent's rights inside their organization, as no particular user.
    const principal: Principal = { kind: 'api_key', orgId, userId: '', role: 'agent' };
    res.locals.principal = principal;
    next();
  };

  return { bearer, apiKey };
}

/**
 * Per-IP limit for sign-in style routes that have no credential yet: counted in Redis on every request, exact across
 * gateways (these routes are rare and guard passwords, so no local counting).
 */
export function ipRateLimit(
  redis: Redis,
  prefix: string,
  perMinute: number,
  rejected: (limit: RateLimitName) => void,
  bucket: Extract<RateLimitName, 'auth_ip' | 'email_links'> = 'auth_ip',
): RequestHandler {
  // Each bucket counts under its own key: sign-in's is never spent by another route.
  const subject = bucket === 'auth_ip' ? 'ip' : 'link';
  return async (req, _res, next) => {
    const rl = windowKey(prefix, `${subject}:${req.ip}`);
    if ((await countInRedis(redis, rl.key)) > perMinute) return next(rateLimited(rl.resetIn, bucket, rejected));
    next();
  };
}
