import { randomBytes } from 'node:crypto';
import { sha256Hex } from '@crm/crypto';

/**
 * A bearer secret that signs someone in (a refresh token, an invitation link's token): 256 random bits as base64url,
 * so it can travel in a URL. Only its SHA-256 is stored: a copy of the database holds nothing that signs in, and the
 * token is found by its hash. The hash needs no salt or slow function: the token is random, not a password.
 */
export function newSecretToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: secretTokenHash(token) };
}

/** The stored form of a token a caller presents. */
export function secretTokenHash(token: string): string {
  return sha256Hex(token);
}
