import { randomUUID } from 'node:crypto';
import type { PoolClient } from '@crm/db';
import { recordActivity } from '../db/activities.repo';
import { contactIdsByChatnetUid } from '../db/contact-lookups.repo';
import { replaceAccountFriends } from '../db/friends.repo';
import type { ContactWriter } from '../contact-writer';

export interface FriendListEvent {
  accountId: string;
  friends: { chatnetUid: string; displayName?: string }[];
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
  // The org's contact for every listed identity, those just created included.
  const idOf = await contactIdsByChatnetUid(
    db,
    orgId,
    friends.map((f) => f.uid),
  );
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
