import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { enqueueEvent, recordAudit } from '@crm/events';
import type { Deps } from '../deps';
import * as settings from '../db/visibility.repo';
import { AGENT_VISIBILITIES, AgentVisibility } from '../db/visibility.repo';
import { EVENTS } from './events';

/**
 * Inbox visibility. With the org setting `assigned`, a signed-in agent works only the conversations assigned to
 * them and the unassigned ones of the accounts that list them; everyone else (team leads and above, and API-key
 * integrations, which act for the organization rather than a person) sees the whole org. Every conversation
 * query takes the viewer from here and applies `visibleSql` (db/visibility.repo.ts), so a conversation an agent
 * may not see is simply not found: 404, like another org's id.
 */

/** The user id the visibility rule applies to, or null when the caller sees every conversation of the org. */
export function viewerOf(ctx: OrgContext): string | null {
  return ctx.role === 'agent' && ctx.userId ? ctx.userId : null;
}

export async function get(deps: Deps, ctx: OrgContext) {
  return { agentVisibility: await settings.getVisibility(deps.pool, ctx.orgId) };
}

/** PUT /settings/inbox (admin and owner): audited, and announced so the gateway and crm route by it. */
export async function update(deps: Deps, ctx: OrgContext, req: { agentVisibility?: string }) {
  requireCan(ctx, 'settings:edit');
  const orgId = ctx.orgId;
  const value = req.agentVisibility ?? '';
  if (!(AGENT_VISIBILITIES as readonly string[]).includes(value)) throw invalid('agentVisibility', `must be one of ${AGENT_VISIBILITIES.join(', ')}`);
  const next = value as AgentVisibility;
  await withTransaction(deps.pool, async (db) => {
    const previous = await settings.setVisibility(db, orgId, next);
    if (previous === next) return;
    await enqueueEvent(db, { type: EVENTS.inboxSettingsUpdated, orgId, data: { agentVisibility: next } });
    await recordAudit(db, ctx, {
      action: 'settings.inbox_updated',
      resourceType: 'inbox_settings',
      resourceId: null,
      details: { agentVisibility: { from: previous, to: next } },
    });
  });
  return { agentVisibility: next };
}

/** For the gateway's socket routing: the setting and every account's listed users, fetched once per org and cached there. */
export async function audience(deps: Deps, ctx: OrgContext) {
  const { orgId } = ctx;
  const [agentVisibility, accounts] = await Promise.all([settings.getVisibility(deps.pool, orgId), settings.accountUsers(deps.pool, orgId)]);
  return { agentVisibility, accounts };
}
