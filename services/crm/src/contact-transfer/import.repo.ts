import type { Queryable } from '@crm/db';
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
