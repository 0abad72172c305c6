import { iso, Queryable } from '@crm/db';
import { messagingRules } from '@crm/validation';
import { visibleSql } from '../visibility';

/** Every write that adds or moves a due time NOTIFYs here in its transaction: instances sleeping longer wake. */
export const SCHEDULED_CHANNEL = 'messaging_scheduled_due';

export const SCHEDULED_STATUSES = messagingRules.SCHEDULED_MESSAGE_STATUSES;
export type ScheduledStatus = (typeof SCHEDULED_STATUSES)[number];

export interface ScheduledRow {
  id: string;
  org_id: string;
  conversation_id: string;
  content: string;
  content_type: string;
  attachment_ids: string[];
  send_at: Date;
  cancel_if_replied: boolean;
  status: ScheduledStatus;
  message_id: string | null;
  error: string | null;
  cancel_reason: string | null;
  created_by: string | null;
  created_at: Date;
  attempts: number;
  /** Set while an instance is sending it (until the lease ends). */
  lease_until: Date | null;
}

const COLUMNS = `s.id, s.org_id, s.conversation_id, s.content, s.content_type, s.attachment_ids::text[] AS attachment_ids, s.send_at,
  s.cancel_if_replied, s.status, s.message_id, s.error, s.cancel_reason, s.created_by, s.created_at, s.attempts, s.lease_until`;

/** With a viewer (an agent under `assigned` visibility): only rows of conversations they may see. */
const visible = (viewer: string | null, ref: string) =>
  viewer ? ` AND EXISTS (SELECT 1 FROM conversations c WHERE c.id = s.conversation_id AND c.org_id = s.org_id AND ${visibleSql(ref)})` : '';

const notify = (db: Queryable) => db.query(`SELECT pg_notify('${SCHEDULED_CHANNEL}', '')`);

export async function insert(
  db: Queryable,
  r: {
    id: string;
    orgId: string;
    conversationId: string;
    content: string;
    contentType: string;
    attachmentIds: string[];
    sendAt: Date;
    cancelIfReplied: boolean;
    createdBy: string | null;
  },
): Promise<ScheduledRow> {
  const { rows } = await db.query<ScheduledRow>(
    `INSERT INTO scheduled_messages AS s (id, org_id, conversation_id, content, content_type, attachment_ids, send_at, cancel_if_replied, created_by, due_at)
     VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7, $8, $9, $7) RETURNING ${COLUMNS}`,
    [r.id, r.orgId, r.conversationId, r.content, r.contentType, r.attachmentIds, r.sendAt, r.cancelIfReplied, r.createdBy],
  );
  await notify(db);
  return rows[0];
}

export async function find(db: Queryable, orgId: string, id: string, viewer: string | null, lock = false): Promise<ScheduledRow | undefined> {
  const { rows } = await db.query<ScheduledRow>(
    `SELECT ${COLUMNS} FROM scheduled_messages s WHERE s.org_id = $1 AND s.id = $2${visible(viewer, '$3')}${lock ? ' FOR UPDATE OF s' : ''}`,
    viewer ? [orgId, id, viewer] : [orgId, id],
  );
  return rows[0];
}

/** One page of the org's scheduled messages, the latest send time first. */
export async function page(
  db: Queryable,
  orgId: string,
  f: { conversationId?: string; status?: ScheduledStatus; viewer: string | null },
  limit: number,
  offset: number,
): Promise<{ total: number; rows: ScheduledRow[] }> {
  const params: unknown[] = [orgId];
  const where = ['s.org_id = $1'];
  if (f.conversationId) where.push(`s.conversation_id = $${params.push(f.conversationId)}`);
  if (f.status) where.push(`s.status = $${params.push(f.status)}`);
  const filter = where.join(' AND ') + (f.viewer ? visible(f.viewer, `$${params.push(f.viewer)}`) : '');
  const [{ rows: countRows }, { rows }] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM scheduled_messages s WHERE ${filter}`, params),
    db.query<ScheduledRow>(
      `SELECT ${COLUMNS} FROM scheduled_messages s WHERE ${filter} ORDER BY s.send_at DESC, s.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    ),
  ]);
  return { total: countRows[0].n, rows };
}

