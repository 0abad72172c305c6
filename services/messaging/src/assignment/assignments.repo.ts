import type { Queryable } from '@crm/db';

export const ASSIGNMENT_MODES = ['manual', 'round_robin'] as const;
export type AssignmentMode = (typeof ASSIGNMENT_MODES)[number];
/** What a reply timeout does (issue #29 item 5): hand the conversation on, take it from its assignee, or tell the team leads. */
export const TIMEOUT_ACTIONS = ['reassign', 'unassign', 'notify_leads'] as const;
export type TimeoutAction = (typeof TIMEOUT_ACTIONS)[number];

export interface AssignmentRow {
  mode: AssignmentMode;
  user_ids: string[];
  max_open_per_user: number | null;
  next_index: number;
  only_online: boolean;
  reply_timeout_minutes: number | null;
  on_timeout: TimeoutAction | null;
  drain_backlog: boolean;
}

/** The settings a PUT replaces (everything but the rotation cursor). */
export interface AssignmentSettings {
  mode: AssignmentMode;
  userIds: string[];
  maxOpenPerUser: number | null;
  onlyOnline: boolean;
  replyTimeoutMinutes: number | null;
  onTimeout: TimeoutAction | null;
  drainBacklog: boolean;
}

const COLUMNS = 'mode, user_ids::text[] AS user_ids, max_open_per_user, next_index, only_online, reply_timeout_minutes, on_timeout, drain_backlog';

/** An account's assignment settings; `lock` takes the row lock that serialises the rotation across instances. */
export async function find(db: Queryable, orgId: string, accountId: string, lock = false): Promise<AssignmentRow | undefined> {
  const { rows } = await db.query<AssignmentRow>(
    `SELECT ${COLUMNS} FROM account_assignments WHERE org_id = $1 AND chatnet_account_id = $2${lock ? ' FOR UPDATE' : ''}`,
    [orgId, accountId],
  );
  return rows[0];
}

/** The users listed for an account's conversations (whatever the mode); none when it was never configured. */
export async function listedUsers(db: Queryable, orgId: string, accountId: string): Promise<string[]> {
  return (await find(db, orgId, accountId))?.user_ids ?? [];
}

/** Replace the settings; the rotation cursor stays where it was (taken modulo the new list when used). */
export async function upsert(db: Queryable, orgId: string, accountId: string, s: AssignmentSettings): Promise<AssignmentRow> {
  const { rows } = await db.query<AssignmentRow>(
    `INSERT INTO account_assignments (org_id, chatnet_account_id, mode, user_ids, max_open_per_user, only_online, reply_timeout_minutes, on_timeout, drain_backlog)
     VALUES ($1, $2, $3, $4::uuid[], $5, $6, $7, $8, $9)
     ON CONFLICT (org_id, chatnet_account_id)
     DO UPDATE SET mode = EXCLUDED.mode, user_ids = EXCLUDED.user_ids, max_open_per_user = EXCLUDED.max_open_per_user,
       only_online = EXCLUDED.only_online, reply_timeout_minutes = EXCLUDED.reply_timeout_minutes, on_timeout = EXCLUDED.on_timeout,
       drain_backlog = EXCLUDED.drain_backlog, updated_at = now()
     RETURNING ${COLUMNS}`,
    [orgId, accountId, s.mode, s.userIds, s.maxOpenPerUser, s.onlyOnline, s.replyTimeoutMinutes, s.onTimeout, s.drainBacklog],
  );
  return rows[0];
}

export async function setCursor(db: Queryable, orgId: string, accountId: string, nextIndex: number): Promise<void> {
  await db.query(`UPDATE account_assignments SET next_index = $3 WHERE org_id = $1 AND chatnet_account_id = $2`, [orgId, accountId, nextIndex]);
}

/**
 * Open (not closed, not archived) conversations per user across the org: a person's workload, whichever account
 * it came from. Users with none are absent from the map.
 */
export async function openCounts(db: Queryable, orgId: string, userIds: string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ assignee_id: string; n: number }>(
    `SELECT assignee_id::text, count(*)::int AS n FROM conversations
     WHERE org_id = $1 AND assignee_id = ANY($2::uuid[]) AND status NOT IN ('closed', 'archived')
     GROUP BY assignee_id`,
    [orgId, userIds],
  );
  return new Map(rows.map((r) => [r.assignee_id, r.n]));
}

/**
 * The assignee of the contact's latest earlier conversation on this account that had one (a returning contact),
 * matched by contact id, or by the chat-network uid while the contact is not linked yet.
 */
export async function previousAssignee(
  db: Queryable,
  orgId: string,
  c: { id: string; chatnet_account_id: string; contact_id: string | null; contact_chatnet_uid: string },
): Promise<string | undefined> {
  const byContact = c.contact_id !== null;
  if (!byContact && !c.contact_chatnet_uid) return undefined;
  const { rows } = await db.query<{ assignee_id: string }>(
    `SELECT assignee_id::text FROM conversations
     WHERE org_id = $1 AND chatnet_account_id = $2 AND id <> $3 AND assignee_id IS NOT NULL
       AND ${byContact ? 'contact_id = $4::uuid' : 'contact_chatnet_uid = $4'}
     ORDER BY created_at DESC LIMIT 1`,
    [orgId, c.chatnet_account_id, c.id, byContact ? c.contact_id : c.contact_chatnet_uid],
  );
  return rows[0]?.assignee_id;
}
