import { iso, offsetOf, PageRequest, pagination, Pool, Queryable } from '@crm/db';

export interface NotificationRow {
  id: string;
  type: string;
  title: string;
  message: string;
  resource_id: string;
  created_at: Date;
  read: boolean;
}

function toNotification(r: NotificationRow) {
  return { id: r.id, type: r.type, title: r.title, message: r.message, resourceId: r.resource_id, read: r.read, createdAt: iso(r.created_at) };
}

/** Who is reading: their own notifications and the org-wide ones meant for one of their roles (or everyone). */
export interface Reader {
  orgId: string;
  userId: string;
  /** Every role at or below the reader's: an org-wide notification for 'admin' reaches admins and owners. */
  roles: string[];
}

// $1 org, $2 user, $3 roles.
const VISIBLE = `n.org_id = $1 AND (n.user_id = $2 OR (n.user_id IS NULL AND (n.audience_role IS NULL OR n.audience_role = ANY($3::text[]))))`;
const READ = 'EXISTS (SELECT 1 FROM notification_reads r WHERE r.notification_id = n.id AND r.user_id = $2)';

/**
 * One page, its total and the reader's unread count from one snapshot: run side by side on separate
 * connections, a notification committed in between showed in the page but not in unreadCount.
 */
export async function listNotifications(pool: Pool, reader: Reader, page: PageRequest, unreadOnly: boolean) {
  const args = [reader.orgId, reader.userId, reader.roles];
  const filter = unreadOnly ? `${VISIBLE} AND NOT ${READ}` : VISIBLE;
  const db = await pool.connect();
  try {
    await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const list = await db.query<NotificationRow>(
      `SELECT n.id, n.type, n.title, n.message, n.resource_id, n.created_at, ${READ} AS read
       FROM notifications n WHERE ${filter} ORDER BY n.created_at DESC, n.id DESC LIMIT $4 OFFSET $5`,
      [...args, page.limit, offsetOf(page)],
    );
    const counts = await db.query<{ total: number; unread: number }>(
      `SELECT count(*) FILTER (WHERE ${unreadOnly ? 'NOT v.read' : 'true'}) AS total, count(*) FILTER (WHERE NOT v.read) AS unread
       FROM (SELECT ${READ} AS read FROM notifications n WHERE ${VISIBLE}) v`,
      args,
    );
    await db.query('COMMIT');
    return { data: list.rows.map(toNotification), unreadCount: counts.rows[0].unread, pagination: pagination(page, counts.rows[0].total) };
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    db.release();
  }
}

/** Mark one notification read for this reader; false when the reader cannot see it. */
export async function markRead(db: Queryable, reader: Reader, id: string): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(`SELECT n.id FROM notifications n WHERE ${VISIBLE} AND n.id = $4`, [
    reader.orgId,
    reader.userId,
    reader.roles,
    id,
  ]);
  if (rows.length === 0) return false;
  await db.query('INSERT INTO notification_reads (notification_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [id, reader.userId]);
  return true;
}

export async function markAllRead(db: Queryable, reader: Reader): Promise<number> {
  const { rowCount } = await db.query(
    `INSERT INTO notification_reads (notification_id, user_id)
     SELECT n.id, $2 FROM notifications n WHERE ${VISIBLE} AND NOT ${READ}
     ON CONFLICT DO NOTHING`,
    [reader.orgId, reader.userId, reader.roles],
  );
  return rowCount ?? 0;
}

export interface NewNotification {
  id: string;
  orgId: string;
  userId: string | null;
  audienceRole: string | null;
  type: string;
  title: string;
  message: string;
  resourceId: string;
}

/** Insert once: a repeated id (a retried action, a redelivered event) is ignored. Returns whether it was new. */
export async function insertNotification(db: Queryable, n: NewNotification): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO notifications (id, org_id, user_id, audience_role, type, title, message, resource_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
    [n.id, n.orgId, n.userId, n.audienceRole, n.type, n.title, n.message, n.resourceId],
  );
  return rowCount === 1;
}

/**
 * Record a contact's lead score as of an event's time and say whether it just crossed into "high":
 * true only when it is high now and was not (or was never seen). An event older than the last one seen
 * for the contact changes nothing. Serialised per contact, so two events of one contact handled at once
 * cannot both see the old state.
 */
export async function recordLeadScore(db: Queryable, orgId: string, contactId: string, score: number, high: boolean, asOf: string): Promise<boolean> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('automation.lead_scores'), hashtext($1 || $2))", [orgId, contactId]);
  const prev = await db.query<{ high: boolean; as_of: Date }>('SELECT high, as_of FROM lead_scores WHERE org_id = $1 AND contact_id = $2', [
    orgId,
    contactId,
  ]);
  const before = prev.rows[0];
  if (before && before.as_of.getTime() > Date.parse(asOf)) return false;
  await db.query(
    `INSERT INTO lead_scores (org_id, contact_id, score, high, as_of) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (org_id, contact_id) DO UPDATE SET score = EXCLUDED.score, high = EXCLUDED.high, as_of = EXCLUDED.as_of`,
    [orgId, contactId, score, high, asOf],
  );
  return high && !before?.high;
}

export async function forgetLeadScore(db: Queryable, orgId: string, contactId: string): Promise<void> {
  await db.query('DELETE FROM lead_scores WHERE org_id = $1 AND contact_id = $2', [orgId, contactId]);
}

/**
 * The user's unread `new_message` notification about a conversation, locked, if there is one. Callers serialise on
 * (org, user, conversation) first (`lockNewMessage`), so two messages handled at once cannot both find none.
 */
export async function findUnreadNewMessage(db: Queryable, orgId: string, userId: string, conversationId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT n.id FROM notifications n
     WHERE n.org_id = $1 AND n.user_id = $2 AND n.type = 'new_message' AND n.resource_id = $3
       AND NOT EXISTS (SELECT 1 FROM notification_reads r WHERE r.notification_id = n.id AND r.user_id = $2)
     ORDER BY n.created_at DESC LIMIT 1 FOR UPDATE`,
    [orgId, userId, conversationId],
  );
  return rows[0]?.id;
}

export async function lockNewMessage(db: Queryable, orgId: string, userId: string, conversationId: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('automation.new_message'), hashtext($1 || $2 || $3))", [orgId, userId, conversationId]);
}

/** Bring an unread notification up to date with the latest message and to the top of the list. */
export async function bumpNotification(db: Queryable, id: string, title: string, message: string): Promise<void> {
  await db.query('UPDATE notifications SET title = $2, message = $3, created_at = greatest(created_at, now()) WHERE id = $1', [id, title, message]);
}
