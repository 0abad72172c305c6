import type { Queryable } from '@crm/db';

/**
 * The chat-network phone check's columns on contacts (migration 012), for chatnet-check's worker (issue #26). The first
 * query of a claim looks across orgs on purpose: it finds which orgs have due contacts; everything after is per org.
 */

/** NOTIFY channel of migration 012's trigger: contacts added or their numbers changed. */
export const PHONE_CHECK_CHANNEL = 'crm_chatnet_phone_check';

export interface PhoneCheckBatch {
  orgId: string;
  contacts: Array<{ id: string; phone: string }>;
}

/** Due: a phone, no chat-network identity, never checked, and not held or waiting for a retry (migration 012). */
const DUE = `chatnet_uid IS NULL AND phone <> '' AND chatnet_checked_at IS NULL
  AND (chatnet_check_after IS NULL OR chatnet_check_after <= now())`;

/**
 * Claim up to `orgs` organizations' batches: per org the `batchSize` oldest due contacts, each held until
 * `leaseMs` from now (SKIP LOCKED, so instances share the work and a crashed one's contacts come back after it).
 * One org per batch, and none this instance is already working on (`inHand`), keeps the per-org pace in one place; orgs are taken in a random order so none waits behind
 * a large one.
 */
export async function claimPhoneCheckBatches(
  db: Queryable,
  orgs: number,
  batchSize: number,
  leaseMs: number,
  inHand: string[],
): Promise<PhoneCheckBatch[]> {
  const { rows: due } = await db.query<{ org_id: string }>(
    `SELECT org_id FROM (SELECT DISTINCT org_id FROM contacts WHERE ${DUE} AND org_id <> ALL($2::uuid[])) d ORDER BY random() LIMIT $1`,
    [orgs, inHand],
  );
  const out: PhoneCheckBatch[] = [];
  for (const { org_id: orgId } of due) {
    const { rows } = await db.query<{ id: string; phone: string }>(
      `UPDATE contacts c SET chatnet_check_after = now() + $3 * interval '1 millisecond'
         FROM (SELECT id FROM contacts WHERE org_id = $1 AND ${DUE} ORDER BY created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) due
        WHERE c.id = due.id
        RETURNING c.id, c.phone`,
      [orgId, batchSize, leaseMs],
    );
    if (rows.length) out.push({ orgId, contacts: rows });
  }
  return out;
}

/**
 * Record the network's answer for the number that was checked. Nothing is written when the contact's phone
 * changed meanwhile (the trigger made the new number due) or it was checked already.
 */
export async function recordPhoneCheckAnswer(
  db: Queryable,
  orgId: string,
  contactId: string,
  checkedPhone: string,
  found: boolean,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE contacts SET chatnet_checked_at = now(), chatnet_phone_found = $4, chatnet_check_after = NULL
      WHERE org_id = $1 AND id = $2 AND phone = $3 AND chatnet_checked_at IS NULL`,
    [orgId, contactId, checkedPhone, found],
  );
  return (rowCount ?? 0) > 0;
}

/** Try these contacts again at `at` (a claim given back: stopping, the network not answering). */
export async function retryPhoneChecksAt(db: Queryable, orgId: string, contactIds: string[], at: Date): Promise<void> {
  if (contactIds.length === 0) return;
  await db.query(`UPDATE contacts SET chatnet_check_after = $3 WHERE org_id = $1 AND id = ANY($2::uuid[]) AND chatnet_checked_at IS NULL`, [
    orgId,
    contactIds,
    at,
  ]);
}

/**
 * The org has no connected account to ask with: every unchecked contact of it waits until `at` (a contact added
 * later is still tried at once: an account may have connected since).
 */
export async function retryOrgPhoneChecksAt(db: Queryable, orgId: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE contacts SET chatnet_check_after = $2
      WHERE org_id = $1 AND chatnet_uid IS NULL AND phone <> '' AND chatnet_checked_at IS NULL
        AND (chatnet_check_after IS NULL OR chatnet_check_after < $2)`,
    [orgId, at],
  );
}
