import { createSecretKey, KeyObject, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';

/**
 * The access-token contract between identity (signs) and the gateway (verifies), and the Redis keys
 * both read or write. Kept in one place so the two sides cannot drift apart.
 */
export interface AccessClaims {
  sub: string; // user id
  org: string;
  role: string;
  jti: string;
  iat: number;
  /** Issue time in milliseconds: `iat` has one-second resolution, too coarse to compare with a revocation. */
  ims: number;
  exp: number;
}

const ALGORITHM = 'HS256';
/**
 * Who issues access tokens and for whom: a token signed with the same secret for another purpose (another
 * product sharing JWT_SECRET, a future token type) is not an access token to this API.
 */
export const ACCESS_TOKEN_ISSUER = 'messaging-crm/identity';
export const ACCESS_TOKEN_AUDIENCE = 'messaging-crm/api';

/** Build the key object once: verifying with a raw string re-parses the key on every call (5x slower). */
function keyOf(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

export function createTokenSigner(secret: string, ttlSeconds: number) {
  const key = keyOf(secret);
  return (user: { id: string; orgId: string; role: string }): { token: string; jti: string; expiresIn: number } => {
    const jti = randomUUID();
    const token = jwt.sign({ org: user.orgId, role: user.role, ims: Date.now() }, key, {
      algorithm: ALGORITHM,
      subject: user.id,
      jwtid: jti,
      expiresIn: ttlSeconds,
      issuer: ACCESS_TOKEN_ISSUER,
      audience: ACCESS_TOKEN_AUDIENCE,
    });
    return { token, jti, expiresIn: ttlSeconds };
  };
}

/**
 * Returns the claims, or undefined for any invalid, expired or wrongly signed token, and for one without an
 * expiry, our issuer or our audience (jsonwebtoken checks `exp` only when present: a token without one would
 * never expire).
 */
export function createTokenVerifier(secret: string) {
  const key = keyOf(secret);
  return (token: string): AccessClaims | undefined => {
    try {
      const claims = jwt.verify(token, key, {
        algorithms: [ALGORITHM],
        issuer: ACCESS_TOKEN_ISSUER,
        audience: ACCESS_TOKEN_AUDIENCE,
      }) as Partial<AccessClaims>;
      if (typeof claims.exp !== 'number') return undefined;
      if (!claims.sub || !claims.org || !claims.role || !claims.jti || !claims.ims) return undefined;
      return claims as AccessClaims;
    } catch {
      return undefined;
    }
  };
}

/** Redis key names shared by identity and the gateway, under a deployment-wide prefix. */
export function authKeys(prefix: string) {
  return {
    /**
     * Cached API-key → grant (api-key-grant.ts), written by identity alone: its answer, `invalid` for a refused key,
     * or a tombstone over a revoked key so the old key fails at once.
     */
    apiKey: (keyHash: string) => `${prefix}apikey:${keyHash}`,
    /** A logged-out access token, refused until it would have expired. */
    revokedJti: (jti: string) => `${prefix}auth:revoked-jti:${jti}`,
    /** Access tokens issued before this epoch millisecond are refused (user deactivated or role changed). */
    validAfter: (userId: string) => `${prefix}auth:valid-after:${userId}`,
    /**
     * Pub/sub channel (not a key): identity publishes a {@link Revocation} right after writing one of the two
     * keys above, so every gateway instance ends the live sessions it holds at once instead of at the next check.
     */
    revocations: `${prefix}auth:revocations`,
    /**
     * Counter identity increments in the same MULTI as every revocation and API-key rotation: a gateway that keeps
     * revocations in memory re-reads its keys only when this changed, so a missed pub/sub message costs seconds.
     */
    revocationsGeneration: `${prefix}auth:revocations:generation`,
    /** Pub/sub channel: the hash of an API key that stopped working, so gateways drop it from their in-process cache. */
    apiKeyRevocations: `${prefix}auth:api-key-revocations`,
  };
}

/** One token logged out, or every token of a user issued at or before `validAfter` (ms) refused. */
export type Revocation = { jti: string } | { userId: string; validAfter: number };

export function encodeRevocation(r: Revocation): string {
  return JSON.stringify(r);
}

/** The message, or undefined for anything that is not one (the channel is shared, so never trust its shape). */
export function parseRevocation(raw: string): Revocation | undefined {
  try {
    const m = JSON.parse(raw) as Record<string, unknown>;
    if (typeof m?.jti === 'string' && m.jti) return { jti: m.jti };
    if (typeof m?.userId === 'string' && m.userId && typeof m.validAfter === 'number' && Number.isFinite(m.validAfter)) {
      return { userId: m.userId, validAfter: m.validAfter };
    }
  } catch {
    /* not JSON */
  }
  return undefined;
}

export {
  API_KEY_SCOPE_DESCRIPTIONS,
  API_KEY_SCOPES,
  encodeApiKeyGrant,
  isApiKeyScope,
  parseApiKeyGrant,
  type ApiKeyGrant,
  type ApiKeyScope,
} from './api-key-grant';
