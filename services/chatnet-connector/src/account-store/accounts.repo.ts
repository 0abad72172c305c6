import { Queryable, type PoolClient } from '@crm/db';

export type AccountStatus = 'qr_pending' | 'connected' | 'disconnected';

export interface AccountRow {
  id: string;
  org_id: string;
  display_name: string;
  chatnet_uid: string | null;
  avatar_url: string;
  phone: string;
  status: AccountStatus;
  owner_user_id: string | null;
  proxy_enc: string | null;
  session_enc: string | null;
  keep_alive: boolean;
  disconnect_reason: string | null;
  last_connected_at: Date | null;
  created_at: Date;
}

const COLUMN_NAMES = [
  'id',
  'org_id',
  'display_name',
  'chatnet_uid',
  'avatar_url',
  'phone',
  'status',
  'owner_user_id',
  'proxy_enc',
  'session_enc',
  'keep_alive',
  'disconnect_reason',
  'last_connected_at',
  'created_at',
];
const COLUMNS = COLUMN_NAMES.join(', ');

/**
 * A new account, unless the org already holds `max` (not deleted): undefined then. The org's transaction-level
 * advisory lock makes the count and the insert one step, so concurrent creates cannot pass the limit together.
 */
export async function insertAccount(
  db: PoolClient,
  a: { id: string; orgId: string; displayName: string; ownerUserId: string | null; proxyEnc: string | null },
  max: number,
): Promise<AccountRow | undefined> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('chatnet_accounts:' || $1, 0))`, [a.orgId]);
  const { rows } = await db.query<AccountRow>(
    `INSERT INTO chatnet_accounts (id, org_id, display_name, owner_user_id, proxy_enc)
     SELECT $1, $2, $3, $4, $5
      WHERE (SELECT count(*) FROM chatnet_accounts WHERE org_id = $2 AND deleted_at IS NULL) < $6
     RETURNING ${COLUMNS}`,
    [a.id, a.orgId, a.displayName, a.ownerUserId, a.proxyEnc, max],
  );
  return rows[0];
}

export async function getAccount(db: Queryable, orgId: string, id: string): Promise<AccountRow | undefined> {
  const { rows } = await db.query<AccountRow>({
    name: 'chatnet_account_get',
    text: `SELECT ${COLUMNS} FROM chatnet_accounts WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
    values: [orgId, id],
  });
  return rows[0];
}

/** Row lock for a state change (login, reconnect, delete) so two requests do not interleave. */
export async function lockAccount(db: Queryable, orgId: string, id: string): Promise<AccountRow | undefined> {
  const { rows } = await db.query<AccountRow>(
    `SELECT ${COLUMNS} FROM chatnet_accounts WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`,
    [orgId, id],
  );
  return rows[0];
}

