import { randomUUID } from 'node:crypto';
import type { Queryable } from '@crm/db';
import type { CustomFields } from '../../custom-fields';
import { COLUMNS, type ContactPatch, type ContactRow } from './contacts.repo';

/** Multi-row contact writes (CSV import, friend lists), used only by the contact writer (contact-writer.ts). */

/** What an imported row writes: the contact's new values (only these columns change on an update). */
export interface ImportedValues {
  id: string;
  name: string;
  email: string;
  phone: string;
  status: string;
  tags: string[];
  custom_fields: CustomFields;
}

/** Many new contacts in one statement (source "import"). */
export async function insertImported(db: Queryable, orgId: string, rows: ImportedValues[]): Promise<ContactRow[]> {
  if (rows.length === 0) return [];
  const { rows: out } = await db.query<ContactRow>({
    name: 'crm_import_insert',
    text: `INSERT INTO contacts (id, org_id, name, email, phone, source, status, tags, custom_fields)
           SELECT x.id, $1, x.name, x.email, x.phone, 'import', x.status, x.tags, x.custom_fields
           FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, name text, email text, phone text, status text, tags text[], custom_fields jsonb)
           RETURNING ${COLUMNS}`,
    values: [orgId, JSON.stringify(rows)],
  });
  return out;
}

/** Many contacts' imported values in one statement. */
export async function updateImported(db: Queryable, orgId: string, rows: ImportedValues[]): Promise<ContactRow[]> {
  if (rows.length === 0) return [];
  const { rows: out } = await db.query<ContactRow>({
    name: 'crm_import_update',
    text: `UPDATE contacts c SET name = x.name, email = x.email, phone = x.phone, status = x.status, tags = x.tags,
                  custom_fields = x.custom_fields, updated_at = now()
           FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, name text, email text, phone text, status text, tags text[], custom_fields jsonb)
           WHERE c.org_id = $1 AND c.id = x.id
           RETURNING ${COLUMNS.split(',')
             .map((c) => `c.${c.trim()}`)
             .join(', ')}`,
    values: [orgId, JSON.stringify(rows)],
  });
  return out;
}

/** New contacts (source chatnet) for the chat-network identities the org has no contact for; returns only those. */
export async function insertChatnetContacts(db: Queryable, orgId: string, identities: { uid: string; name: string }[]): Promise<ContactRow[]> {
  if (identities.length === 0) return [];
  const { rows } = await db.query<ContactRow>({
    name: 'crm_friends_insert_contacts',
    text: `INSERT INTO contacts (id, org_id, name, source, status, chatnet_uid, thread_types)
           SELECT c.id, $1, c.name, 'chatnet', 'new', c.uid, ARRAY['user']
           FROM unnest($2::uuid[], $3::text[], $4::text[]) AS c(id, name, uid)
           ON CONFLICT (org_id, chatnet_uid) WHERE chatnet_uid IS NOT NULL DO NOTHING
           RETURNING ${COLUMNS}`,
    values: [orgId, identities.map(() => randomUUID()), identities.map((f) => f.name), identities.map((f) => f.uid)],
  });
  return rows;
}

/** The fields a bulk action sets (tag, untag, status, assign): what updateBulk writes. */
export type BulkPatch = Pick<ContactPatch, 'tags' | 'status' | 'statusId' | 'assignedUserId'>;

/**
 * Many contacts' bulk changes in one statement: each row writes only the fields its patch names (a field it does not
 * name keeps its value), and updated_at. Returns the rows as written.
 */
export async function updateBulk(db: Queryable, orgId: string, rows: { id: string; patch: BulkPatch }[]): Promise<ContactRow[]> {
  if (rows.length === 0) return [];
  const { rows: out } = await db.query<ContactRow>({
    name: 'crm_bulk_update',
    text: `UPDATE contacts c SET
             tags = CASE WHEN x.p ? 'tags' THEN ARRAY(SELECT jsonb_array_elements_text(x.p->'tags')) ELSE c.tags END,
             status = CASE WHEN x.p ? 'status' THEN x.p->>'status' ELSE c.status END,
             status_id = CASE WHEN x.p ? 'statusId' THEN (x.p->>'statusId')::uuid ELSE c.status_id END,
             assigned_user_id = CASE WHEN x.p ? 'assignedUserId' THEN (x.p->>'assignedUserId')::uuid ELSE c.assigned_user_id END,
             updated_at = now()
           FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, p jsonb)
           WHERE c.org_id = $1 AND c.id = x.id
           RETURNING ${COLUMNS.split(',')
             .map((c) => `c.${c.trim()}`)
             .join(', ')}`,
    values: [orgId, JSON.stringify(rows.map((r) => ({ id: r.id, p: r.patch })))],
  });
  return out;
}

/**
 * Removes a deleted custom field's key from every contact of the org that has it (a rare admin action: one pass over
 * the org's contacts; jsonb_path_ops cannot answer `?`). Returns how many contacts had it.
 */
export async function removeCustomFieldKey(db: Queryable, orgId: string, key: string): Promise<number> {
  const res = await db.query({
    name: 'crm_fields_remove_key',
    text: `UPDATE contacts SET custom_fields = custom_fields - $2::text, updated_at = now()
           WHERE org_id = $1 AND custom_fields ? $2::text`,
    values: [orgId, key],
  });
  return res.rowCount ?? 0;
}
