import type { RefreshRow } from '../db/tokens.repo';

// Refresh tokens rotate: each use spends the token and issues the next one in the same family (the chain that
// started at one sign-in). A spent token presented again was stolen or replayed, so its whole family is revoked.

export function refreshExpiresAt(now: number, ttlDays: number): Date {
  return new Date(now + ttlDays * 86_400_000);
}

export type RefreshVerdict =
  { kind: 'invalid' } | { kind: 'reused'; familyId: string; userId: string } | { kind: 'rotate'; tokenId: string; familyId: string; userId: string };

/**
 * What presenting this stored token means. A spent token is a replay however old it is: the family is revoked even
 * when the token has expired since. An unknown token, or an unspent one past its expiry, is only invalid; the
 * expiry instant itself still counts. Whether its user may still sign in is the caller's to check.
 */
export function judgeRefresh(
  row: Pick<RefreshRow, 'id' | 'family_id' | 'user_id' | 'expires_at' | 'revoked_at'> | undefined,
  now: number,
): RefreshVerdict {
  if (!row) return { kind: 'invalid' };
  if (row.revoked_at) return { kind: 'reused', familyId: row.family_id, userId: row.user_id };
  if (row.expires_at.getTime() < now) return { kind: 'invalid' };
  return { kind: 'rotate', tokenId: row.id, familyId: row.family_id, userId: row.user_id };
}

/**
 * How long a revoked access token stays deny-listed: until it would have expired anyway (`expiresAt` in seconds,
 * `now` in milliseconds), rounded up so it never lives a fraction of a second past its entry. Zero or less: it has
 * expired already and needs no entry.
 */
export function denySeconds(expiresAt: number, now: number): number {
  return Math.ceil(expiresAt - now / 1000);
}
