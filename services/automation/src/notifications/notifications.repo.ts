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

/** Insert once, in one statement: a repeated id (a retried action, a redelivered event) is ignored. Returns the ids that were new. */
export async function insertNotifications(db: Queryable, ns: NewNotification[]): Promise<Set<string>> {
  if (ns.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO notifications (id, org_id, user_id, audience_role, type, title, message, resource_id)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [
      ns.map((n) => n.id),
      ns.map((n) => n.orgId),
      ns.map((n) => n.userId),
      ns.map((n) => n.audienceRole),
      ns.map((n) => n.type),
      ns.map((n) => n.title),
      ns.map((n) => n.message),
      ns.map((n) => n.resourceId),
    ],
  );
  return new Set(rows.map((r) => r.id));
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

/** One user's `new_message` alert about one conversation, as the latest of a batch's messages states it. */
export interface NewMessageAlert {
  orgId: string;
  userId: string;
  conversationId: string;
  title: string;
  message: string;
}

/**
 * Serialise on each (org, user, conversation) of a batch for the rest of the transaction, so that two batches handled
 * at once cannot both find no unread alert for one of them and both add one. Taken in one order (the keys sorted;
 * unnest keeps an array's order), so two batches that share several keys wait for each other instead of deadlocking.
 */
export async function lockNewMessageAlerts(db: Queryable, alerts: NewMessageAlert[]): Promise<void> {
  const keys = [...new Set(alerts.map((a) => a.orgId + a.userId + a.conversationId))].sort();
  await db.query("SELECT pg_advisory_xact_lock(hashtext('automation.new_message'), hashtext(k)) FROM unnest($1::text[]) AS k", [keys]);
}

/**
 * Bring each alert's unread `new_message` notification (the user's newest about that conversation that the user has
 * not read) up to date with its text and to the top of the list, in one statement. Returns the indexes of the alerts
 * that found one; the others have none unread. Callers hold lockNewMessageAlerts.
 */
export async function bumpUnreadNewMessages(db: Queryable, alerts: NewMessageAlert[]): Promise<Set<number>> {
  if (alerts.length === 0) return new Set();
  const { rows } = await db.query<{ i: string }>(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS a (org_id, user_id, resource_id, title, message, i)
     ), unread AS (
       SELECT a.i, u.id FROM input a
       CROSS JOIN LATERAL (
         SELECT n.id FROM notifications n
         WHERE n.org_id = a.org_id AND n.user_id = a.user_id AND n.type = 'new_message' AND n.resource_id = a.resource_id
           AND NOT EXISTS (SELECT 1 FROM notification_reads r WHERE r.notification_id = n.id AND r.user_id = a.user_id)
         ORDER BY n.created_at DESC LIMIT 1
       ) u
     )
     UPDATE notifications n SET title = a.title, message = a.message, created_at = greatest(n.created_at, now())
     FROM unread JOIN input a USING (i)
     WHERE n.id = unread.id
     RETURNING a.i`,
    [
      alerts.map((a) => a.orgId),
      alerts.map((a) => a.userId),
      alerts.map((a) => a.conversationId),
      alerts.map((a) => a.title),
      alerts.map((a) => a.message),
    ],
  );
  return new Set(rows.map((r) => Number(r.i) - 1));
}
