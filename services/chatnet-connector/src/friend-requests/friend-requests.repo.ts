import type { Queryable } from '@crm/db';

export type FriendRequestStatus = 'sent' | 'accepted';

export interface FriendRequestRow {
  id: string;
  org_id: string;
  account_id: string;
  chatnet_uid: string;
  message: string;
  status: FriendRequestStatus;
  created_at: Date;
  accepted_at: Date | null;
}

/**
 * Record a request sent (again): a user asked once more keeps one row, its message and time refreshed, and an
 * accepted request stays accepted (the network answers a request to a friend as already done).
 */
export async function upsertSent(
  db: Queryable,
  r: { id: string; orgId: string; accountId: string; chatnetUid: string; message: string },
): Promise<FriendRequestRow> {
  const { rows } = await db.query<FriendRequestRow>(
    `INSERT INTO friend_requests (id, org_id, account_id, chatnet_uid, message) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (org_id, account_id, chatnet_uid) DO UPDATE
       SET message = EXCLUDED.message, created_at = CASE WHEN friend_requests.status = 'sent' THEN now() ELSE friend_requests.created_at END
     RETURNING *`,
    [r.id, r.orgId, r.accountId, r.chatnetUid, r.message],
  );
  return rows[0];
}

/** Mark the account's request to the user accepted; the row when it changed now (undefined: none pending). */
export async function markAccepted(db: Queryable, orgId: string, accountId: string, chatnetUid: string): Promise<FriendRequestRow | undefined> {
  const { rows } = await db.query<FriendRequestRow>(
    `UPDATE friend_requests SET status = 'accepted', accepted_at = now()
      WHERE org_id = $1 AND account_id = $2 AND chatnet_uid = $3 AND status = 'sent' RETURNING *`,
    [orgId, accountId, chatnetUid],
  );
  return rows[0];
}

export async function find(db: Queryable, orgId: string, accountId: string, chatnetUid: string): Promise<FriendRequestRow | undefined> {
  const { rows } = await db.query<FriendRequestRow>(`SELECT * FROM friend_requests WHERE org_id = $1 AND account_id = $2 AND chatnet_uid = $3`, [
    orgId,
    accountId,
    chatnetUid,
  ]);
  return rows[0];
}

/** One page of the account's requests, newest first, optionally of one status. */
export async function list(
  db: Queryable,
  orgId: string,
  accountId: string,
  status: FriendRequestStatus | undefined,
  page: number,
  limit: number,
): Promise<{ rows: FriendRequestRow[]; total: number }> {
  const where = `org_id = $1 AND account_id = $2 AND ($3::text IS NULL OR status = $3)`;
  const params = [orgId, accountId, status ?? null];
  const [{ rows }, count] = await Promise.all([
    db.query<FriendRequestRow>(`SELECT * FROM friend_requests WHERE ${where} ORDER BY created_at DESC, id LIMIT $4 OFFSET $5`, [
      ...params,
      limit,
      (page - 1) * limit,
    ]),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM friend_requests WHERE ${where}`, params),
  ]);
  return { rows, total: Number(count.rows[0].n) };
}
