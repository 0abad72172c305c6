import { iso, Queryable } from '@crm/db';
import { COLUMNS, type ContactRow } from './contacts.repo';

export interface StatusRow {
  id: string;
  name: string;
  color: string;
  position: number;
  contact_count?: number;
  created_at: Date;
  updated_at: Date;
}

export function toStatus(r: StatusRow) {
  return {
    id: r.id,
    name: r.name,
    color: r.color,
    position: r.position,
    contactCount: r.contact_count ?? 0,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export async function listStatuses(db: Queryable, orgId: string): Promise<StatusRow[]> {
  const { rows } = await db.query<StatusRow>({
    name: 'crm_statuses_list',
    text: `SELECT s.id, s.name, s.color, s.position, s.created_at, s.updated_at,
                  (SELECT count(*) FROM contacts c WHERE c.org_id = s.org_id AND c.status_id = s.id) AS contact_count
           FROM contact_statuses s WHERE s.org_id = $1 ORDER BY s.position, lower(s.name), s.id`,
    values: [orgId],
  });
  return rows;
}

export async function findStatus(db: Queryable, orgId: string, id: string): Promise<StatusRow | undefined> {
  const { rows } = await db.query<StatusRow>({
    name: 'crm_status_by_id',
    text: `SELECT s.id, s.name, s.color, s.position, s.created_at, s.updated_at,
                  (SELECT count(*) FROM contacts c WHERE c.org_id = s.org_id AND c.status_id = s.id) AS contact_count
           FROM contact_statuses s WHERE s.id = $1 AND s.org_id = $2`,
    values: [id, orgId],
  });
  return rows[0];
}

export async function statusExists(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rows } = await db.query({
    name: 'crm_status_exists',
    text: 'SELECT 1 FROM contact_statuses WHERE id = $1 AND org_id = $2',
    values: [id, orgId],
  });
  return rows.length > 0;
}

export async function insertStatus(
  db: Queryable,
  s: { id: string; orgId: string; name: string; color: string; position: number },
): Promise<StatusRow> {
  const { rows } = await db.query<StatusRow>({
    name: 'crm_status_insert',
    text: `INSERT INTO contact_statuses (id, org_id, name, color, position) VALUES ($1, $2, $3, $4, $5)
           RETURNING id, name, color, position, created_at, updated_at`,
    values: [s.id, s.orgId, s.name, s.color, s.position],
  });
  return rows[0];
}

export async function updateStatus(
  db: Queryable,
  orgId: string,
  id: string,
  p: { name?: string; color?: string; position?: number },
): Promise<boolean> {
  const res = await db.query({
    name: 'crm_status_update',
    text: `UPDATE contact_statuses SET name = COALESCE($3, name), color = COALESCE($4, color), position = COALESCE($5, position), updated_at = now()
           WHERE id = $1 AND org_id = $2`,
    values: [id, orgId, p.name ?? null, p.color ?? null, p.position ?? null],
  });
  return (res.rowCount ?? 0) > 0;
}

export async function deleteStatus(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const res = await db.query({ name: 'crm_status_delete', text: 'DELETE FROM contact_statuses WHERE id = $1 AND org_id = $2', values: [id, orgId] });
  return (res.rowCount ?? 0) > 0;
}

/** Before a status is deleted: its contacts lose it (returned as they now are, so each gets a contact.updated event). */
export async function clearStatusFromContacts(db: Queryable, orgId: string, statusId: string): Promise<ContactRow[]> {
  const { rows } = await db.query<ContactRow>({
    name: 'crm_status_clear_contacts_rows',
    text: `UPDATE contacts SET status_id = NULL, updated_at = now() WHERE org_id = $1 AND status_id = $2 RETURNING ${COLUMNS}`,
    values: [orgId, statusId],
  });
  return rows;
}
