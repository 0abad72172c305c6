import type { Queryable } from '@crm/db';

export interface SendRequestRow {
  fingerprint: string;
  status: 'pending' | 'sent';
  message_id: string | null;
  created_at: Date;
}

/** Claim a key for a new send; false when the key is already known (the caller inspects it). */
export async function claim(db: Queryable, orgId: string, key: string, fingerprint: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO send_requests (org_id, idempotency_key, fingerprint, status) VALUES ($1, $2, $3, 'pending') ON CONFLICT DO NOTHING`,
    [orgId, key, fingerprint],
  );
  return rowCount === 1;
}

export async function find(db: Queryable, orgId: string, key: string): Promise<SendRequestRow | undefined> {
  const { rows } = await db.query<SendRequestRow>(
    'SELECT fingerprint, status, message_id, created_at FROM send_requests WHERE org_id = $1 AND idempotency_key = $2',
    [orgId, key],
  );
  return rows[0];
}

/**
 * Take over a stale key: a pending send older than `pendingMs` (its process died mid-send) or any row
 * older than the key lifetime. The update moves created_at to now, so of two callers only one wins.
 */
export async function takeOver(
  db: Queryable,
  orgId: string,
  key: string,
  fingerprint: string,
  pendingMs: number,
  ttlHours: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE send_requests SET created_at = now(), status = 'pending', message_id = NULL, fingerprint = $3
     WHERE org_id = $1 AND idempotency_key = $2
       AND ((status = 'pending' AND created_at < now() - $4 * interval '1 millisecond') OR created_at < now() - $5 * interval '1 hour')`,
    [orgId, key, fingerprint, pendingMs, ttlHours],
  );
  return rowCount === 1;
}

export async function markSent(db: Queryable, orgId: string, key: string, messageId: string): Promise<void> {
  await db.query(`UPDATE send_requests SET status = 'sent', message_id = $3 WHERE org_id = $1 AND idempotency_key = $2`, [orgId, key, messageId]);
}

/** The send certainly did not happen: forget the key so a retry can send. */
export async function release(db: Queryable, orgId: string, key: string): Promise<void> {
  await db.query(`DELETE FROM send_requests WHERE org_id = $1 AND idempotency_key = $2 AND status = 'pending'`, [orgId, key]);
}

export async function prune(db: Queryable, olderThanHours: number): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM send_requests WHERE created_at < now() - $1 * interval '1 hour'`, [olderThanHours]);
  return rowCount ?? 0;
}
