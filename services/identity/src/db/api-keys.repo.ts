import { Queryable } from '@crm/db';

export interface ApiKeyRow {
  id: string;
  org_id: string;
  key_hash: string;
  last4: string;
  created_at: Date;
}

export async function findLiveKey(db: Queryable, orgId: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>('SELECT * FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL', [orgId]);
  return rows[0];
}

export async function findLiveKeyByHash(db: Queryable, keyHash: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>({
    name: 'api_key_by_hash',
    text: 'SELECT * FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    values: [keyHash],
  });
  return rows[0];
}

/**
 * Serialize key generation within one organization: two generations at once would both find no live key after
 * the other's revoke and then collide on the one-live-key index (the second would be an internal error).
 */
export async function lockOrgKeys(db: Queryable, orgId: string): Promise<void> {
  await db.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [orgId]);
}

/** Revoke the org's live key (if any) and return its hash so caches can drop it. */
export async function revokeLiveKey(db: Queryable, orgId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ key_hash: string }>(
    'UPDATE api_keys SET revoked_at = now() WHERE org_id = $1 AND revoked_at IS NULL RETURNING key_hash',
    [orgId],
  );
  return rows[0]?.key_hash;
}

export async function insertKey(db: Queryable, k: { id: string; orgId: string; keyHash: string; last4: string }): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>('INSERT INTO api_keys (id, org_id, key_hash, last4) VALUES ($1, $2, $3, $4) RETURNING *', [
    k.id,
    k.orgId,
    k.keyHash,
    k.last4,
  ]);
  return rows[0];
}
