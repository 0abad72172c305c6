import type { Queryable } from '@crm/db';

/** SQL of the contact side of the read model (analytics_contacts, _assignments, _funnel_days). */

/** The stages a contact ever held; the key of analytics_funnel_days besides the day. */
export interface Reached {
  lead: boolean;
  customer: boolean;
  /** Custom status ids, sorted. */
  statusIds: string[];
}

export interface AnalyticsContact {
  createdAt: Date;
  snapshotAt: Date;
  assignedUserId: string | null;
  dealValue: number;
  reached: Reached;
  convertedAt: Date | null;
  convertedBy: string | null;
  deleted: boolean;
}

export async function lockContact(db: Queryable, orgId: string, contactId: string): Promise<AnalyticsContact | undefined> {
  const { rows } = await db.query({
    name: 'analytics_contact_lock',
    text: `SELECT created_at, snapshot_at, assigned_user_id, deal_value, reached_lead, reached_customer, reached_status_ids,
                  converted_at, converted_by, deleted
           FROM analytics_contacts WHERE org_id = $1 AND contact_id = $2 FOR UPDATE`,
    values: [orgId, contactId],
  });
  const r = rows[0];
  if (!r) return undefined;
  return {
    createdAt: r.created_at,
    snapshotAt: r.snapshot_at,
    assignedUserId: r.assigned_user_id,
    dealValue: r.deal_value,
    reached: { lead: r.reached_lead, customer: r.reached_customer, statusIds: r.reached_status_ids },
    convertedAt: r.converted_at,
    convertedBy: r.converted_by,
    deleted: r.deleted,
  };
}

/** False when a concurrent transaction inserted the contact first (lock and read it instead). */
export async function insertContact(db: Queryable, orgId: string, contactId: string, c: AnalyticsContact): Promise<boolean> {
  const res = await db.query({
    name: 'analytics_contact_insert',
    text: `INSERT INTO analytics_contacts (org_id, contact_id, created_at, snapshot_at, assigned_user_id, deal_value, reached_lead,
                                           reached_customer, reached_status_ids, converted_at, converted_by, deleted)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (org_id, contact_id) DO NOTHING`,
    values: [
      orgId,
      contactId,
      c.createdAt,
      c.snapshotAt,
      c.assignedUserId,
      c.dealValue,
      c.reached.lead,
      c.reached.customer,
      c.reached.statusIds,
      c.convertedAt,
      c.convertedBy,
      c.deleted,
    ],
  });
  return (res.rowCount ?? 0) > 0;
}

/** A contact's key in the read model: its org and its id (insertContacts answers with these). */
export const contactKey = (orgId: string, contactId: string) => `${orgId} ${contactId}`;

/**
 * insertContact for many contacts at once, of any number of orgs, in (org, contact id) order (the order every batch
 * takes contact rows in); returns the contactKeys inserted (the others already had a row: the caller locks and
 * updates those one by one). One statement whatever the orgs: a batch's round trips do not grow with its orgs.
 */
export async function insertContacts(
  db: Queryable,
  contacts: Array<{ orgId: string; contactId: string; row: AnalyticsContact }>,
): Promise<Set<string>> {
  if (contacts.length === 0) return new Set();
  const json = contacts.map(({ orgId, contactId, row: c }) => ({
    org_id: orgId,
    contact_id: contactId,
    created_at: c.createdAt.toISOString(),
    snapshot_at: c.snapshotAt.toISOString(),
    assigned_user_id: c.assignedUserId,
    deal_value: c.dealValue,
    reached_lead: c.reached.lead,
    reached_customer: c.reached.customer,
    reached_status_ids: c.reached.statusIds,
    converted_at: c.convertedAt?.toISOString() ?? null,
    converted_by: c.convertedBy,
    deleted: c.deleted,
  }));
  const { rows } = await db.query<{ org_id: string; contact_id: string }>({
    name: 'analytics_contacts_insert_many',
    text: `INSERT INTO analytics_contacts (org_id, contact_id, created_at, snapshot_at, assigned_user_id, deal_value, reached_lead,
                                           reached_customer, reached_status_ids, converted_at, converted_by, deleted)
           SELECT t.org_id, t.contact_id, t.created_at, t.snapshot_at, t.assigned_user_id, t.deal_value, t.reached_lead,
                  t.reached_customer, t.reached_status_ids, t.converted_at, t.converted_by, t.deleted
             FROM jsonb_to_recordset($1::jsonb) AS t (org_id uuid, contact_id uuid, created_at timestamptz, snapshot_at timestamptz,
                  assigned_user_id uuid, deal_value numeric, reached_lead boolean, reached_customer boolean, reached_status_ids uuid[],
                  converted_at timestamptz, converted_by uuid, deleted boolean)
            ORDER BY t.org_id, t.contact_id
           ON CONFLICT (org_id, contact_id) DO NOTHING
           RETURNING org_id, contact_id`,
    values: [JSON.stringify(json)],
  });
  return new Set(rows.map((r) => contactKey(r.org_id, r.contact_id)));
}

