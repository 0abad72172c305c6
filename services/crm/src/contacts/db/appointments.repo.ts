import { afterSql, iso, type Keyset, keysetPage, keyTimeSql, offsetOf, pagination, Pool, Queryable } from '@crm/db';
import { contactIdVisibleSql } from './visibility.repo';
import { latestOfContact } from './latest-of-contact';

export interface AppointmentRow {
  id: string;
  contact_id: string;
  title: string;
  description: string;
  scheduled_at: Date;
  duration: number;
  type: string;
  location: string;
  assigned_user_id: string | null;
  status: string;
  notes: string;
  created_at: Date;
  updated_at: Date;
  contact_name: string;
  contact_phone: string;
  contact_email: string;
}

const FIELDS = `a.id, a.contact_id, a.title, a.description, a.scheduled_at, a.duration, a.type, a.location, a.assigned_user_id,
  a.status, a.notes, a.created_at, a.updated_at, c.name AS contact_name, c.phone AS contact_phone, c.email AS contact_email`;
const FROM = 'FROM appointments a JOIN contacts c ON c.id = a.contact_id';
const SELECT = `SELECT ${FIELDS} ${FROM}`;

export function toAppointment(r: AppointmentRow) {
  return {
    id: r.id,
    contactId: r.contact_id,
    contactName: r.contact_name,
    title: r.title,
    description: r.description,
    scheduledAt: iso(r.scheduled_at),
    duration: r.duration,
    type: r.type,
    location: r.location,
    assignedUserId: r.assigned_user_id,
    status: r.status,
    notes: r.notes,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    contact: { id: r.contact_id, name: r.contact_name, phone: r.contact_phone, email: r.contact_email },
  };
}

export interface NewAppointment {
  id: string;
  orgId: string;
  contactId: string;
  title: string;
  description: string;
  scheduledAt: Date;
  duration: number;
  type: string;
  location: string;
  assignedUserId: string | null;
  notes: string;
}

