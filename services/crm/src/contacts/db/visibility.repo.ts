import type { Queryable } from '@crm/db';

/**
 * The contact side of the inbox visibility rule, over the table `contacts` (unaliased, as the contact queries
 * write it), for the agent bound at `userRef`: the org's setting is not `assigned`, or the contact is assigned to
 * them, or one of its conversations is visible to them (assigned to them, or unassigned on an account listing them).
 */
export function contactVisibleSql(userRef: string): string {
  return `(NOT EXISTS (SELECT 1 FROM inbox_visibility iv WHERE iv.org_id = contacts.org_id AND iv.agent_visibility = 'assigned')
    OR contacts.assigned_user_id = ${userRef}
    OR EXISTS (SELECT 1 FROM conversation_owners co WHERE co.org_id = contacts.org_id AND co.contact_id = contacts.id
         AND (co.assignee_id = ${userRef}
              OR (co.assignee_id IS NULL AND EXISTS (SELECT 1 FROM account_users au
                    WHERE au.org_id = co.org_id AND au.chatnet_account_id = co.chatnet_account_id AND ${userRef} = ANY(au.user_ids))))))`;
}

/** The same rule for a row that names its contact (`contactIdRef`, e.g. an appointment's contact_id). */
export function contactIdVisibleSql(contactIdRef: string, userRef: string): string {
  return `EXISTS (SELECT 1 FROM contacts WHERE contacts.id = ${contactIdRef} AND ${contactVisibleSql(userRef)})`;
}

/** Whether the org at `orgRef` limits its agents to the conversations assigned to them (`assigned`). */
export function orgLimitsAgentsSql(orgRef: string): string {
  return `EXISTS (SELECT 1 FROM inbox_visibility iv WHERE iv.org_id = ${orgRef} AND iv.agent_visibility = 'assigned')`;
}

/**
 * The conversation side of the rule for a row that names a conversation (`conversationIdRef`, e.g. a task's): the
 * conversation is assigned to the agent at `userRef`, or unassigned on an account listing them. It does not look at
 * the org's setting (see orgLimitsAgentsSql); a conversation crm has not heard of yet is not visible.
 */
export function conversationIdVisibleSql(conversationIdRef: string, orgRef: string, userRef: string): string {
  return `EXISTS (SELECT 1 FROM conversation_owners co WHERE co.org_id = ${orgRef} AND co.conversation_id = ${conversationIdRef}
         AND (co.assignee_id = ${userRef}
              OR (co.assignee_id IS NULL AND EXISTS (SELECT 1 FROM account_users au
                    WHERE au.org_id = co.org_id AND au.chatnet_account_id = co.chatnet_account_id AND ${userRef} = ANY(au.user_ids)))))`;
}

export async function setVisibility(db: Queryable, orgId: string, value: 'all' | 'assigned'): Promise<void> {
  await db.query(
    `INSERT INTO inbox_visibility (org_id, agent_visibility) VALUES ($1, $2)
     ON CONFLICT (org_id) DO UPDATE SET agent_visibility = EXCLUDED.agent_visibility, updated_at = now()`,
    [orgId, value],
  );
}

/** A conversation's facts after a run of its events, for upsertConversations. */
export interface ConversationFacts {
  conversationId: string;
  orgId: string;
  contactId: string | null;
  chatnetAccountId: string | null;
  /** Whether an event of the run said who the assignee is (then `assigneeId`, null for nobody). */
  assigneeKnown: boolean;
  assigneeId: string | null;
}

/**
 * Conversations as their events state them, each at most once (its events folded in order first): a field the events
 * lack (null) keeps what is known, and the assignee changes only where an event stated it. Two statements whatever
 * their number: one for the rows that state the assignee, one for those that keep it. Another org's row is left alone.
 */
export async function upsertConversations(db: Queryable, list: ConversationFacts[]): Promise<void> {
  for (const known of [true, false]) {
    const rows = list.filter((c) => c.assigneeKnown === known);
    if (rows.length === 0) continue;
    await db.query({
      name: known ? 'crm_conversation_owners_upsert_assigned' : 'crm_conversation_owners_upsert',
      text: `INSERT INTO conversation_owners (conversation_id, org_id, contact_id, chatnet_account_id, assignee_id)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[])
       ON CONFLICT (conversation_id) DO UPDATE SET
         contact_id = COALESCE(EXCLUDED.contact_id, conversation_owners.contact_id),
         chatnet_account_id = COALESCE(EXCLUDED.chatnet_account_id, conversation_owners.chatnet_account_id),
         assignee_id = ${known ? 'EXCLUDED.assignee_id' : 'conversation_owners.assignee_id'},
         updated_at = now()
       WHERE conversation_owners.org_id = EXCLUDED.org_id`,
      values: [
        rows.map((c) => c.conversationId),
        rows.map((c) => c.orgId),
        rows.map((c) => c.contactId),
        rows.map((c) => c.chatnetAccountId),
        rows.map((c) => c.assigneeId),
      ],
    });
  }
}

/**
 * Conversations from messaging's one-time snapshot: inserted only where crm has no row yet. A row crm has came
 * from a conversation event, which is at least as new as the snapshot, so it is kept.
 */
export async function fillConversations(
  db: Queryable,
  orgId: string,
  list: { conversationId: string; contactId: string | null; chatnetAccountId: string | null; assigneeId: string | null }[],
): Promise<number> {
  if (list.length === 0) return 0;
  const { rowCount } = await db.query(
    `INSERT INTO conversation_owners (conversation_id, org_id, contact_id, chatnet_account_id, assignee_id)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[])
     ON CONFLICT (conversation_id) DO NOTHING`,
    [
      list.map((c) => c.conversationId),
      list.map(() => orgId),
      list.map((c) => c.contactId),
      list.map((c) => c.chatnetAccountId),
      list.map((c) => c.assigneeId),
    ],
  );
  return rowCount ?? 0;
}

export async function setAccountUsers(db: Queryable, orgId: string, chatnetAccountId: string, userIds: string[]): Promise<void> {
  await db.query(
    `INSERT INTO account_users (org_id, chatnet_account_id, user_ids) VALUES ($1, $2, $3::uuid[])
     ON CONFLICT (org_id, chatnet_account_id) DO UPDATE SET user_ids = EXCLUDED.user_ids, updated_at = now()`,
    [orgId, chatnetAccountId, userIds],
  );
}