export async function updateContact(db: Queryable, orgId: string, contactId: string, c: AnalyticsContact) {
  await db.query({
    name: 'analytics_contact_update',
    text: `UPDATE analytics_contacts SET snapshot_at = $3, assigned_user_id = $4, deal_value = $5, reached_lead = $6, reached_customer = $7,
                                         reached_status_ids = $8, converted_at = $9, converted_by = $10, deleted = $11
           WHERE org_id = $1 AND contact_id = $2`,
    values: [
      orgId,
      contactId,
      c.snapshotAt,
      c.assignedUserId,
      c.dealValue,
      c.reached.lead,
      c.reached.customer,
      c.reached.statusIds,
      c.convertedAt,
      c.convertedBy,
      c.deleted,
    ],
  });
}

export interface Assignment {
  userId: string;
  at: Date;
  credited: boolean;
}

/** The contact's first assignment to each user. */
export async function assignmentsOf(db: Queryable, orgId: string, contactId: string): Promise<Assignment[]> {
  const { rows } = await db.query({
    name: 'analytics_assignments_of',
    text: 'SELECT user_id, at, credited FROM analytics_assignments WHERE org_id = $1 AND contact_id = $2 ORDER BY user_id',
    values: [orgId, contactId],
  });
  return rows.map((r) => ({ userId: r.user_id, at: r.at, credited: r.credited }));
}

/** Insert the contact's first assignment to the user, or move it earlier. */
export async function saveAssignment(db: Queryable, orgId: string, contactId: string, a: Assignment) {
  await db.query({
    name: 'analytics_assignment_save',
    text: `INSERT INTO analytics_assignments (org_id, contact_id, user_id, at, credited) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (org_id, contact_id, user_id) DO UPDATE SET at = EXCLUDED.at, credited = EXCLUDED.credited`,
    values: [orgId, contactId, a.userId, a.at, a.credited],
  });
}

export async function deleteAssignments(db: Queryable, orgId: string, contactId: string) {
  await db.query({
    name: 'analytics_assignments_delete',
    text: 'DELETE FROM analytics_assignments WHERE org_id = $1 AND contact_id = $2',
    values: [orgId, contactId],
  });
}

/** A change to one analytics_funnel_days row: +n / −n contacts of the org created that day with those stages. */
export interface FunnelRow {
  orgId: string;
  day: string;
  reached: Reached;
  n: number;
}

/**
 * Add each row's n to its funnel row, in the order given (the caller's key order, so that writers lock funnel rows
 * alike), all in one statement; the rows' keys must be distinct (one statement cannot update a row twice).
 */
export async function addToFunnel(db: Queryable, rows: FunnelRow[]) {
  if (rows.length === 0) return;
  const json = rows.map((r) => ({
    org_id: r.orgId,
    day: r.day,
    reached_lead: r.reached.lead,
    reached_customer: r.reached.customer,
    reached_status_ids: r.reached.statusIds,
    n: r.n,
  }));
  await db.query({
    name: 'analytics_funnel_add_many',
    text: `INSERT INTO analytics_funnel_days AS f (org_id, day, reached_lead, reached_customer, reached_status_ids, n)
           SELECT t.org_id, t.day, t.reached_lead, t.reached_customer, t.reached_status_ids, t.n
             FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (org_id uuid, day date, reached_lead boolean, reached_customer boolean,
                  reached_status_ids uuid[], n integer)) WITH ORDINALITY AS t (org_id, day, reached_lead, reached_customer, reached_status_ids, n, i)
            ORDER BY t.i
           ON CONFLICT (org_id, day, reached_lead, reached_customer, reached_status_ids) DO UPDATE SET n = f.n + EXCLUDED.n`,
    values: [JSON.stringify(json)],
  });
}