export async function insertAppointment(db: Queryable, a: NewAppointment): Promise<void> {
  await db.query({
    name: 'crm_appointment_insert',
    text: `INSERT INTO appointments (id, org_id, contact_id, title, description, scheduled_at, duration, type, location, assigned_user_id, notes)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    values: [a.id, a.orgId, a.contactId, a.title, a.description, a.scheduledAt, a.duration, a.type, a.location, a.assignedUserId, a.notes],
  });
}

/** The org's appointment; with `viewer`, only one whose contact that agent may see (db/visibility.repo.ts). */
export async function findAppointment(
  db: Queryable,
  orgId: string,
  id: string,
  forUpdate = false,
  viewer?: string,
): Promise<AppointmentRow | undefined> {
  const visible = viewer ? ` AND ${contactIdVisibleSql('a.contact_id', '$3::uuid')}` : '';
  const { rows } = await db.query<AppointmentRow>({
    name: `crm_appointment_by_id${viewer ? '_visible' : ''}${forUpdate ? '_lock' : ''}`,
    text: `${SELECT} WHERE a.id = $1 AND a.org_id = $2${visible}${forUpdate ? ' FOR UPDATE OF a' : ''}`,
    values: viewer ? [id, orgId, viewer] : [id, orgId],
  });
  return rows[0];
}

export interface AppointmentPatch {
  title?: string;
  description?: string;
  scheduledAt?: Date;
  duration?: number;
  type?: string;
  location?: string;
  assignedUserId?: string | null;
  status?: string;
  notes?: string;
}

const PATCH_COLUMNS: Record<keyof AppointmentPatch, string> = {
  title: 'title',
  description: 'description',
  scheduledAt: 'scheduled_at',
  duration: 'duration',
  type: 'type',
  location: 'location',
  assignedUserId: 'assigned_user_id',
  status: 'status',
  notes: 'notes',
};

export async function updateAppointment(db: Queryable, orgId: string, id: string, patch: AppointmentPatch): Promise<void> {
  const sets: string[] = [];
  const args: unknown[] = [id, orgId];
  for (const [key, col] of Object.entries(PATCH_COLUMNS) as [keyof AppointmentPatch, string][]) {
    if (patch[key] === undefined) continue;
    args.push(patch[key]);
    sets.push(`${col} = $${args.length}`);
  }
  sets.push('updated_at = now()');
  await db.query(`UPDATE appointments SET ${sets.join(', ')} WHERE id = $1 AND org_id = $2`, args);
}

export async function deleteAppointment(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query({ name: 'crm_appointment_delete', text: 'DELETE FROM appointments WHERE id = $1 AND org_id = $2', values: [id, orgId] });
}

export interface AppointmentFilter {
  page: number;
  limit: number;
  status?: string;
  contactId?: string;
  dateFrom?: Date;
  dateTo?: Date;
  skipTotal?: boolean;
  /** The agent whose inbox visibility limits the list to the appointments of contacts they may see. */
  viewer?: string;
}

/** The WHERE conditions of a filter (the first is the org) and their parameters; `arg` adds one more. */
function appointmentWhere(orgId: string, f: Omit<AppointmentFilter, 'page' | 'limit'>) {
  const where = ['a.org_id = $1'];
  const args: unknown[] = [orgId];
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  if (f.status) where.push(`a.status = ${arg(f.status)}`);
  if (f.contactId) where.push(`a.contact_id = ${arg(f.contactId)}`);
  if (f.dateFrom) where.push(`a.scheduled_at >= ${arg(f.dateFrom)}`);
  if (f.dateTo) where.push(`a.scheduled_at < ${arg(f.dateTo)}`);
  if (f.viewer) where.push(contactIdVisibleSql('a.contact_id', `${arg(f.viewer)}::uuid`));
  return { where, args, arg };
}

/** Earliest first: an appointment list is an agenda. */
export async function listAppointments(pool: Pool, orgId: string, f: AppointmentFilter) {
  const { where, args } = appointmentWhere(orgId, f);
  const whereSql = where.join(' AND ');
  const page = pool.query<AppointmentRow>(`${SELECT} WHERE ${whereSql} ORDER BY a.scheduled_at, a.id LIMIT ${f.limit} OFFSET ${offsetOf(f)}`, args);
  const count = f.skipTotal ? undefined : pool.query<{ n: number }>(`SELECT count(*) AS n FROM appointments a WHERE ${whereSql}`, args);
  const [rows, total] = await Promise.all([page, count]);
  return { data: rows.rows.map(toAppointment), pagination: pagination(f, total ? total.rows[0].n : rows.rows.length) };
}

/**
 * A keyset page (the public API's cursors): scheduledAt ascending (the agenda), or updatedAt ascending for
 * incremental sync ("updated", with `updatedSince`).
 */
export async function listAppointmentsAfter(pool: Pool, orgId: string, f: Omit<AppointmentFilter, 'page'>, k: Keyset) {
  const { where, args, arg } = appointmentWhere(orgId, f);
  const col = k.order === 'updated' ? 'a.updated_at' : 'a.scheduled_at';
  if (k.updatedSince) where.push(`a.updated_at >= ${arg(k.updatedSince)}`);
  if (k.after) where.push(afterSql(col, 'a.id', 'ASC', k.after, arg));
  const { rows } = await pool.query<AppointmentRow & { key_value: string }>(
    `SELECT ${FIELDS}, ${keyTimeSql(col)} AS key_value ${FROM} WHERE ${where.join(' AND ')} ORDER BY ${col}, a.id LIMIT ${f.limit + 1}`,
    args,
  );
  const page = keysetPage(rows, f.limit);
  return { data: page.rows.map(toAppointment), next: page.next };
}

const latestAppointments = latestOfContact<AppointmentRow>({
  name: 'crm_appointments_of_contact',
  columns: 'id, title, scheduled_at, status, type, notes, created_at, updated_at',
  table: 'appointments',
  order: 'scheduled_at DESC, id DESC',
});

/**
 * For the contact detail: most recent (latest scheduledAt) first (a batch of contact details reads them in one query:
 * latest-of-contact.ts).
 */
export async function appointmentsOfContact(db: Queryable, orgId: string, contactId: string, limit: number) {
  const rows = await latestAppointments(db, orgId, contactId, limit);
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    scheduledAt: iso(r.scheduled_at),
    status: r.status,
    type: r.type,
    notes: r.notes,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  }));
}
