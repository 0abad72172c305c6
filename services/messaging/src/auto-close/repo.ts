import type { Queryable } from '@crm/db';

/** A write that may bring the nearest due time forward NOTIFYs here (delivered at commit): sleeping instances re-arm. */
export const AUTO_CLOSE_CHANNEL = 'messaging_auto_close_due';

export interface AutoCloseRow {
  conversation_id: string;
  org_id: string;
  arming_id: string;
  due_at: Date;
  attempts: number;
}

const COLUMNS = 'a.conversation_id, a.org_id, a.arming_id, a.due_at, a.attempts';

/**
 * Our message was stored (the send's transaction): the conversation closes `auto_close_after_minutes` from now unless
 * the contact writes. One statement: nothing when the org has no auto-close; the NOTIFY only when this due time is
 * the earliest (most sends move a row that is not).
 */
export async function arm(db: Queryable, orgId: string, conversationId: string, minuteMs: number): Promise<void> {
  await db.query({
    name: 'msg_auto_close_arm',
    text: `WITH s AS (SELECT auto_close_after_minutes AS m FROM inbox_settings WHERE org_id = $2 AND auto_close_after_minutes IS NOT NULL),
                earliest AS (SELECT min(due_at) AS at FROM conversation_auto_close),
                armed AS (
                  INSERT INTO conversation_auto_close AS a (conversation_id, org_id, arming_id, due_at)
                  SELECT $1, $2, gen_random_uuid(), now() + (s.m * $3::float8) * interval '1 millisecond' FROM s
                  ON CONFLICT (conversation_id) DO UPDATE SET arming_id = EXCLUDED.arming_id, due_at = EXCLUDED.due_at, lease_until = NULL, attempts = 0
                  RETURNING a.due_at)
           SELECT pg_notify('${AUTO_CLOSE_CHANNEL}', '') FROM armed, earliest WHERE earliest.at IS NULL OR armed.due_at < earliest.at`,
    values: [conversationId, orgId, minuteMs],
  });
}

/** The contact wrote (one statement for an inbound batch): those conversations wait for us again, no auto-close. */
export async function disarm(db: Queryable, conversationIds: string[]): Promise<void> {
  if (conversationIds.length === 0) return;
  await db.query({
    name: 'msg_auto_close_disarm',
    text: 'DELETE FROM conversation_auto_close WHERE conversation_id = ANY($1::uuid[])',
    values: [conversationIds],
  });
}

/**
 * The org's setting changed: its timers are planned again from scratch. Off: none. On: every active or pending
 * conversation whose last message is ours closes `minutes` after that message, as if the setting had always been on
 * (one idle longer closes at once, as Chatwoot's auto-resolve does).
 */
export async function replan(db: Queryable, orgId: string, minutes: number | null, minuteMs: number): Promise<void> {
  await db.query('DELETE FROM conversation_auto_close WHERE org_id = $1', [orgId]);
  if (minutes === null) return;
  await db.query(
    `INSERT INTO conversation_auto_close (conversation_id, org_id, arming_id, due_at)
     SELECT c.id, c.org_id, gen_random_uuid(), greatest(now(), c.last_message_at + ($2::int * $3::float8) * interval '1 millisecond')
       FROM conversations c JOIN messages m ON m.id = c.last_message_id
      WHERE c.org_id = $1 AND c.status IN ('active', 'pending') AND m.direction = 'outbound'`,
    [orgId, minutes, minuteMs],
  );
  await db.query(`SELECT pg_notify('${AUTO_CLOSE_CHANNEL}', '')`);
}

/** Take up to `limit` due rows under a lease (SKIP LOCKED: instances share the table; a crash lets the lease run out). */
export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<AutoCloseRow[]> {
  const { rows } = await db.query<AutoCloseRow>(
    `UPDATE conversation_auto_close a SET lease_until = now() + $2 * interval '1 millisecond', attempts = attempts + 1
     WHERE a.conversation_id IN (SELECT conversation_id FROM conversation_auto_close
                                 WHERE due_at <= now() AND (lease_until IS NULL OR lease_until < now())
                                 ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [limit, leaseMs],
  );
  return rows;
}

/** Milliseconds (by the database's clock) until the nearest row falls due, a leased one when its lease ends; null: none. */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM min(greatest(due_at, coalesce(lease_until, due_at))) - now()) * 1000)::text AS ms FROM conversation_auto_close`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}

/** The claimed timer is done: true when it was still this arming (not re-armed by a send, nor removed by the contact). */
export async function take(db: Queryable, conversationId: string, armingId: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM conversation_auto_close WHERE conversation_id = $1 AND arming_id = $2', [
    conversationId,
    armingId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Try again after `ms` (the auto-close message could not be sent yet). */
export async function retryLater(db: Queryable, conversationId: string, armingId: string, ms: number): Promise<void> {
  await db.query(
    `UPDATE conversation_auto_close SET due_at = now() + $3 * interval '1 millisecond', lease_until = NULL WHERE conversation_id = $1 AND arming_id = $2`,
    [conversationId, armingId, ms],
  );
  await db.query(`SELECT pg_notify('${AUTO_CLOSE_CHANNEL}', '')`);
}