/** New content and/or send time of a row locked by the caller; a new time moves the timer. */
export async function update(db: Queryable, id: string, p: { content?: string; sendAt?: Date }): Promise<ScheduledRow> {
  const { rows } = await db.query<ScheduledRow>(
    `UPDATE scheduled_messages s SET content = coalesce($2, content), send_at = coalesce($3, send_at), due_at = coalesce($3, due_at), updated_at = now()
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, p.content ?? null, p.sendAt ?? null],
  );
  if (p.sendAt) await notify(db);
  return rows[0];
}

export async function cancel(db: Queryable, id: string, reason: string | null): Promise<void> {
  await db.query(`UPDATE scheduled_messages SET status = 'cancelled', cancel_reason = $2, lease_until = NULL, updated_at = now() WHERE id = $1`, [
    id,
    reason,
  ]);
}

/** The contact wrote into a conversation at `sentAt`. */
export interface ContactWrote {
  orgId: string;
  conversationId: string;
  sentAt: Date;
}

/**
 * The contact wrote into these conversations (the inbound consumer's batch, in its transaction): their waiting
 * cancelIfReplied rows scheduled before the latest such message are cancelled (a message written earlier but stored
 * late, after a backlog, is no reply to them), except one an instance is sending right now (its lease runs), which
 * the send decides. One statement for the batch.
 */
export async function cancelReplied(db: Queryable, wrote: ContactWrote[]): Promise<number> {
  if (wrote.length === 0) return 0;
  const latest = new Map<string, ContactWrote>();
  for (const w of wrote) {
    const key = `${w.orgId}\n${w.conversationId}`;
    const known = latest.get(key);
    if (!known || known.sentAt < w.sentAt) latest.set(key, w);
  }
  const ws = [...latest.values()];
  const { rowCount } = await db.query(
    `UPDATE scheduled_messages s SET status = 'cancelled', cancel_reason = 'customer_replied', updated_at = now()
     FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS w (org_id, conversation_id, sent_at)
     WHERE s.conversation_id = w.conversation_id AND s.org_id = w.org_id AND s.status = 'scheduled' AND s.cancel_if_replied
       AND s.created_at <= w.sent_at AND (s.lease_until IS NULL OR s.lease_until < now())`,
    [ws.map((w) => w.orgId), ws.map((w) => w.conversationId), ws.map((w) => w.sentAt)],
  );
  return rowCount ?? 0;
}

/** Take up to `limit` due rows under a lease (SKIP LOCKED: instances share the table; a crash lets the lease run out). */
export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<ScheduledRow[]> {
  const { rows } = await db.query<ScheduledRow>(
    `UPDATE scheduled_messages s SET lease_until = now() + $2 * interval '1 millisecond', attempts = attempts + 1
     WHERE s.id IN (SELECT id FROM scheduled_messages
                    WHERE status = 'scheduled' AND due_at <= now() AND (lease_until IS NULL OR lease_until < now())
                    ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [limit, leaseMs],
  );
  return rows;
}

/** Milliseconds (by the database's clock) until the nearest scheduled row falls due, a leased one when its lease ends; null: none. */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM min(greatest(due_at, coalesce(lease_until, due_at))) - now()) * 1000)::text AS ms
     FROM scheduled_messages WHERE status = 'scheduled'`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}

/**
 * Sent: in the transaction that stored the message. Whatever the row's status meanwhile (a cancel that raced the
 * network send): the message went out, so the row says so.
 */
export async function markSent(db: Queryable, id: string, messageId: string): Promise<void> {
  await db.query(
    `UPDATE scheduled_messages SET status = 'sent', message_id = $2, error = NULL, cancel_reason = NULL, lease_until = NULL, updated_at = now() WHERE id = $1`,
    [id, messageId],
  );
}

/** The send certainly failed: the row is done, with the reason. */
export async function markFailed(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(
    `UPDATE scheduled_messages SET status = 'failed', error = $2, lease_until = NULL, updated_at = now() WHERE id = $1 AND status = 'scheduled'`,
    [id, error],
  );
}

/** The send may be retried (its outcome is unknown, or the account's budget is full): due again after `ms`. */
export async function retryLater(db: Queryable, id: string, ms: number, error: string): Promise<void> {
  await db.query(
    `UPDATE scheduled_messages SET due_at = now() + $2 * interval '1 millisecond', lease_until = NULL, error = $3, updated_at = now()
     WHERE id = $1 AND status = 'scheduled'`,
    [id, ms, error],
  );
  await notify(db);
}

/** The API shape; `attachments` are the upload objects of `attachment_ids`, in their order. */
export function toScheduled<A extends { id: string }>(r: ScheduledRow, uploads: Map<string, A>) {
  return {
    id: r.id,
    conversationId: r.conversation_id,
    content: r.content,
    contentType: r.content_type,
    attachments: r.attachment_ids.map((id) => uploads.get(id)).filter((a): a is A => a !== undefined),
    sendAt: iso(r.send_at),
    cancelIfReplied: r.cancel_if_replied,
    status: r.status,
    messageId: r.message_id,
    error: r.error,
    cancelReason: r.cancel_reason,
    createdBy: r.created_by,
    createdAt: iso(r.created_at),
  };
}
