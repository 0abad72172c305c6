import type { Queryable } from '@crm/db';

/** Every write of a row NOTIFYs here (delivered at commit): rows are due at once, so instances claim them then. */
export const AUTO_MESSAGES_CHANNEL = 'messaging_auto_messages_due';

export type AutoMessageKind = 'out_of_hours' | 'csat';

export interface AutoMessageRow {
  id: string;
  org_id: string;
  conversation_id: string;
  kind: AutoMessageKind;
  content: string;
  attempts: number;
}

const COLUMNS = 'a.id, a.org_id, a.conversation_id, a.kind, a.content, a.attempts';

export const notifySql = `SELECT pg_notify('${AUTO_MESSAGES_CHANNEL}', '')`;

export interface NewAutoMessage {
  id: string;
  orgId: string;
  conversationId: string;
  kind: AutoMessageKind;
  content: string;
  /** At most one row per org and key (the out-of-hours reply: conversation and closed period). */
  dedupeKey: string | null;
}

/** Queue messages (one statement); a row whose dedupe key exists already is left out. Answers the ids queued. */
export async function queue(db: Queryable, items: NewAutoMessage[]): Promise<string[]> {
  if (items.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO auto_messages (id, org_id, conversation_id, kind, content, dedupe_key)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[])
     ON CONFLICT (org_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
     RETURNING id`,
    [
      items.map((i) => i.id),
      items.map((i) => i.orgId),
      items.map((i) => i.conversationId),
      items.map((i) => i.kind),
      items.map((i) => i.content),
      items.map((i) => i.dedupeKey),
    ],
  );
  if (rows.length > 0) await db.query(notifySql);
  return rows.map((r) => r.id);
}

export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<AutoMessageRow[]> {
  const { rows } = await db.query<AutoMessageRow>(
    `UPDATE auto_messages a SET lease_until = now() + $2 * interval '1 millisecond', attempts = attempts + 1
     WHERE a.id IN (SELECT id FROM auto_messages
                    WHERE status = 'queued' AND due_at <= now() AND (lease_until IS NULL OR lease_until < now())
                    ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [limit, leaseMs],
  );
  return rows;
}

export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM min(greatest(due_at, coalesce(lease_until, due_at))) - now()) * 1000)::text AS ms
     FROM auto_messages WHERE status = 'queued'`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}

/** Sent: in the transaction that stored the message; answers when. */
export async function markSent(db: Queryable, id: string, messageId: string): Promise<Date> {
  const { rows } = await db.query<{ sent_at: Date }>(
    `UPDATE auto_messages a SET status = 'sent', message_id = $2, sent_at = m.sent_at, lease_until = NULL, error = NULL
     FROM messages m WHERE a.id = $1 AND m.id = $2 RETURNING a.sent_at`,
    [id, messageId],
  );
  return rows[0]?.sent_at ?? new Date();
}

export async function markFailed(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(`UPDATE auto_messages SET status = 'failed', error = $2, lease_until = NULL WHERE id = $1 AND status = 'queued'`, [id, error]);
}

export async function retryLater(db: Queryable, id: string, ms: number, error: string): Promise<void> {
  await db.query(
    `UPDATE auto_messages SET due_at = now() + $2 * interval '1 millisecond', lease_until = NULL, error = $3 WHERE id = $1 AND status = 'queued'`,
    [id, ms, error],
  );
  await db.query(notifySql);
}
