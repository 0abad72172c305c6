import { randomUUID } from 'node:crypto';
import { digestsEqual } from '@crm/crypto';
import { AppError, requireCan, requireUser, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import * as keys from '../db/api-keys.repo';
import { apiKeyHash, apiKeyMask, mayBeApiKey, newApiKey } from './api-key-format';
import { record as recordAudit } from './audit';

export const REVOKED = 'revoked';

export async function info(deps: Deps, ctx: OrgContext) {
  const { orgId } = requireUser(ctx);
  const row = await keys.findLiveKey(deps.pool, orgId);
  return row ? { hasKey: true, keyMask: apiKeyMask(row.last4), createdAt: row.created_at.toISOString() } : { hasKey: false, keyMask: '' };
}

/** A new key replaces the old one at once: the old row is revoked and the gateway's cache entry dropped. */
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
  // A tombstone rather than a delete: a gateway that verified the old key a moment ago caches with
  // SET NX, so it cannot write the old key back after this. Gateways also cache keys in memory: the message
  // makes each drop the old key at once, the generation bump makes a gateway that missed it re-check its cache.
  // node-redis's exec() rejects when a command failed or the transaction was discarded.
  if (oldHash) {
    await deps.redis
      .multi()
      .set(deps.keys.apiKey(oldHash), REVOKED, { expiration: { type: 'EX', value: 3600 } })
      .incr(deps.keys.revocationsGeneration)
      .publish(deps.keys.apiKeyRevocations, oldHash)
      .exec();
  }
  return { apiKey, keyMask: apiKeyMask(last4), createdAt: row.created_at.toISOString() };
}

const badKey = () => new AppError('unauthenticated', 'Missing or invalid API key', { code: 'invalid_api_key' });

export async function verify(deps: Deps, apiKey: string) {
  if (!mayBeApiKey(apiKey)) throw badKey();
  const hash = apiKeyHash(apiKey);
  const row = await keys.findLiveKeyByHash(deps.pool, hash);
  // The index lookup finds the row; the digest comparison itself runs in constant time.
  if (!row || !digestsEqual(row.key_hash, hash)) throw badKey();
  return { orgId: row.org_id, keyId: row.id };
}
