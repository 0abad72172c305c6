import { randomUUID } from 'node:crypto';
import type { PoolClient, Queryable } from '@crm/db';
import { recordActivity } from '../db/activities.repo';
import type { ContactRow } from '../db/contacts.repo';
import { replaceAccountFriends } from '../db/friends.repo';
import { contactCreated } from './contact-events';

export interface FriendListEvent {
  accountId: string;
  friends: { chatnetUid: string; displayName?: string }[];
}

const COLUMNS = `id, org_id, name, email, phone, source, status, status_id, assigned_user_id, avatar, lead_score, chatnet_uid,
  thread_types, notes, tags, last_activity, created_at, updated_at, has_chatnet, deal_value`;

/** Contacts for every listed identity: the existing ones, plus new ones (source chatnet) for the rest. */
async function ensureContacts(db: Queryable, orgId: string, friends: { uid: string; name: string }[]) {
  const { rows: created } = await db.query<ContactRow>({
    name: 'crm_friends_insert_contacts',
    text: `INSERT INTO contacts (id, org_id, name, source, status, chatnet_uid, thread_types)
           SELECT c.id, $1, c.name, 'chatnet', 'new', c.uid, ARRAY['user']
           FROM unnest($2::uuid[], $3::text[], $4::text[]) AS c(id, name, uid)
           ON CONFLICT (org_id, chatnet_uid) WHERE chatnet_uid IS NOT NULL DO NOTHING
           RETURNING ${COLUMNS}`,
    values: [orgId, friends.map(() => randomUUID()), friends.map((f) => f.name), friends.map((f) => f.uid)],
  });
  const { rows } = await db.query<{ id: string; chatnet_uid: string }>({
    name: 'crm_contacts_by_uids',
    text: 'SELECT id, chatnet_uid FROM contacts WHERE org_id = $1 AND chatnet_uid = ANY($2::text[])',
    values: [orgId, friends.map((f) => f.uid)],
  });
  return { created, idOf: new Map(rows.map((r) => [r.chatnet_uid, r.id])) };
}

/**
 * chatnet_account.friends carries an account's whole friend list. Each friend is linked to the org's contact
 * with that chatnetUid, created (source chatnet, contact.created) when missing; friend records of the account
 * that are no longer listed are removed. Runs in the consumer's transaction.
 */
export async function syncAccountFriends(db: PoolClient, orgId: string, event: FriendListEvent): Promise<{ created: number; linked: number }> {
  const byUid = new Map<string, string>();
  for (const f of event.friends ?? []) {
    const uid = String(f?.chatnetUid ?? '').trim();
    if (uid && uid.length <= 200) byUid.set(uid, String(f.displayName ?? '').trim().slice(0, 200));
  }
  const friends = [...byUid].map(([uid, name]) => ({ uid, name }));
  const { created, idOf } = friends.length ? await ensureContacts(db, orgId, friends) : { created: [], idOf: new Map<string, string>() };
  for (const row of created) {
    await recordActivity(db, { orgId, contactId: row.id, type: 'created', data: `Created (source chatnet, friend of account ${event.accountId})` });
    await contactCreated(db, orgId, row);
  }
  const linked = friends.filter((f) => idOf.has(f.uid));
  const added = await replaceAccountFriends(db, orgId, event.accountId, {
    ids: linked.map(() => randomUUID()),
    contactIds: linked.map((f) => idOf.get(f.uid)!),
    uids: linked.map((f) => f.uid),
    names: linked.map((f) => f.name),
  });
  for (const contactId of added) {
    await recordActivity(db, { orgId, contactId, type: 'friend_added', data: `Friend of chat-network account ${event.accountId}` });
  }
  return { created: created.length, linked: linked.length };
}
