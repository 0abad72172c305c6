import type { Queryable } from '@crm/db';
import { COLUMNS, type ContactRow } from './contacts.repo';

/**
 * The org's contacts found, walked and locked by sets of ids or keys (phones, emails, chat-network identities): one
 * statement for a whole batch, for the paths that take many rows at once (CSV import, socialnet leads, friend lists,
 * lead scoring).
 */

/**
 * The org's contacts a batch of imported rows can match (by phone, or by email), locked in id order like every writer
 * of several contacts, so an import and a bulk action over the same contacts wait for each other instead of deadlocking.
 */
export async function lockImportMatches(db: Queryable, orgId: string, phones: string[], emails: string[]): Promise<ContactRow[]> {
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

/** The org's contacts owning these (normalised) phone numbers: phone → contact id. `phone <> ''` lets the partial unique index serve it. */
export async function contactIdsByPhone(db: Queryable, orgId: string, phones: string[]): Promise<Map<string, string>> {
  if (phones.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; phone: string }>({
    name: 'crm_sn_contacts_by_phone',
    text: `SELECT id, phone FROM contacts WHERE org_id = $1 AND phone <> '' AND phone = ANY($2::text[])`,
    values: [orgId, phones],
  });
  return new Map(rows.map((r) => [r.phone, r.id]));
}

/** The org's contacts for these chat-network identities: uid → contact id. */
export async function contactIdsByChatnetUid(db: Queryable, orgId: string, uids: string[]): Promise<Map<string, string>> {
  if (uids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; chatnet_uid: string }>({
    name: 'crm_contacts_by_uids',
    text: 'SELECT id, chatnet_uid FROM contacts WHERE org_id = $1 AND chatnet_uid = ANY($2::text[])',
    values: [orgId, uids],
  });
  return new Map(rows.map((r) => [r.chatnet_uid, r.id]));
}

/** The org's contacts among `ids`, in id order (those of another org, or gone, left out). */
export async function contactsByIds(db: Queryable, orgId: string, ids: string[]): Promise<ContactRow[]> {
  const { rows } = await db.query<ContactRow>({
    name: 'crm_contacts_by_ids',
    text: `SELECT ${COLUMNS} FROM contacts WHERE org_id = $1 AND id = ANY($2::uuid[]) ORDER BY id`,
    values: [orgId, ids],
  });
  return rows;
}

/** The org's contact ids after `after` in id order (keyset over contacts (org_id, id)): walks over every contact. */
export async function contactIdsAfter(db: Queryable, orgId: string, after: string | null, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: 'crm_contact_ids_after',
    text: `SELECT id FROM contacts WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
    values: [orgId, after, limit],
  });
  return rows.map((r) => r.id);
}

/**
 * Lock the org's contacts among `ids` in id order, FOR NO KEY UPDATE (other writers of the rows wait; rows that only
 * reference them do not), skipping rows locked elsewhere when `skipLocked`; returns the ids locked. Writers of a
 * contact's dependent rows (lead scoring's state) take the contact first: deleting a contact locks its row and then,
 * by cascade, its dependents, so taking them the other way round would deadlock with it.
 */
export async function lockContactIds(db: Queryable, orgId: string, ids: string[], skipLocked = false): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: skipLocked ? 'crm_contacts_lock_ids_skip' : 'crm_contacts_lock_ids',
    text: `SELECT id FROM contacts WHERE org_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR NO KEY UPDATE${skipLocked ? ' SKIP LOCKED' : ''}`,
    values: [orgId, ids],
  });
  return rows.map((r) => r.id);
}
