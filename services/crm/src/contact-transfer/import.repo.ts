import type { Queryable } from '@crm/db';
import type { CustomFields } from '../custom-fields';
import { COLUMNS, type ContactRow } from '../contacts';

/**
 * The org's contacts a batch of rows can match (by phone, or by email), locked in id order like every writer of
 * several contacts, so an import and a bulk action over the same contacts wait for each other instead of deadlocking.
 */
export async function lockMatches(db: Queryable, orgId: string, phones: string[], emails: string[]): Promise<ContactRow[]> {
  if (phones.length === 0 && emails.length === 0) return [];
  const { rows } = await db.query<ContactRow>({
    name: 'crm_import_lock_matches',
    text: `SELECT ${COLUMNS} FROM contacts
           WHERE org_id = $1 AND ((phone <> '' AND phone = ANY($2::text[])) OR (email <> '' AND email = ANY($3::text[])))
           ORDER BY id FOR UPDATE`,
    values: [orgId, phones, emails],
  });
  return rows;
}

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
           RETURNING ${COLUMNS.split(',').map((c) => `c.${c.trim()}`).join(', ')}`,
    values: [orgId, JSON.stringify(rows)],
  });
  return out;
}
