import { iso, Queryable } from '@crm/db';
import { Criteria, criteriaSql } from '../domain/list-criteria';
import type { ContactRow } from './contacts.repo';
import { contactIdVisibleSql } from './visibility.repo';

export interface CustomerListRow {
  id: string;
  name: string;
  description: string;
  status: string;
  criteria: Criteria;
  created_at: Date;
  updated_at: Date;
}

export function toCustomerList(r: CustomerListRow, contactCount: number) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    status: r.status,
    contactCount,
    criteriaJson: JSON.stringify(r.criteria ?? { filters: [] }),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

const LIST_COLUMNS = 'id, name, description, status, criteria, created_at, updated_at';

export async function listLists(db: Queryable, orgId: string): Promise<CustomerListRow[]> {
  const { rows } = await db.query<CustomerListRow>({
    name: 'crm_lists_list',
    text: `SELECT ${LIST_COLUMNS} FROM customer_lists WHERE org_id = $1 ORDER BY created_at DESC, id DESC`,
    values: [orgId],
  });
  return rows;
}

export async function findList(db: Queryable, orgId: string, id: string, lock = false): Promise<CustomerListRow | undefined> {
  const { rows } = await db.query<CustomerListRow>({
    text: `SELECT ${LIST_COLUMNS} FROM customer_lists WHERE id = $1 AND org_id = $2${lock ? ' FOR UPDATE' : ''}`,
    values: [id, orgId],
  });
  return rows[0];
}

export async function insertList(
  db: Queryable,
  l: { id: string; orgId: string; name: string; description: string; criteria: Criteria },
): Promise<CustomerListRow> {
  const { rows } = await db.query<CustomerListRow>({
    name: 'crm_list_insert',
    text: `INSERT INTO customer_lists (id, org_id, name, description, criteria) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING ${LIST_COLUMNS}`,
    values: [l.id, l.orgId, l.name, l.description, JSON.stringify(l.criteria)],
  });
  return rows[0];
}

export async function updateList(
  db: Queryable,
  orgId: string,
  id: string,
  p: { name?: string; description?: string; criteria?: Criteria; status?: string },
): Promise<boolean> {
  const res = await db.query({
    name: 'crm_list_update',
    text: `UPDATE customer_lists SET name = COALESCE($3, name), description = COALESCE($4, description),
             criteria = COALESCE($5::jsonb, criteria), status = COALESCE($6, status), updated_at = now()
           WHERE id = $1 AND org_id = $2`,
    values: [id, orgId, p.name ?? null, p.description ?? null, p.criteria ? JSON.stringify(p.criteria) : null, p.status ?? null],
  });
  return (res.rowCount ?? 0) > 0;
}

/** The deleted list's name, or undefined when the org has no such list. */
export async function deleteList(db: Queryable, orgId: string, id: string): Promise<string | undefined> {
  const res = await db.query<{ name: string }>({
    name: 'crm_list_delete',
    text: 'DELETE FROM customer_lists WHERE id = $1 AND org_id = $2 RETURNING name',
    values: [id, orgId],
  });
  return res.rows[0]?.name;
}

/** How many of the org's contacts match the criteria now. */
/** With `viewer` (an agent under inbox visibility), only the members that agent may see, as the contact list does. */
function visibleTo(viewer: string | undefined, params: unknown[]): string {
  if (!viewer) return '';
  params.push(viewer);
  return ` AND ${contactIdVisibleSql('c.id', `$${params.length}::uuid`)}`;
}

export async function countMembers(db: Queryable, orgId: string, criteria: Criteria, viewer?: string): Promise<number> {
  const params: unknown[] = [orgId];
  const where = criteriaSql(criteria, params) + visibleTo(viewer, params);
  const { rows } = await db.query<{ n: string }>({ text: `SELECT count(*) AS n FROM contacts c WHERE c.org_id = $1 AND ${where}`, values: params });
  return Number(rows[0].n);
}

const CONTACT_COLUMNS = `c.id, c.org_id, c.name, c.email, c.phone, c.source, c.status, c.status_id, c.assigned_user_id, c.avatar,
  c.lead_score, c.chatnet_uid, c.thread_types, c.notes, c.tags, c.last_activity, c.created_at, c.updated_at, c.has_chatnet, c.deal_value`;

/** A page of matching contacts, most recent activity first (offset pagination, for the HTTP listing). */
export async function memberPageByOffset(
  db: Queryable,
  orgId: string,
  criteria: Criteria,
  limit: number,
  offset: number,
  viewer?: string,
): Promise<ContactRow[]> {
  const params: unknown[] = [orgId];
  const where = criteriaSql(criteria, params) + visibleTo(viewer, params);
  params.push(limit, offset);
  const { rows } = await db.query<ContactRow>({
    text: `SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.org_id = $1 AND ${where}
           ORDER BY c.last_activity DESC, c.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
    values: params,
  });
  return rows;
}

/** Matching contacts after `after` (a contact id, or none) in contact-id order: keyset pagination for campaigns. */
export async function memberPageAfter(
  db: Queryable,
  orgId: string,
  criteria: Criteria,
  after: string | undefined,
  limit: number,
): Promise<ContactRow[]> {
  const params: unknown[] = [orgId];
  const where = criteriaSql(criteria, params);
  let keyset = '';
  if (after) {
    params.push(after);
    keyset = ` AND c.id > $${params.length}::uuid`;
  }
  params.push(limit);
  const { rows } = await db.query<ContactRow>({
    text: `SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.org_id = $1${keyset} AND ${where} ORDER BY c.id LIMIT $${params.length}`,
    values: params,
  });
  return rows;
}
