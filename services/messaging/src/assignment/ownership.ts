import { forbidden, invalid, notFound, requireCan, roleRank, traceFields, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import { convs, type ConversationRow, EVENTS } from '../conversations';
import { isUuid } from '@crm/validation';
import { viewerOf } from '../visibility';

export interface AssignRequest {
  id: string;
  /** Absent = nobody. */
  userId?: string;
  teamId?: string;
  /** The team changes only when the request named it (absent teamId then = no team). */
  teamIdSet?: boolean;
}

export interface Owner {
  assigneeId: string | null;
  teamId: string | null;
}

function optionalId(value: string | undefined, field: string): string | null {
  if (value === undefined || value === '') return null;
  if (!isUuid(value)) throw invalid(field, 'must be an id or null');
  return value.toLowerCase();
}

/**
 * Agents work their own queue: they may take an unassigned conversation (themselves as assignee) or release one
 * assigned to them, and leave its team alone. Team leads, admins and owners hand conversations to anyone.
 * Judged against the conversation as it is under the row lock, so two agents taking it at once cannot both win.
 */
export function checkMayAssign(ctx: OrgContext, current: ConversationRow, next: Owner): void {
  if (roleRank(ctx.role) >= roleRank('team_lead')) return;
  if (next.teamId !== current.team_id) throw forbidden('Only team leads, admins and owners change the team of a conversation');
  if (next.assigneeId === current.assignee_id) return;
  const me = ctx.userId || undefined;
  const taking = current.assignee_id === null && next.assigneeId === me;
  const releasing = current.assignee_id === me && next.assigneeId === null;
  if (me && (taking || releasing)) return;
  throw forbidden(
    current.assignee_id !== null && current.assignee_id !== me
      ? 'This conversation is assigned to someone else; only team leads, admins and owners reassign it'
      : 'Agents may only take an unassigned conversation themselves or release their own',
  );
}

/** The assignee must be an active user and the team a team of the caller's org (identity says; another org's ids are unknown there). */
async function checkOwnerExists(deps: Deps, ctx: OrgContext, current: ConversationRow, next: Owner): Promise<void> {
  if (next.assigneeId && next.assigneeId !== current.assignee_id) {
    const user = await deps.remote.orgUser(ctx, next.assigneeId);
    if (!user) throw invalid('userId', 'is not a user of this organization');
    if (user.status !== 'active') throw invalid('userId', 'is not an active user');
  }
  if (next.teamId && next.teamId !== current.team_id) {
    if (!(await deps.remote.orgTeam(ctx, next.teamId))) throw invalid('teamId', 'is not a team of this organization');
  }
}

/** PUT /conversations/:id/assignee → the conversation; `conversation.assigned` when the assignee or team changed. */
export async function assign(deps: Deps, ctx: OrgContext, req: AssignRequest) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  const assigneeId = optionalId(req.userId, 'userId');
  const teamId = req.teamIdSet ? optionalId(req.teamId, 'teamId') : undefined;
  const load = async (db: Parameters<typeof convs.findById>[0], lock: boolean) => {
    const conv = isUuid(req.id) ? await convs.findById(db, orgId, req.id, lock, viewerOf(ctx)) : undefined;
    if (!conv) throw notFound('Conversation');
    return conv;
  };
  const ownerFor = (conv: ConversationRow): Owner => ({ assigneeId, teamId: teamId === undefined ? conv.team_id : teamId });

  // Permission and identity's answers first, without holding the row lock across a remote call.
  const before = await load(deps.pool, false);
  checkMayAssign(ctx, before, ownerFor(before));
  await checkOwnerExists(deps, ctx, before, ownerFor(before));

  const changed = await withTransaction(deps.pool, async (db) => {
    const conv = await load(db, true);
    const next = ownerFor(conv);
    checkMayAssign(ctx, conv, next);
    if (next.assigneeId === conv.assignee_id && next.teamId === conv.team_id) return false;
    await convs.setOwner(db, orgId, conv.id, next.assigneeId, next.teamId);
    await enqueueEvent(db, {
      type: EVENTS.conversationAssigned,
      orgId,
      data: {
        conversationId: conv.id,
        contactId: conv.contact_id,
        chatnetAccountId: conv.chatnet_account_id,
        assigneeId: next.assigneeId,
        teamId: next.teamId,
        previousAssigneeId: conv.assignee_id,
        assignedBy: ctx.userId || null,
        reason: null,
      },
      traceparent: ctx.traceparent,
    });
    return true;
  });
  deps.log.debug({ conversationId: req.id, assigneeId, changed, ...traceFields(ctx) }, 'conversation assignment');
  return convs.toConversation((await convs.findById(deps.pool, orgId, req.id))!);
}
