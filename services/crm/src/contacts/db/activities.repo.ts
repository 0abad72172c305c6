import { iso, Queryable } from '@crm/db';
import { latestOfContact } from './latest-of-contact';

export type ActivityType =
  | 'created'
  | 'updated'
  | 'note_added'
  | 'note_updated'
  | 'note_deleted'
  | 'appointment_created'
  | 'appointment_updated'
  | 'appointment_deleted'
  | 'task_created'
  | 'task_completed'
  | 'message_received'
  | 'message_sent'
  | 'friend_added'
  | 'merged'
  | 'merge_undone';

/** Activity text is a short human-readable line; long content (messages, notes) is cut. */
const MAX_DATA = 300;

export const activityText = (data: string) => (data.length > MAX_DATA ? `${data.slice(0, MAX_DATA - 1)}…` : data);

/** A line of a contact's activity timeline, as the batch writers take it. */
export interface TimelineLine {
  contactId: string;
  type: ActivityType;
  data: string;
  at: Date;
}

export async function recordActivity(
  db: Queryable,
  a: { orgId: string; contactId: string; type: ActivityType; data: string; at?: Date },
): Promise<void> {
  await db.query({
    name: 'crm_activity_insert',
    text: 'INSERT INTO contact_activities (org_id, contact_id, type, data, occurred_at) VALUES ($1, $2, $3, $4, COALESCE($5, now()))',
    values: [a.orgId, a.contactId, a.type, activityText(a.data), a.at ?? null],
  });
}

/** Several activities of the org's contacts in one statement, inserted in the order given. */
export async function recordActivities(db: Queryable, orgId: string, rows: TimelineLine[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query({
    name: 'crm_activities_insert',
    text: `INSERT INTO contact_activities (org_id, contact_id, type, data, occurred_at)
           SELECT $1, a.contact_id, a.type, a.data, a.at
           FROM unnest($2::uuid[], $3::text[], $4::text[], $5::timestamptz[]) WITH ORDINALITY AS a(contact_id, type, data, at, i)
           ORDER BY a.i`,
    values: [orgId, rows.map((r) => r.contactId), rows.map((r) => r.type), rows.map((r) => activityText(r.data)), rows.map((r) => r.at)],
  });
}

const latestActivities = latestOfContact<{ type: string; occurred_at: Date; data: string }>({
  name: 'crm_activities_of_contact',
  columns: 'type, occurred_at, data',
  table: 'contact_activities',
  order: 'occurred_at DESC, id DESC',
});

/** The contact's latest activities (a batch of contact details reads them in one query: latest-of-contact.ts). */
export async function activitiesOf(db: Queryable, orgId: string, contactId: string, limit: number) {
  const rows = await latestActivities(db, orgId, contactId, limit);
  return rows.map((r) => ({ type: r.type, timestamp: iso(r.occurred_at), data: r.data }));
}