export async function listAccounts(
  db: Queryable,
  orgId: string,
  f: { status?: string; ownerUserId?: string; search?: string },
): Promise<AccountRow[]> {
  const where = ['org_id = $1', 'deleted_at IS NULL'];
  const values: unknown[] = [orgId];
  if (f.status) {
    values.push(f.status);
    where.push(`status = $${values.length}`);
  }
  if (f.ownerUserId) {
    values.push(f.ownerUserId);
    where.push(`owner_user_id = $${values.length}`);
  }
  if (f.search) {
    values.push(`%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where.push(`(display_name ILIKE $${values.length} OR phone ILIKE $${values.length})`);
  }
  const { rows } = await db.query<AccountRow>(`SELECT ${COLUMNS} FROM chatnet_accounts WHERE ${where.join(' AND ')} ORDER BY created_at, id`, values);
  return rows;
}

/** Any org: the pool acts for every organization, never on behalf of a caller. */
export async function getAccountById(db: Queryable, id: string): Promise<AccountRow | undefined> {
  const { rows } = await db.query<AccountRow>(`SELECT ${COLUMNS} FROM chatnet_accounts WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0];
}

/** The org's connected accounts, most recently connected first (whom a phone lookup may ask through). */
export async function connectedAccountIds(db: Queryable, orgId: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM chatnet_accounts WHERE org_id = $1 AND status = 'connected' AND deleted_at IS NULL
      ORDER BY last_connected_at DESC NULLS LAST, id LIMIT $2`,
    [orgId, limit],
  );
  return rows.map((r) => r.id);
}

/** The pool's scan: every account that should have a live session. */
export async function accountsToKeepAlive(db: Queryable): Promise<Array<{ id: string; org_id: string }>> {
  const { rows } = await db.query<{ id: string; org_id: string }>({
    name: 'chatnet_accounts_keep_alive',
    text: 'SELECT id, org_id FROM chatnet_accounts WHERE keep_alive AND deleted_at IS NULL',
  });
  return rows;
}

/** Of the given held accounts, those that should still be held (live or logging in). */
export async function stillWanted(db: Queryable, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM chatnet_accounts WHERE id = ANY($1::uuid[]) AND deleted_at IS NULL AND (keep_alive OR status = 'qr_pending')`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

export async function markLoginStarted(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE chatnet_accounts SET status = 'qr_pending', keep_alive = false, updated_at = now() WHERE id = $1 AND deleted_at IS NULL`, [
    id,
  ]);
}

/** A login or restore succeeded. Returns undefined when the account was deleted meanwhile. */
export async function markConnected(
  db: Queryable,
  id: string,
  p: { chatnetUid: string; avatarUrl?: string; phone?: string; sessionEnc?: string },
): Promise<AccountRow | undefined> {
  const { rows } = await db.query<AccountRow>(
    `UPDATE chatnet_accounts SET status = 'connected', keep_alive = true, disconnect_reason = NULL, chatnet_uid = $2,
       avatar_url = COALESCE($3, avatar_url), phone = COALESCE($4, phone), session_enc = COALESCE($5, session_enc),
       last_connected_at = now(), updated_at = now()
     WHERE id = $1 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
    [id, p.chatnetUid, p.avatarUrl || null, p.phone || null, p.sessionEnc ?? null],
  );
  return rows[0];
}

/** The live connection ended; `keepAlive` false when the session can no longer be restored. */
export async function markDisconnected(
  db: Queryable,
  id: string,
  reason: string,
  keepAlive: boolean,
): Promise<{ row: AccountRow; wasConnected: boolean } | undefined> {
  const { rows } = await db.query<AccountRow & { was_connected: boolean }>(
    `UPDATE chatnet_accounts a SET status = 'disconnected', disconnect_reason = $2, keep_alive = $3 AND a.keep_alive, updated_at = now()
       FROM (SELECT id, status = 'connected' AS was_connected FROM chatnet_accounts WHERE id = $1 FOR UPDATE) old
     WHERE a.id = old.id AND a.deleted_at IS NULL RETURNING ${COLUMN_NAMES.map((c) => `a.${c}`).join(', ')}, old.was_connected`,
    [id, reason, keepAlive],
  );
  return rows[0] ? { row: rows[0], wasConnected: rows[0].was_connected } : undefined;
}

/** A QR login ended without a scan: back to where the account was (disconnected when it has a session). */
export async function markLoginFailed(db: Queryable, id: string, reason: string): Promise<AccountRow | undefined> {
  const { rows } = await db.query<AccountRow>(
    `UPDATE chatnet_accounts SET status = CASE WHEN session_enc IS NULL THEN 'qr_pending' ELSE 'disconnected' END,
       disconnect_reason = $2, updated_at = now()
     WHERE id = $1 AND deleted_at IS NULL AND status = 'qr_pending' RETURNING ${COLUMNS}`,
    [id, reason],
  );
  return rows[0];
}

export async function setProxy(db: Queryable, orgId: string, id: string, proxyEnc: string | null): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE chatnet_accounts SET proxy_enc = $3, updated_at = now() WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL',
    [orgId, id, proxyEnc],
  );
  return rowCount === 1;
}

export async function softDelete(db: Queryable, orgId: string, id: string, purge: boolean): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE chatnet_accounts SET deleted_at = now(), keep_alive = false, updated_at = now(),
       session_enc = CASE WHEN $3 THEN NULL ELSE session_enc END,
       chatnet_uid = CASE WHEN $3 THEN NULL ELSE chatnet_uid END
     WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
    [orgId, id, purge],
  );
  return rowCount === 1;
}

/** Is another live account of the org already on this network identity? */
export async function uidTakenByOther(db: Queryable, orgId: string, id: string, chatnetUid: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM chatnet_accounts WHERE org_id = $1 AND chatnet_uid = $2 AND id <> $3 AND deleted_at IS NULL', [
    orgId,
    chatnetUid,
    id,
  ]);
  return (rowCount ?? 0) > 0;
}

/** How many accounts should be live (the total the instances share out). */
export async function countToKeepAlive(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>({
    name: 'chatnet_accounts_keep_alive_count',
    text: 'SELECT count(*)::int AS n FROM chatnet_accounts WHERE keep_alive AND deleted_at IS NULL',
  });
  return rows[0].n;
}
