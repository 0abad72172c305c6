import { randomUUID } from 'node:crypto';
import { encodeRevocation } from '@crm/auth';
import { AppError, traceFields, type CallContext } from '@crm/grpc-kit';
import { Queryable, withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import { liveHashesOfUser } from '../db/api-keys.repo';
import * as tokens from '../db/tokens.repo';
import * as users from '../db/users.repo';
import type { UserRow } from '../db/users.repo';
import { denySeconds, judgeRefresh, refreshExpiresAt } from './refresh-tokens';
import { newSecretToken, secretTokenHash } from './secret-tokens';

const invalidRefresh = () => new AppError('unauthenticated', 'Refresh token is invalid or expired', { code: 'invalid_refresh_token' });

/** Issue an access token and a new refresh token (a new family unless one is being rotated). */
export async function issueSession(deps: Deps, db: Queryable, user: UserRow, familyId: string = randomUUID()) {
  const access = deps.signAccess({ id: user.id, orgId: user.org_id, role: user.role });
  const { token: refreshToken, hash } = newSecretToken();
  await tokens.insertRefreshToken(db, {
    id: randomUUID(),
    orgId: user.org_id,
    userId: user.id,
    familyId,
    tokenHash: hash,
    expiresAt: refreshExpiresAt(Date.now(), deps.config.REFRESH_TOKEN_TTL_DAYS),
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
export async function refresh(deps: Deps, ctx: CallContext, refreshToken: string) {
  if (!refreshToken) throw invalidRefresh();
  return withTransaction(deps.pool, async (db) => {
    const verdict = judgeRefresh(await tokens.findRefreshForUpdate(db, secretTokenHash(refreshToken)), Date.now());
    if (verdict.kind === 'invalid') throw invalidRefresh();
    if (verdict.kind === 'reused') {
      const live = await tokens.revokeFamily(db, verdict.familyId);
      deps.log.warn({ userId: verdict.userId, ...traceFields(ctx) }, 'refresh token reuse detected; session family revoked');
      return { reused: true as const, live };
    }
    const user = await users.findById(db, verdict.userId);
    if (!user || user.status !== 'active') throw invalidRefresh();
    await tokens.revokeRefresh(db, verdict.tokenId);
    return { reused: false as const, session: await issueSession(deps, db, user, verdict.familyId) };
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
    const row = await tokens.findRefreshForUpdate(deps.pool, secretTokenHash(refreshToken));
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
  const ttl = denySeconds(expiresAt, Date.now());
  if (!jti || ttl <= 0) return;
  await deps.redis
    .multi()
    .set(deps.keys.revokedJti(jti), '1', { expiration: { type: 'EX', value: ttl } })
    .incr(deps.keys.revocationsGeneration)
    .publish(deps.keys.revocations, encodeRevocation({ jti }))
    .exec();
}

/**
 * Access tokens issued before now stop working (deactivation, role change), live sockets included. The cached
 * answers about the user's API keys go too (the gateways drop theirs from memory on the same message), so the next
 * use of such a key asks again: refused for a deactivated user, acting with the new role after a role change.
 */
export async function invalidateAccessTokens(deps: Deps, userId: string): Promise<void> {
  const validAfter = Date.now();
  const keyHashes = await liveHashesOfUser(deps.pool, userId);
  const tx = deps.redis
    .multi()
    .set(deps.keys.validAfter(userId), String(validAfter), { expiration: { type: 'EX', value: deps.config.ACCESS_TOKEN_TTL + 60 } })
    .incr(deps.keys.revocationsGeneration);
  if (keyHashes.length) tx.del(keyHashes.map((h) => deps.keys.apiKey(h)));
  await tx.publish(deps.keys.revocations, encodeRevocation({ userId, validAfter })).exec();
}
