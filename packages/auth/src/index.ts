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
    });
    return { token, jti, expiresIn: ttlSeconds };
  };
}

/** Returns the claims, or undefined for any invalid, expired or wrongly signed token. */
export function createTokenVerifier(secret: string) {
  const key = keyOf(secret);
  return (token: string): AccessClaims | undefined => {
    try {
      const claims = jwt.verify(token, key, { algorithms: [ALGORITHM] }) as Partial<AccessClaims>;
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
    /** Cached API-key → org lookup; identity deletes it when the key is rotated so the old key fails at once. */
    apiKey: (keyHash: string) => `${prefix}apikey:${keyHash}`,
    /** A logged-out access token, refused until it would have expired. */
    revokedJti: (jti: string) => `${prefix}auth:revoked-jti:${jti}`,
    /** Access tokens issued before this epoch millisecond are refused (user deactivated or role changed). */
    validAfter: (userId: string) => `${prefix}auth:valid-after:${userId}`,
  };
}
