import type { Queryable } from '@crm/db';
import { COLUMNS, type ContactRow } from '../contacts';

/**
 * The org's contacts a batch of rows can match (by phone, or by email), locked in id order like every writer of
 * several contacts, so an import and a bulk action over the same contacts wait for each other instead of deadlocking.
 */
export async function lockMatches(db: Queryable, orgId: string, phones: string[], emails: string[]): Promise<ContactRow[]> {
  if (phones.length === 0 && emails.length === 0) return [];
  // Not a named (prepared) statement: PostgreSQL then plans each call with its arrays and the table as it is now.
  // A named one is planned once per connection after a few calls; on a table that was small then (a new install's
  // first import) that plan filtered every contact of the org against both arrays: 167 ms a batch at 20,000 contacts,
  // 600 ms at 40,000, most of an import's time.
  const { rows } = await db.query<ContactRow>({
    text: `SELECT ${COLUMNS} FROM contacts
           WHERE org_id = $1 AND ((phone <> '' AND phone = ANY($2::text[])) OR (email <> '' AND email = ANY($3::text[])))
           ORDER BY id FOR UPDATE`,
    values: [orgId, phones, emails],
  });
  return rows;
}
