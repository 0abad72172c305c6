import { OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as settings from './visibility.repo';

/**
 * Inbox visibility. With the org setting `assigned`, a signed-in agent works only the conversations assigned to
 * them and the unassigned ones of the accounts that list them; everyone else (team leads and above, and API-key
 * integrations, which act for the organization rather than a person) sees the whole org. Every conversation
 * query takes the viewer from here and applies `visibleSql` (visibility.repo.ts), so a conversation an agent
 * may not see is simply not found: 404, like another org's id.
 */

/** The user id the visibility rule applies to, or null when the caller sees every conversation of the org. */
export function viewerOf(ctx: OrgContext): string | null {
  return ctx.role === 'agent' && ctx.userId ? ctx.userId : null;
}

/** For the gateway's socket routing: the setting and every account's listed users, fetched once per org and cached there. */
export async function audience(deps: Deps, ctx: OrgContext) {
  const { orgId } = ctx;
  const [agentVisibility, accounts] = await Promise.all([settings.getVisibility(deps.pool, orgId), settings.accountUsers(deps.pool, orgId)]);
  return { agentVisibility, accounts };
}
