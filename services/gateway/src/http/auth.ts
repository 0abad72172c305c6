import type { Request, RequestHandler, Response } from 'express';
import { authKeys, createTokenVerifier, parseApiKeyGrant, type ApiKeyGrant } from '@crm/auth';
import { sha256Hex } from '@crm/crypto';
import { type ClientFor, decodeRemoteError, status } from '@crm/grpc-kit';
import type { Redis } from '../redis';
import { ApiKeyCache, INVALID, readShared, REVOKED } from './api-key-cache';
import type { ApiKeyUses } from './api-key-uses';
import type { AuthSync } from './auth-sync';
import type { GrantRenewals } from './grant-renewals';
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
  /** Reports key uses to identity for lastUsedAt (at most once a minute per key). */
  keyUses: ApiKeyUses;
  sync: AuthSync;
  /** Renews automation's grant for the org of an authenticated request (at most daily per org: grant-renewals.ts). */
  grants: GrantRenewals;
  limiter: RateLimiter;
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
    deps.grants.touched(claims.org, claims.sub, claims.role);
    next();
  };

  const apiKeyRefused = () => unauthorized('Missing or invalid API key', 'invalid_api_key');

  /**
   * Identity's answer: the grant (identity also cached it in Redis for every gateway), or its refusal's code
   * (`api_key_expired` for a key past its expiry, else `invalid_api_key`).
   */
  const askIdentity = async (key: string, res: Response): Promise<{ grant: ApiKeyGrant; raw: string } | { refused: string }> => {
    try {
      const found = await deps.identity.VerifyApiKey({ apiKey: key }, { requestId: res.locals.requestId, traceparent: res.locals.traceparent });
      const grant = parseApiKeyGrant(found.grantJson);
      if (!grant) throw new Error('identity VerifyApiKey: answer without a grant');
      return { grant, raw: found.grantJson };
    } catch (err) {
      if ((err as { code?: number }).code !== status.UNAUTHENTICATED) throw err;
      return { refused: decodeRemoteError(err as Parameters<typeof decodeRemoteError>[0]).code };
    }
  };

  /**
   * The key's grant: from memory, else from the Redis entry identity wrote, else from identity. A grant that predates
   * a revocation or a change of its user's access heard here (api-key-cache.ts isStale) is not trusted. Guessing is
   * made slow and cheap for identity: a refused key is cached as invalid for a while, and a client address with too
   * many failed checks this minute gets 429 for any key not already known to be good, before identity is asked (a
   * valid cached key keeps working from a noisy office address). Only the failure path counts in Redis; a known
   * good key costs no Redis round trip.
   */
  const grantOf = async (key: string, hash: string, req: Request, res: Response): Promise<ApiKeyGrant | HttpError> => {
    const cached = deps.apiKeys.get(hash);
    if (cached && cached !== INVALID) return cached;
    const rawShared = cached ? INVALID : await deps.redis.get(keys.apiKey(hash));
    const shared = readShared(rawShared);
    if (shared && shared !== INVALID && shared !== REVOKED && !deps.apiKeys.isStale(hash, shared)) {
      deps.apiKeys.setValid(hash, shared, rawShared!);
      return shared;
    }
    // A key not known to be good counts against its address before anything else (increment, then compare):
    // reading the count first let a concurrent burst of guesses all pass the check. One that turns out good, or
    // that identity could not judge, is taken back off.
    const failures = windowKey(deps.prefix, `akf:${req.ip}`);
    const attempts = await countInRedis(deps.redis, failures.key);
    if (attempts > deps.apiKeyFailuresPerMinute) return rateLimited(failures.resetIn, 'api_key_failures', deps.rejected);
    if (shared === INVALID || shared === REVOKED) {
      deps.apiKeys.setInvalid(hash);
      return apiKeyRefused();
    }
    let answer: Awaited<ReturnType<typeof askIdentity>>;
    try {
      answer = await askIdentity(key, res);
    } catch (err) {
      await deps.redis.decr(failures.key).catch(() => undefined);
      throw err;
    }
    if ('refused' in answer) {
      deps.apiKeys.setInvalid(hash);
      // A key past its expiry says so, whether this gateway still held its grant (the check in apiKey) or had let it
      // go (its Redis entry ends at the key's expiry, and a resync then forgets it) and asked identity.
      return answer.refused === 'api_key_expired' ? unauthorized('API key has expired', 'api_key_expired') : apiKeyRefused();
    }
    await deps.redis.decr(failures.key);
    deps.apiKeys.setValid(hash, answer.grant, answer.raw);
    return answer.grant;
  };

  /**
   * X-API-Key: the key's grant (organization, bound user and role, scopes, expiry) as identity answered it, cached
   * in process (api-key-cache.ts) and, shared between gateways, in Redis (written by identity alone). A revocation
   * writes a tombstone over the key's Redis entry and publishes the hash: every gateway drops it from memory at
   * once. What the key may call is checked by each route's declared scope (scopes.ts).
   */
  const apiKey: RequestHandler = async (req, res, next) => {
    const key = req.header('x-api-key');
    if (!key) return next(unauthorized('Missing X-API-Key header', 'invalid_api_key'));
    const hash = sha256Hex(key);
    const grant = await grantOf(key, hash, req, res);
    if (grant instanceof HttpError) return next(grant);
    if (grant.expiresAt && grant.expiresAt <= Date.now()) return next(unauthorized('API key has expired', 'api_key_expired'));
    const rl = deps.limiter.hit(`k:${hash.slice(0, 32)}`, deps.publicRatePerMinute);
    if (!rl.allowed) return next(rateLimited(rl.resetIn, 'api_key', deps.rejected));
    deps.keyUses.used(grant);
    // A key bound to a user acts as that user (their role and visibility apply); one with none acts with an
    // agent's rights over the whole organization, as no particular user.
    const principal: Principal = {
      kind: 'api_key',
      orgId: grant.orgId,
      userId: grant.userId,
      role: grant.role,
      keyId: grant.keyId,
      scopes: grant.scopes,
    };
    res.locals.principal = principal;
    deps.grants.touched(grant.orgId, grant.userId, grant.role);
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
