import { randomUUID } from 'node:crypto';
import { API_KEY_SCOPES, encodeApiKeyGrant, type ApiKeyGrant, type ApiKeyScope } from '@crm/auth';
import { digestsEqual } from '@crm/crypto';
import { AppError, requireCan, requireUser, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import * as keys from '../db/api-keys.repo';
import { apiKeyHash, apiKeyMask, mayBeApiKey, newApiKey } from './api-key-format';
import { record as recordAudit } from './audit';

/** Written over a revoked key's Redis entry (a tombstone): no answer about it can be cached again for an hour. */
export const REVOKED = 'revoked';
/** Written for a key identity refused (the negative cache the gateways share). */
export const INVALID = 'invalid';

export async function info(deps: Deps, ctx: OrgContext) {
  const { orgId } = requireUser(ctx);
  const row = await keys.findLiveKey(deps.pool, orgId);
  return row ? { hasKey: true, keyMask: apiKeyMask(row.last4), createdAt: row.created_at.toISOString() } : { hasKey: false, keyMask: '' };
}

/**
 * A key stopped working: a tombstone rather than a delete (an answer about it being cached at this moment uses
 * SET NX, so it cannot write the key back after this). Gateways also cache keys in memory: the message makes each
 * drop the key at once, the generation bump makes a gateway that missed it re-check its cache. node-redis's exec()
 * rejects when a command failed or the transaction was discarded.
 */
export async function announceRevoked(deps: Deps, hash: string): Promise<void> {
  await deps.redis
    .multi()
    .set(deps.keys.apiKey(hash), REVOKED, { expiration: { type: 'EX', value: 3600 } })
    .incr(deps.keys.revocationsGeneration)
    .publish(deps.keys.apiKeyRevocations, hash)
    .exec();
}

/** A new key replaces the old one at once: the old row is revoked and the gateways' cache entries dropped. */
export async function generate(deps: Deps, ctx: OrgContext) {
  requireCan(ctx, 'settings:edit');
  const { apiKey, keyHash, last4 } = newApiKey();
  const { row, oldHash } = await withTransaction(deps.pool, async (db) => {
    await keys.lockOrgKeys(db, ctx.orgId);
    const oldHash = await keys.revokeLiveKey(db, ctx.orgId);
    const row = await keys.insertKey(db, { id: randomUUID(), orgId: ctx.orgId, keyHash, last4 });
    // The mask only: the key itself is shown once to its creator and stored nowhere else.
    await recordAudit(db, ctx, {
      action: 'api_key.generated',
      resourceType: 'api_key',
      resourceId: row.id,
      details: { keyMask: apiKeyMask(last4), replacedPrevious: oldHash !== undefined },
    });
    return { row, oldHash };
  });
  if (oldHash) await announceRevoked(deps, oldHash);
  return { apiKey, keyMask: apiKeyMask(last4), createdAt: row.created_at.toISOString() };
}

const badKey = (message = 'Missing or invalid API key', code = 'invalid_api_key') => new AppError('unauthenticated', message, { code });

/** The grant of a live row, or the reason it grants nothing. */
function grantOf(row: keys.LiveKeyRow, now: number): ApiKeyGrant | AppError {
  const expiresAt = row.expires_at?.getTime() ?? 0;
  if (expiresAt && expiresAt <= now) return badKey('API key has expired', 'api_key_expired');
  if (row.user_id && row.user_status !== 'active') return badKey();
  return {
    orgId: row.org_id,
    keyId: row.id,
    userId: row.user_id ?? '',
    // A key with no user acts with an agent's rights over the whole organization, as the org key always did.
    role: row.user_role ?? 'agent',
    // The organization's own key (no name) holds every scope.
    scopes: row.scopes ? (row.scopes as ApiKeyScope[]) : [...API_KEY_SCOPES],
    expiresAt,
    issuedAt: now,
  };
}

/**
 * The gateway's question: what may this key do? The answer is also cached in Redis for every gateway, by identity
 * alone (deploy/redis/acl.sh lets the gateway only read those entries, so no other service can mint one): SET NX,
 * so a tombstone written by a revocation since the row was read wins, and this answer is then refused.
 */
export async function verify(deps: Deps, apiKey: string) {
  const hash = apiKeyHash(apiKey);
  const row = mayBeApiKey(apiKey) ? await keys.findLiveKeyByHash(deps.pool, hash) : undefined;
  // The index lookup finds the row; the digest comparison itself runs in constant time.
  const grant = row && digestsEqual(row.key_hash, hash) ? grantOf(row, Date.now()) : badKey();
  if (grant instanceof AppError) {
    if (deps.config.API_KEY_INVALID_CACHE_SECONDS > 0 && mayBeApiKey(apiKey)) {
      await deps.redis.set(deps.keys.apiKey(hash), INVALID, {
        expiration: { type: 'EX', value: deps.config.API_KEY_INVALID_CACHE_SECONDS },
        condition: 'NX',
      });
    }
    throw grant;
  }
  const value = encodeApiKeyGrant(grant);
  // Never cached past the key's own expiry.
  const seconds = Math.min(deps.config.API_KEY_CACHE_SECONDS, grant.expiresAt ? Math.floor((grant.expiresAt - grant.issuedAt) / 1000) : Infinity);
  if (seconds > 0) {
    const previous = await deps.redis.set(deps.keys.apiKey(hash), value, { expiration: { type: 'EX', value: seconds }, condition: 'NX', GET: true });
    if (previous === REVOKED) throw badKey();
  }
  return { orgId: grant.orgId, keyId: grant.keyId, grantJson: value };
}
