import type { Queryable } from '@crm/db';

/** Every queued row NOTIFYs here (delivered at commit): rows are due at once, so instances claim them then. */
export const AUTO_REPLIES_CHANNEL = 'messaging_ai_auto_replies_due';

export type AutoReplyStatus = 'replied' | 'handed_off' | 'skipped' | 'failed';

export interface AutoReplyRow {
  id: string;
  org_id: string;
  conversation_id: string;
  message_id: string;
  attempts: number;
  /** The stamp of the message's inbound event: the origin of the call to ai (null on rows queued before it was kept). */
  origin: string | null;
}

export interface NewAutoReply {
  id: string;
  orgId: string;
  conversationId: string;
  messageId: string;
  origin: string | null;
}

/**
 * Queue the batch's rows (one statement). A conversation with a row still pending gets the newer message instead: a
 * burst of messages is answered once, for the latest (the rows are in delivery order, so the last of a conversation wins).
 */
export async function queue(db: Queryable, items: NewAutoReply[]): Promise<void> {
  if (items.length === 0) return;
  const latest = new Map(items.map((i) => [i.conversationId, i]));
  const rows = [...latest.values()];
  await db.query(
    `INSERT INTO ai_auto_replies (id, org_id, conversation_id, message_id, origin)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[])
     ON CONFLICT (conversation_id) WHERE status = 'pending' DO UPDATE SET message_id = EXCLUDED.message_id, origin = EXCLUDED.origin`,
    [rows.map((i) => i.id), rows.map((i) => i.orgId), rows.map((i) => i.conversationId), rows.map((i) => i.messageId), rows.map((i) => i.origin)],
  );
  await db.query(`SELECT pg_notify('${AUTO_REPLIES_CHANNEL}', '')`);
}

export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<AutoReplyRow[]> {
  const { rows } = await db.query<AutoReplyRow>(
    `UPDATE ai_auto_replies a SET lease_until = now() + $2 * interval '1 millisecond', attempts = attempts + 1
     WHERE a.id IN (SELECT id FROM ai_auto_replies
                    WHERE status = 'pending' AND due_at <= now() AND (lease_until IS NULL OR lease_until < now())
                    ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING a.id, a.org_id, a.conversation_id, a.message_id, a.attempts, a.origin`,
    [limit, leaseMs],
  );
  return rows;
}

export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM min(greatest(due_at, coalesce(lease_until, due_at))) - now()) * 1000)::text AS ms
     FROM ai_auto_replies WHERE status = 'pending'`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}

/**
 * The row's outcome for `handled`, the message it looked at; `reason` says which engine answered or why not. A newer
 * message of the conversation may have taken the row meanwhile (queue): then the row stays pending, free to be claimed
 * again at once for that one, unless the conversation was handed to a person (the newer message is theirs too).
 */
export async function finish(
  db: Queryable,
  row: { id: string; message_id: string },
  status: AutoReplyStatus,
  reason: string,
  replyMessageId: string | null = null,
): Promise<void> {
  const { rows } = await db.query<{ status: string }>(
    `UPDATE ai_auto_replies SET
       status = CASE WHEN $2 <> 'handed_off' AND message_id <> $5 THEN 'pending' ELSE $2 END,
       done_at = CASE WHEN $2 <> 'handed_off' AND message_id <> $5 THEN NULL ELSE now() END,
       reason = $3, reply_message_id = $4, lease_until = NULL
     WHERE id = $1 AND status = 'pending'
     RETURNING status`,
    [row.id, status, reason, replyMessageId, row.message_id],
  );
  if (rows[0]?.status === 'pending') await db.query(`SELECT pg_notify('${AUTO_REPLIES_CHANNEL}', '')`);
}

export async function retryLater(db: Queryable, id: string, ms: number, reason: string): Promise<void> {
  await db.query(`UPDATE ai_auto_replies SET due_at = now() + $2 * interval '1 millisecond', lease_until = NULL, reason = $3 WHERE id = $1`, [
    id,
    ms,
    reason,
  ]);
  await db.query(`SELECT pg_notify('${AUTO_REPLIES_CHANNEL}', '')`);
}

/**
 * Where the conversation stands for the assistant: the AI answers sent since a person last wrote (a user in the app,
 * or someone typing on the account's phone), and whether it was handed to a person since then (the assistant then
 * stays quiet until a person has replied).
 */
export async function standing(db: Queryable, orgId: string, conversationId: string): Promise<{ aiInRow: number; handedOff: boolean }> {
  const { rows } = await db.query<{ ai_in_row: number; handed_off: boolean }>(
    `WITH person AS (
       SELECT coalesce(max(sent_at), '-infinity') AS at FROM messages
       WHERE org_id = $1 AND conversation_id = $2 AND direction = 'outbound' AND (sent_by_user_id IS NOT NULL OR source IN ('ui', 'phone'))
     )
     SELECT (SELECT count(*)::int FROM messages, person WHERE org_id = $1 AND conversation_id = $2 AND direction = 'outbound'
               AND source = 'ai' AND sent_at > person.at) AS ai_in_row,
            EXISTS (SELECT 1 FROM ai_auto_replies, person WHERE conversation_id = $2 AND status = 'handed_off' AND done_at > person.at) AS handed_off`,
    [orgId, conversationId],
  );
  return { aiInRow: rows[0].ai_in_row, handedOff: rows[0].handed_off };
}
