import type { Queryable } from '@crm/db';

/** Every write that adds a reply timer or moves one earlier NOTIFYs here in its transaction: sleeping instances wake. */
export const REPLY_TIMEOUT_CHANNEL = 'messaging_reply_timeout_due';

export interface ReplyTimeoutRow {
  conversation_id: string;
  org_id: string;
  assignee_id: string;
  inbound_at: Date;
  due_at: Date;
}

const COLUMNS = 'conversation_id, org_id, assignee_id, inbound_at, due_at';

const notify = (db: Queryable) => db.query(`SELECT pg_notify('${REPLY_TIMEOUT_CHANNEL}', '')`);

/**
 * Inbound messages (one batch): each conversation's timer starts at its first unanswered inbound message and is not
 * pushed back by the next ones, except when the conversation changed hands since (the new assignee's window starts).
 */
export async function startMany(
  db: Queryable,
  rows: Array<{ conversationId: string; orgId: string; assigneeId: string; inboundAt: Date; dueAt: Date }>,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO reply_timeouts AS r (conversation_id, org_id, assignee_id, inbound_at, due_at)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::timestamptz[])
     ON CONFLICT (conversation_id) DO UPDATE SET assignee_id = EXCLUDED.assignee_id, inbound_at = EXCLUDED.inbound_at,
       due_at = EXCLUDED.due_at, lease_until = NULL
     WHERE r.assignee_id <> EXCLUDED.assignee_id`,
    [
      rows.map((r) => r.conversationId),
      rows.map((r) => r.orgId),
      rows.map((r) => r.assigneeId),
      rows.map((r) => r.inboundAt),
      rows.map((r) => r.dueAt),
    ],
  );
  await notify(db);
}

/**
 * Our replies and closed conversations (one batch): the timers they answer go. A reply only clears a timer started
 * before it (a reply stored earlier but consumed after a newer inbound message answers nothing new).
 */
export async function clearMany(db: Queryable, answered: Array<{ conversationId: string; at: Date }>): Promise<void> {
  if (answered.length === 0) return;
  await db.query(
    `DELETE FROM reply_timeouts r USING unnest($1::uuid[], $2::timestamptz[]) AS a(id, at)
     WHERE r.conversation_id = a.id AND r.inbound_at <= a.at`,
    [answered.map((a) => a.conversationId), answered.map((a) => a.at)],
  );
}

/** Take up to `limit` due timers under a lease (SKIP LOCKED: instances share the table; a crash lets the lease run out). */
export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<ReplyTimeoutRow[]> {
  const { rows } = await db.query<ReplyTimeoutRow>(
    `UPDATE reply_timeouts SET lease_until = now() + $2 * interval '1 millisecond'
     WHERE conversation_id IN (SELECT conversation_id FROM reply_timeouts
                               WHERE due_at <= now() AND (lease_until IS NULL OR lease_until < now())
                               ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [limit, leaseMs],
  );
  return rows;
}

/** Milliseconds (by the database's clock) until the nearest timer falls due, a leased one when its lease ends; null: none. */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM min(greatest(due_at, coalesce(lease_until, due_at))) - now()) * 1000)::text AS ms FROM reply_timeouts`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}

/** The claimed timer, locked, if it is still the one claimed (not restarted for another assignee meanwhile). */
export async function lockClaimed(db: Queryable, r: ReplyTimeoutRow): Promise<ReplyTimeoutRow | undefined> {
  const { rows } = await db.query<ReplyTimeoutRow>(
    `SELECT ${COLUMNS} FROM reply_timeouts WHERE conversation_id = $1 AND assignee_id = $2 AND due_at = $3 FOR UPDATE`,
    [r.conversation_id, r.assignee_id, r.due_at],
  );
  return rows[0];
}

export async function remove(db: Queryable, conversationId: string): Promise<void> {
  await db.query(`DELETE FROM reply_timeouts WHERE conversation_id = $1`, [conversationId]);
}

/** The conversation went to someone else: their own window starts now. */
export async function restart(db: Queryable, conversationId: string, assigneeId: string, windowMs: number): Promise<void> {
  await db.query(
    `UPDATE reply_timeouts SET assignee_id = $2, inbound_at = now(), due_at = now() + $3 * interval '1 millisecond', lease_until = NULL
     WHERE conversation_id = $1`,
    [conversationId, assigneeId, windowMs],
  );
  await notify(db);
}
