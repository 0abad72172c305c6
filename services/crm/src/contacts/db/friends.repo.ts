import { iso, Queryable } from '@crm/db';

export interface FriendRow {
  id: string;
  chatnet_uid: string;
  display_name: string;
  account_id: string;
  relationship_kind: string;
  added_at: Date;
}

export function toFriend(r: FriendRow) {
  return {
    id: r.id,
    chatnetUid: r.chatnet_uid,
    displayName: r.display_name,
    accountId: r.account_id,
    relationshipKind: r.relationship_kind,
    addedAt: iso(r.added_at),
  };
}

export async function friendRecordsOf(db: Queryable, orgId: string, contactId: string): Promise<FriendRow[]> {
  const { rows } = await db.query<FriendRow>({
    name: 'crm_friend_records_of_contact',
    text: `SELECT id, chatnet_uid, display_name, account_id, relationship_kind, added_at FROM contact_friends
           WHERE org_id = $1 AND contact_id = $2 ORDER BY added_at, id`,
    values: [orgId, contactId],
  });
  return rows;
}

/**
 * Make the account's friend records exactly `friends` (the connector sends the whole list): insert new ones,
 * refresh display names, delete those no longer listed. Returns the contact ids that became friends.
 */
export async function replaceAccountFriends(
  db: Queryable,
  orgId: string,
  accountId: string,
  friends: { ids: string[]; contactIds: string[]; uids: string[]; names: string[] },
): Promise<string[]> {
  await db.query({
    name: 'crm_friends_prune',
    text: 'DELETE FROM contact_friends WHERE org_id = $1 AND account_id = $2 AND NOT (chatnet_uid = ANY($3::text[]))',
    values: [orgId, accountId, friends.uids],
  });
  if (friends.uids.length === 0) return [];
  // xmax = 0 marks a freshly inserted row (not one updated by ON CONFLICT).
  const { rows } = await db.query<{ contact_id: string; inserted: boolean }>({
    name: 'crm_friends_upsert',
    text: `INSERT INTO contact_friends (id, org_id, account_id, contact_id, chatnet_uid, display_name)
           SELECT f.id, $1, $2, f.contact_id, f.uid, f.name
           FROM unnest($3::uuid[], $4::uuid[], $5::text[], $6::text[]) AS f(id, contact_id, uid, name)
           ON CONFLICT (org_id, account_id, chatnet_uid)
           DO UPDATE SET display_name = EXCLUDED.display_name, contact_id = EXCLUDED.contact_id
           RETURNING contact_id, (xmax = 0) AS inserted`,
    values: [orgId, accountId, friends.ids, friends.contactIds, friends.uids, friends.names],
  });
  return rows.filter((r) => r.inserted).map((r) => r.contact_id);
}
