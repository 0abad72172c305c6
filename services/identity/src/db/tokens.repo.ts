import { Queryable } from '@crm/db';

export interface RefreshRow {
  id: string;
  org_id: string;
  user_id: string;
  family_id: string;
  expires_at: Date;
  revoked_at: Date | null;
}

export async function insertRefreshToken(
  db: Queryable,
  t: { id: string; orgId: string; userId: string; familyId: string; tokenHash: string; expiresAt: Date; accessJti: string; accessExpiresAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO refresh_tokens (id, org_id, user_id, family_id, token_hash, expires_at, access_jti, access_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [t.id, t.orgId, t.userId, t.familyId, t.tokenHash, t.expiresAt, t.accessJti, t.accessExpiresAt],
  );
}

/** Locks the row so two concurrent refreshes with the same token cannot both succeed. */
export async function findRefreshForUpdate(db: Queryable, tokenHash: string): Promise<RefreshRow | undefined> {
  const { rows } = await db.query<RefreshRow>('SELECT * FROM refresh_tokens WHERE token_hash = $1 FOR UPDATE', [tokenHash]);
  return rows[0];
}

export async function revokeRefresh(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE refresh_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
}

/** Revoke every refresh token of a family; returns the family's access tokens that have not expired yet. */
export async function revokeFamily(db: Queryable, familyId: string): Promise<{ jti: string; expiresAt: Date }[]> {
  await db.query('UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [familyId]);
  const { rows } = await db.query<{ jti: string; expires_at: Date }>(
    'SELECT access_jti AS jti, access_expires_at AS expires_at FROM refresh_tokens WHERE family_id = $1 AND access_expires_at > now()',
    [familyId],
  );
  return rows.map((r) => ({ jti: r.jti, expiresAt: r.expires_at }));
}

export async function revokeAllForUser(db: Queryable, userId: string): Promise<void> {
  await db.query('UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
}

export interface InvitationRow {
  id: string;
  org_id: string;
  user_id: string;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertInvitation(
  db: Queryable,
  i: { id: string; orgId: string; userId: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db.query('INSERT INTO invitations (id, org_id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4, $5)', [
    i.id,
    i.orgId,
    i.userId,
    i.tokenHash,
    i.expiresAt,
  ]);
}

export async function findInvitationForUpdate(db: Queryable, tokenHash: string): Promise<InvitationRow | undefined> {
  const { rows } = await db.query<InvitationRow>('SELECT * FROM invitations WHERE token_hash = $1 FOR UPDATE', [tokenHash]);
  return rows[0];
}

export async function markInvitationUsed(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE invitations SET used_at = now() WHERE id = $1', [id]);
}
