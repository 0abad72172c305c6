import { randomUUID } from 'node:crypto';
import type { PoolClient, Queryable } from '@crm/db';
import { recordActivity } from '../db/activities.repo';
import { replaceAccountFriends } from '../db/friends.repo';
import type { ContactWriter } from '../contact-writer';

export interface FriendListEvent {
  accountId: string;
  friends: { chatnetUid: string; displayName?: string }[];
}

/** The org's contact ids for the listed identities (those just created included). */
async function contactIdsOf(db: Queryable, orgId: string, uids: string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; chatnet_uid: string }>({
    name: 'crm_contacts_by_uids',
    text: 'SELECT id, chatnet_uid FROM contacts WHERE org_id = $1 AND chatnet_uid = ANY($2::text[])',
    values: [orgId, uids],
  });
  return new Map(rows.map((r) => [r.chatnet_uid, r.id]));
}

/**
 * chatnet_account.friends carries an account's whole friend list. Each friend is linked to the org's contact
 * with that chatnetUid, created (source chatnet, contact.created) when missing; friend records of the account
 * that are no longer listed are removed. Runs in the consumer's transaction.
 */
export async function syncAccountFriends(
  db: PoolClient,
  contacts: ContactWriter,
  orgId: string,
  event: FriendListEvent,
): Promise<{ created: number; linked: number }> {
  const byUid = new Map<string, string>();
  for (const f of event.friends ?? []) {
    const uid = String(f?.chatnetUid ?? '').trim();
    if (uid && uid.length <= 200)
      byUid.set(
        uid,
        String(f.displayName ?? '')
          .trim()
          .slice(0, 200),
      );
  }
  const friends = [...byUid].map(([uid, name]) => ({ uid, name }));
  const created = await contacts.createForIdentities(db, orgId, friends, `Created (source chatnet, friend of account ${event.accountId})`);
  const idOf = friends.length
    ? await contactIdsOf(
        db,
        orgId,
        friends.map((f) => f.uid),
      )
    : new Map<string, string>();
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
