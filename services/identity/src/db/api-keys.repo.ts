import { Queryable } from '@crm/db';

export interface ApiKeyRow {
  id: string;
  org_id: string;
  key_hash: string;
  last4: string;
  created_at: Date;
  name: string | null;
  scopes: string[] | null;
  user_id: string | null;
  created_by: string | null;
  expires_at: Date | null;
  last_used_at: Date | null;
}

export async function findLiveKey(db: Queryable, orgId: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>('SELECT * FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL AND name IS NULL', [orgId]);
  return rows[0];
}

/** A live key with, for one bound to a user, that user's role and status (what the key acts as). */
export interface LiveKeyRow extends ApiKeyRow {
  user_role: string | null;
  user_status: string | null;
}

export async function findLiveKeyByHash(db: Queryable, keyHash: string): Promise<LiveKeyRow | undefined> {
  const { rows } = await db.query<LiveKeyRow>({
    name: 'api_key_by_hash_with_user',
    text: `SELECT k.*, u.role AS user_role, u.status AS user_status
             FROM api_keys k LEFT JOIN users u ON u.id = k.user_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
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

/** Revoke the org's own live key (if any) and return its hash so caches can drop it. */
export async function revokeLiveKey(db: Queryable, orgId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ key_hash: string }>(
    'UPDATE api_keys SET revoked_at = now() WHERE org_id = $1 AND revoked_at IS NULL AND name IS NULL RETURNING key_hash',
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

export async function insertNamedKey(
  db: Queryable,
  k: {
    id: string;
    orgId: string;
    keyHash: string;
    last4: string;
    name: string;
    scopes: string[];
    userId: string | null;
    createdBy: string | null;
    expiresAt: string | null;
  },
): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, org_id, key_hash, last4, name, scopes, user_id, created_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [k.id, k.orgId, k.keyHash, k.last4, k.name, k.scopes, k.userId, k.createdBy, k.expiresAt],
  );
  return rows[0];
}

/** Live named keys of the org (or only those bound to `userId`), newest first, with the total. */
export async function listNamedKeys(
  db: Queryable,
  orgId: string,
  f: { userId?: string; page: number; limit: number },
): Promise<{ rows: ApiKeyRow[]; total: number }> {
  const where = 'org_id = $1 AND name IS NOT NULL AND revoked_at IS NULL AND ($2::uuid IS NULL OR user_id = $2)';
  const params = [orgId, f.userId ?? null];
  const [list, count] = await Promise.all([
    db.query<ApiKeyRow>(`SELECT * FROM api_keys WHERE ${where} ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`, [
      ...params,
      f.limit,
      (f.page - 1) * f.limit,
    ]),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM api_keys WHERE ${where}`, params),
  ]);
  return { rows: list.rows, total: Number(count.rows[0].n) };
}

export async function findLiveNamedKey(db: Queryable, orgId: string, id: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>('SELECT * FROM api_keys WHERE org_id = $1 AND id = $2 AND name IS NOT NULL AND revoked_at IS NULL', [
    orgId,
    id,
  ]);
  return rows[0];
}

/** Revoke one named key; its hash (for the caches), or undefined when it was not live. */
export async function revokeNamedKey(db: Queryable, orgId: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ key_hash: string }>(
    'UPDATE api_keys SET revoked_at = now() WHERE org_id = $1 AND id = $2 AND name IS NOT NULL AND revoked_at IS NULL RETURNING key_hash',
    [orgId, id],
  );
  return rows[0]?.key_hash;
}

/** Record a use: written only when the last one is a minute old or more, however often the gateways report. */
export async function touchLastUsed(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query({
    name: 'api_key_touch_last_used',
    text: `UPDATE api_keys SET last_used_at = now()
            WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at <= now() - interval '1 minute')`,
    values: [orgId, id],
  });
}

/** Hashes of the live keys bound to a user: their cache entries go when the user's access changes. */
export async function liveHashesOfUser(db: Queryable, userId: string): Promise<string[]> {
  const { rows } = await db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
  return rows.map((r) => r.key_hash);
}

/** Whether agents may create keys bound to themselves (`lock`: inside a transaction that is about to change it). */
export async function agentKeysAllowed(db: Queryable, orgId: string, lock = false): Promise<boolean> {
  const { rows } = await db.query<{ agent_api_keys: boolean }>(`SELECT agent_api_keys FROM organizations WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [
    orgId,
  ]);
  return rows[0]?.agent_api_keys ?? false;
}

export async function setAgentKeysAllowed(db: Queryable, orgId: string, on: boolean): Promise<void> {
  await db.query('UPDATE organizations SET agent_api_keys = $2 WHERE id = $1', [orgId, on]);
}
