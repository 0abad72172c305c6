import { randomBytes, randomUUID } from 'node:crypto';
import { encodeRevocation } from '@crm/auth';
import { sha256Hex } from '@crm/crypto';
import { AppError } from '@crm/grpc-kit';
import { Queryable, withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import * as tokens from '../db/tokens.repo';
import * as users from '../db/users.repo';
import type { UserRow } from '../db/users.repo';

const invalidRefresh = () => new AppError('unauthenticated', 'Refresh token is invalid or expired', { code: 'invalid_refresh_token' });

/** Issue an access token and a new refresh token (a new family unless one is being rotated). */
export async function issueSession(deps: Deps, db: Queryable, user: UserRow, familyId: string = randomUUID()) {
  const access = deps.signAccess({ id: user.id, orgId: user.org_id, role: user.role });
  const refreshToken = randomBytes(32).toString('base64url');
  await tokens.insertRefreshToken(db, {
    id: randomUUID(),
    orgId: user.org_id,
    userId: user.id,
    familyId,
    tokenHash: sha256Hex(refreshToken),
    expiresAt: new Date(Date.now() + deps.config.REFRESH_TOKEN_TTL_DAYS * 86_400_000),
    accessJti: access.jti,
    accessExpiresAt: new Date(Date.now() + access.expiresIn * 1000),
  });
  return {
    token: access.token,
    refreshToken,
    expiresIn: access.expiresIn,
    user: { id: user.id, email: user.email, fullName: user.full_name, role: user.role, orgId: user.org_id },
  };
}

/**
 * Rotate a refresh token: the presented one is spent and a new one issued in the same family. A spent
 * token presented again means it was stolen or replayed, so the whole family is revoked: its refresh tokens,
 * and the access tokens issued with them (deny-listed and their live sockets ended), whoever holds them.
 */
export async function refresh(deps: Deps, refreshToken: string) {
  if (!refreshToken) throw invalidRefresh();
  return withTransaction(deps.pool, async (db) => {
    const row = await tokens.findRefreshForUpdate(db, sha256Hex(refreshToken));
    if (!row) throw invalidRefresh();
    if (row.revoked_at) {
      const live = await tokens.revokeFamily(db, row.family_id);
      deps.log.warn({ userId: row.user_id }, 'refresh token reuse detected; session family revoked');
      return { reused: true as const, live };
    }
    if (row.expires_at.getTime() < Date.now()) throw invalidRefresh();
    const user = await users.findById(db, row.user_id);
    if (!user || user.status !== 'active') throw invalidRefresh();
    await tokens.revokeRefresh(db, row.id);
    return { reused: false as const, session: await issueSession(deps, db, user, row.family_id) };
  }).then(async (r) => {
    // The revocation must commit even though the caller gets an error, so throw after the transaction.
    if (r.reused) {
      for (const t of r.live) await denyAccessToken(deps, t.jti, t.expiresAt.getTime() / 1000);
      throw invalidRefresh();
    }
    return r.session;
  });
}

/**
 * Spend the refresh token and refuse the access token until it would have expired anyway. The deny-list entry, the
 * generation bump (gateways re-read revocations when it changes) and the revocation message go in one MULTI: gateways end that token's live sockets at once (the entry alone is only
 * read at the next request or handshake).
 */
export async function logout(deps: Deps, refreshToken: string, jti: string, accessExpiresAt: number) {
  if (refreshToken) {
    const row = await tokens.findRefreshForUpdate(deps.pool, sha256Hex(refreshToken));
    if (row) await tokens.revokeRefresh(deps.pool, row.id);
  }
  await denyAccessToken(deps, jti, accessExpiresAt);
  return { ok: true, message: 'Signed out' };
}

/**
 * Refuse one access token until it would have expired (`expiresAt` in seconds), and end its live sockets. A revocation
 * that was not written must fail the call: node-redis's EXEC rejects when any command in it failed.
 */
async function denyAccessToken(deps: Deps, jti: string, expiresAt: number): Promise<void> {
  const ttl = Math.ceil(expiresAt - Date.now() / 1000);
  if (!jti || ttl <= 0) return;
  await deps.redis
    .multi()
    .set(deps.keys.revokedJti(jti), '1', { expiration: { type: 'EX', value: ttl } })
    .incr(deps.keys.revocationsGeneration)
    .publish(deps.keys.revocations, encodeRevocation({ jti }))
    .exec();
}

/** Access tokens issued before now stop working (deactivation, role change), live sockets included. */
export async function invalidateAccessTokens(deps: Deps, userId: string): Promise<void> {
  const validAfter = Date.now();
  await deps.redis
    .multi()
    .set(deps.keys.validAfter(userId), String(validAfter), { expiration: { type: 'EX', value: deps.config.ACCESS_TOKEN_TTL + 60 } })
    .incr(deps.keys.revocationsGeneration)
    .publish(deps.keys.revocations, encodeRevocation({ userId, validAfter }))
    .exec();
}
