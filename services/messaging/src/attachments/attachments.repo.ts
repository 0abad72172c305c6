import { iso, Queryable } from '@crm/db';
import { visibleSql } from '../visibility';

export interface AttachmentRow {
  id: string;
  org_id: string;
  filename: string;
  content_type: string;
  size: number;
  uploaded_by: string | null;
  message_id: string | null;
  uploaded_at: Date;
  sha256: string | null;
  origin: AttachmentOrigin;
  /** When ATTACHMENTS_RETENTION_DAYS took the bytes away (the row stays for its message); null while they are kept. */
  expired_at: Date | null;
}

/** `upload`: a user or API key uploaded it; `inbound`: the connector stored it from the network. Each has its own quota. */
export type AttachmentOrigin = 'upload' | 'inbound';

/** Wakes every instance's attachment sweep (the timer facility) when a file may fall due sooner than it sleeps. */
export const ATTACHMENTS_DUE_CHANNEL = 'messaging_attachments_due';

const COLUMNS = 'id, org_id, filename, content_type, size, uploaded_by, message_id, uploaded_at, sha256, origin, expired_at';

/** Where the gateway serves an attachment's bytes back (auth and org checked there and here). */
export const attachmentUrl = (id: string) => `/api/v1/chat/attachments/${id}`;

/** The API shape; `expiredAt` only once the bytes are gone (the gateway answers null while they are kept). */
export function toAttachment(r: AttachmentRow) {
  return {
    id: r.id,
    filename: r.filename,
    size: Number(r.size),
    contentType: r.content_type,
    url: attachmentUrl(r.id),
    uploadedAt: iso(r.uploaded_at),
    ...(r.expired_at ? { expiredAt: iso(r.expired_at) } : {}),
  };
}

/** What the connector needs of a file it sends: where to fetch it (by id) and what it is. */
export function toOutbound(r: AttachmentRow) {
  return { id: r.id, fileName: r.filename, mimeType: r.content_type, size: Number(r.size), sha256: r.sha256 ?? '' };
}

/** Not a scheduled message's upload still waiting to be sent (those are no orphans until the row ends). */
const NOT_HELD = `NOT EXISTS (SELECT 1 FROM scheduled_messages s WHERE s.status = 'scheduled' AND s.attachment_ids @> ARRAY[a.id])`;

/**
 * Record a stored file (in the caller's transaction). When no other unsent file waits, the sweeps may sleep past this
 * one's orphan time (until a sent file's retention time, or with nothing due at all): the commit wakes them to look.
 * Otherwise an older unsent file falls due first and its wake-up is set already, so a stream of files wakes nobody.
 */
export async function insert(
  db: Queryable,
  a: {
    id: string;
    orgId: string;
    filename: string;
    contentType: string;
    size: number;
    sha256: string;
    uploadedBy: string | null;
    origin: AttachmentOrigin;
  },
) {
  const { rows } = await db.query<AttachmentRow>(
    `INSERT INTO attachments (id, org_id, filename, content_type, size, sha256, uploaded_by, origin) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [a.id, a.orgId, a.filename, a.contentType, a.size, a.sha256, a.uploadedBy, a.origin],
  );
  await db.query(
    `SELECT pg_notify('${ATTACHMENTS_DUE_CHANNEL}', '')
     WHERE NOT EXISTS (SELECT 1 FROM attachments a WHERE a.message_id IS NULL AND a.id <> $1 AND ${NOT_HELD})`,
    [a.id],
  );
  return rows[0];
}

/**
 * Serialise the quota check of one organization's uploads (until the transaction ends), so two uploads
 * finishing at once cannot both fit in the space that only one of them fits in.
 */
export async function lockOrgStorage(db: Queryable, orgId: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('attachments:' || $1, 0))`, [orgId]);
}

/** Bytes the organization keeps in attachments of one origin (expired files keep none). */
export async function storedBytes(db: Queryable, orgId: string, origin: AttachmentOrigin): Promise<number> {
  const { rows } = await db.query<{ total: string }>(
    `SELECT COALESCE(SUM(size), 0)::text AS total FROM attachments WHERE org_id = $1 AND origin = $2 AND expired_at IS NULL`,
    [orgId, origin],
  );
  return Number(rows[0].total);
}

/**
 * Delete up to `limit` uploads not sent with any message and older than `hours` (a scheduled message still waiting
 * to send one keeps it), returning them so their
 * files can go too. SKIP LOCKED lets several instances sweep at once without waiting on (or double-deleting)
 * each other's rows, and a send linking one of these rows in the same moment either wins or finds it gone.
 */
export async function deleteOrphans(db: Queryable, hours: number, limit: number): Promise<{ id: string; org_id: string }[]> {
  const { rows } = await db.query<{ id: string; org_id: string }>(
    `DELETE FROM attachments WHERE id IN (
       SELECT a.id FROM attachments a WHERE a.message_id IS NULL AND a.uploaded_at < now() - make_interval(secs => $1) AND ${NOT_HELD}
       ORDER BY uploaded_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id, org_id`,
    [hours * 3600, limit],
  );
  return rows;
}

