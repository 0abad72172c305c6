import { messagingRules } from '@crm/validation';
import { Queryable } from '@crm/db';

export const AGENT_VISIBILITIES = messagingRules.AGENT_VISIBILITIES;
export type AgentVisibility = (typeof AGENT_VISIBILITIES)[number];

/**
 * The one visibility rule, as SQL over the conversation alias `c`, for the agent whose id is bound at `userRef`:
 * true when the org's setting is not `assigned`, or the conversation is assigned to them, or it is unassigned on
 * an account whose assignment lists them. The setting is read in the same statement (a primary-key probe), so a
 * change applies to the next query on every instance with no cache to invalidate.
 */
export function visibleSql(userRef: string, alias = 'c'): string {
  return `(NOT EXISTS (SELECT 1 FROM inbox_settings vs WHERE vs.org_id = ${alias}.org_id AND vs.agent_visibility = 'assigned')
    OR ${alias}.assignee_id = ${userRef}
    OR (${alias}.assignee_id IS NULL AND EXISTS (SELECT 1 FROM account_assignments va
          WHERE va.org_id = ${alias}.org_id AND va.chatnet_account_id = ${alias}.chatnet_account_id AND ${userRef} = ANY(va.user_ids))))`;
}

export async function getVisibility(db: Queryable, orgId: string): Promise<AgentVisibility> {
  const { rows } = await db.query<{ agent_visibility: AgentVisibility }>('SELECT agent_visibility FROM inbox_settings WHERE org_id = $1', [orgId]);
  return rows[0]?.agent_visibility ?? 'all';
}

/** Every account's listed users, for the gateway's socket routing (small: one row per chat-network account). */
export async function accountUsers(db: Queryable, orgId: string): Promise<{ chatnetAccountId: string; userIds: string[] }[]> {
  const { rows } = await db.query<{ chatnet_account_id: string; user_ids: string[] }>(
    'SELECT chatnet_account_id, user_ids::text[] AS user_ids FROM account_assignments WHERE org_id = $1',
    [orgId],
  );
  return rows.map((r) => ({ chatnetAccountId: r.chatnet_account_id, userIds: r.user_ids }));
}
