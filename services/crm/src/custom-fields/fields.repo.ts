import { iso, Queryable } from '@crm/db';
import type { FieldDef, FieldType } from './values';

export interface FieldRow {
  id: string;
  key: string;
  label: string;
  type: FieldType;
  options: string[];
  position: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, key, label, type, options, position, created_at, updated_at';

export function toField(r: FieldRow) {
  return {
    id: r.id,
    key: r.key,
    label: r.label,
    type: r.type,
    options: r.options,
    position: r.position,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export async function listFields(db: Queryable, orgId: string): Promise<FieldRow[]> {
  const { rows } = await db.query<FieldRow>({
    name: 'crm_fields_list',
    text: `SELECT ${COLUMNS} FROM contact_fields WHERE org_id = $1 ORDER BY position, key`,
    values: [orgId],
  });
  return rows;
}

/** The org's definitions by key: what contact writes, filters and imports check values against. */
export async function fieldDefs(db: Queryable, orgId: string): Promise<Map<string, FieldDef>> {
  return new Map((await listFields(db, orgId)).map((r) => [r.key, { key: r.key, type: r.type, options: r.options }]));
}

export async function findField(db: Queryable, orgId: string, id: string, forUpdate = false): Promise<FieldRow | undefined> {
  const { rows } = await db.query<FieldRow>({
    name: forUpdate ? 'crm_field_by_id_lock' : 'crm_field_by_id',
    text: `SELECT ${COLUMNS} FROM contact_fields WHERE id = $1 AND org_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    values: [id, orgId],
  });
  return rows[0];
}

export async function countFields(db: Queryable, orgId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>({
    name: 'crm_fields_count',
    text: 'SELECT count(*)::int AS n FROM contact_fields WHERE org_id = $1',
    values: [orgId],
  });
  return rows[0].n;
}

export async function insertField(
  db: Queryable,
  f: { id: string; orgId: string; key: string; label: string; type: FieldType; options: string[]; position: number },
): Promise<FieldRow> {
  const { rows } = await db.query<FieldRow>({
    name: 'crm_field_insert',
    text: `INSERT INTO contact_fields (id, org_id, key, label, type, options, position) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    values: [f.id, f.orgId, f.key, f.label, f.type, f.options, f.position],
  });
  return rows[0];
}

export async function updateField(
  db: Queryable,
  orgId: string,
  id: string,
  p: { label?: string; options?: string[]; position?: number },
): Promise<FieldRow | undefined> {
  const { rows } = await db.query<FieldRow>({
    name: 'crm_field_update',
    text: `UPDATE contact_fields SET label = COALESCE($3, label), options = COALESCE($4, options), position = COALESCE($5, position), updated_at = now()
           WHERE id = $1 AND org_id = $2 RETURNING ${COLUMNS}`,
    values: [id, orgId, p.label ?? null, p.options ?? null, p.position ?? null],
  });
  return rows[0];
}

export async function deleteField(db: Queryable, orgId: string, id: string): Promise<{ key: string } | undefined> {
  const { rows } = await db.query<{ key: string }>({
    name: 'crm_field_delete',
    text: 'DELETE FROM contact_fields WHERE id = $1 AND org_id = $2 RETURNING key',
    values: [id, orgId],
  });
  return rows[0];
}
