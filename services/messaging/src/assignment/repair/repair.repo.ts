import type { Queryable } from '@crm/db';

/** What a move needs of a conversation: where it is and what its conversation.assigned says. */
export interface MovableConversation {
  id: string;
  org_id: string;
  chatnet_account_id: string;
  contact_id: string | null;
  team_id: string | null;
  assignee_id: string | null;
}

const MOVABLE = 'c.id, c.org_id, c.chatnet_account_id, c.contact_id, c.team_id, c.assignee_id';
/** Open: not closed, not archived (snoozed and pending ones are still someone's work). */
const OPEN = `c.status NOT IN ('closed', 'archived')`;

/**
 * The user's open conversations to release, locked: all of them (deactivated), or only those of accounts that
 * assign online users only (gone offline). Ordered by account, then age, so each account is handed out in one go.
 */
export async function openOf(db: Queryable, orgId: string, userId: string, onlyOnlineAccounts: boolean): Promise<MovableConversation[]> {
  const accounts = onlyOnlineAccounts
    ? ` AND c.chatnet_account_id IN (SELECT chatnet_account_id FROM account_assignments WHERE org_id = $1 AND only_online)`
    : '';
  const { rows } = await db.query<MovableConversation>(
    `SELECT ${MOVABLE} FROM conversations c WHERE c.org_id = $1 AND c.assignee_id = $2 AND ${OPEN}${accounts}
     ORDER BY c.chatnet_account_id, c.created_at, c.id FOR UPDATE OF c`,
    [orgId, userId],
  );
  return rows;
}

/** The accounts whose backlog a user may take: drainBacklog on and the user listed. Locked (the rotation's lock). */
export async function drainingAccounts(
  db: Queryable,
  orgId: string,
  userId: string,
): Promise<Array<{ chatnet_account_id: string; max_open_per_user: number | null; only_online: boolean }>> {
  const { rows } = await db.query<{ chatnet_account_id: string; max_open_per_user: number | null; only_online: boolean }>(
    `SELECT chatnet_account_id::text, max_open_per_user, only_online FROM account_assignments
     WHERE org_id = $1 AND drain_backlog AND user_ids @> ARRAY[$2::uuid]
     ORDER BY chatnet_account_id FOR UPDATE`,
    [orgId, userId],
  );
  return rows;
}

/** The oldest unassigned open (active or pending) conversations of these accounts, locked; others' locked ones skipped. */
export async function backlog(db: Queryable, orgId: string, accountIds: string[], limit: number): Promise<MovableConversation[]> {
  const { rows } = await db.query<MovableConversation>(
    `SELECT ${MOVABLE} FROM conversations c
     WHERE c.org_id = $1 AND c.chatnet_account_id = ANY($2::uuid[]) AND c.assignee_id IS NULL AND c.status IN ('active', 'pending')
     ORDER BY c.created_at, c.id LIMIT $3 FOR UPDATE OF c SKIP LOCKED`,
    [orgId, accountIds, limit],
  );
  return rows;
}

/** Many conversations to their new assignees (null: nobody) in one statement. */
export async function moveMany(db: Queryable, orgId: string, moves: Array<{ id: string; assigneeId: string | null }>): Promise<void> {
  if (moves.length === 0) return;
  await db.query(
    `UPDATE conversations c SET assignee_id = m.assignee_id, last_activity_at = now()
     FROM unnest($2::uuid[], $3::uuid[]) AS m(id, assignee_id)
     WHERE c.org_id = $1 AND c.id = m.id`,
    [orgId, moves.map((m) => m.id), moves.map((m) => m.assigneeId)],
  );
}

/**
 * For the reply timers of a batch of inbound messages: which of these conversations are assigned, open, and on an
 * account with a reply timeout (and its minutes).
 */
export async function timedConversations(
  db: Queryable,
  ids: string[],
): Promise<Array<{ id: string; org_id: string; assignee_id: string; minutes: number }>> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; org_id: string; assignee_id: string; minutes: number }>(
    `SELECT c.id::text, c.org_id::text, c.assignee_id::text, a.reply_timeout_minutes AS minutes
     FROM conversations c JOIN account_assignments a ON a.org_id = c.org_id AND a.chatnet_account_id = c.chatnet_account_id
     WHERE c.id = ANY($1::uuid[]) AND c.assignee_id IS NOT NULL AND a.reply_timeout_minutes IS NOT NULL AND ${OPEN}`,
    [ids],
  );
  return rows;
}