/**
 * Mark up to `limit` files older than `days` expired, returning them so their bytes can go. The rows stay: a message
 * keeps listing the file it carried, as expired. SKIP LOCKED as for orphans: instances sweep side by side.
 */
export async function expireOld(db: Queryable, days: number, limit: number): Promise<{ id: string; org_id: string }[]> {
  const { rows } = await db.query<{ id: string; org_id: string }>(
    `UPDATE attachments SET expired_at = now() WHERE id IN (
       SELECT id FROM attachments WHERE expired_at IS NULL AND uploaded_at < now() - make_interval(days => $1)
       ORDER BY uploaded_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id, org_id`,
    [days, limit],
  );
  return rows;
}

/**
 * Milliseconds (by the database's clock) until the next file falls due for either sweep: the oldest unsent upload
 * no scheduled message holds (orphan after `hours`) or the oldest file with its bytes (expired after `days`); null
 * when there is none. Each is the first row of its partial index in time order.
 */
export async function nextSweepDueInMs(db: Queryable, hours: number, days: number): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM least(
       (SELECT a.uploaded_at FROM attachments a WHERE a.message_id IS NULL AND ${NOT_HELD} ORDER BY a.uploaded_at LIMIT 1) + make_interval(secs => $1),
       (SELECT uploaded_at FROM attachments WHERE expired_at IS NULL ORDER BY uploaded_at LIMIT 1) + make_interval(days => $2)
     ) - now()) * 1000)::text AS ms`,
    [hours * 3600, days],
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}

/**
 * Delete one of the org's files while no message carries it and no scheduled message waits to send it; the row
 * lock makes a send linking it at the same moment either win (nothing deleted) or find it gone.
 */
export async function deleteUnsent(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM attachments a WHERE a.org_id = $1 AND a.id = $2 AND a.message_id IS NULL AND ${NOT_HELD}`, [
    orgId,
    id,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Whether a scheduled message still waiting to be sent names this file. */
export async function heldBySchedule(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM scheduled_messages WHERE org_id = $1 AND status = 'scheduled' AND attachment_ids @> ARRAY[$2::uuid]`,
    [orgId, id],
  );
  return rows.length > 0;
}

export async function findById(db: Queryable, orgId: string, id: string): Promise<AttachmentRow | undefined> {
  const { rows } = await db.query<AttachmentRow>(`SELECT ${COLUMNS} FROM attachments WHERE org_id = $1 AND id = $2`, [orgId, id]);
  return rows[0];
}

/**
 * One attachment the viewer may download: with a viewer (an agent under "assigned" visibility), a file sent in a
 * message needs that message's conversation to be visible to them, and a file not yet sent is the uploader's own.
 * Without a viewer (everyone else), any attachment of the org.
 */
export async function findVisible(db: Queryable, orgId: string, id: string, viewer: string | null): Promise<AttachmentRow | undefined> {
  if (!viewer) return findById(db, orgId, id);
  const { rows } = await db.query<AttachmentRow>(
    `SELECT ${COLUMNS} FROM attachments a WHERE a.org_id = $1 AND a.id = $2 AND (
       NOT EXISTS (SELECT 1 FROM inbox_settings vs WHERE vs.org_id = a.org_id AND vs.agent_visibility = 'assigned')
       OR (a.message_id IS NULL AND a.uploaded_by = $3)
       OR EXISTS (SELECT 1 FROM messages m JOIN conversations c ON c.id = m.conversation_id
                  WHERE m.id = a.message_id AND c.org_id = a.org_id AND ${visibleSql('$3')}))`,
    [orgId, id, viewer],
  );
  return rows[0];
}

export async function findMany(db: Queryable, orgId: string, ids: string[]): Promise<AttachmentRow[]> {
  if (!ids.length) return [];
  const { rows } = await db.query<AttachmentRow>(`SELECT ${COLUMNS} FROM attachments WHERE org_id = $1 AND id = ANY($2::uuid[])`, [orgId, ids]);
  return rows;
}

/** Attach uploaded files to the message that carried them; only files not yet sent with another message. */
export async function linkToMessage(db: Queryable, orgId: string, messageId: string, ids: string[]): Promise<AttachmentRow[]> {
  if (!ids.length) return [];
  const { rows } = await db.query<AttachmentRow>(
    `UPDATE attachments SET message_id = $3 WHERE org_id = $1 AND id = ANY($2::uuid[]) AND message_id IS NULL RETURNING ${COLUMNS}`,
    [orgId, ids, messageId],
  );
  return rows;
}

/** Attachments of many messages, grouped by message id. */
export async function forMessages(db: Queryable, orgId: string, messageIds: string[]): Promise<Map<string, AttachmentRow[]>> {
  const out = new Map<string, AttachmentRow[]>();
  if (!messageIds.length) return out;
  const { rows } = await db.query<AttachmentRow>(
    `SELECT ${COLUMNS} FROM attachments WHERE org_id = $1 AND message_id = ANY($2::uuid[]) ORDER BY uploaded_at, id`,
    [orgId, messageIds],
  );
  for (const r of rows) {
    const list = out.get(r.message_id!) ?? [];
    list.push(r);
    out.set(r.message_id!, list);
  }
  return out;
}
