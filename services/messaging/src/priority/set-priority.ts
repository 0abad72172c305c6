import { notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import { isUuid, messagingRules as rules } from '@crm/validation';
import type { Deps } from '../deps';
import { convs, EVENTS } from '../conversations';
import { viewerOf } from '../visibility';

/**
 * PUT /conversations/:id/priority and automation's set_priority: low, medium, high, urgent, or none ("" over gRPC,
 * null over HTTP). Any role that works conversations may set it, on those it may see (404 otherwise, as for another
 * org's). A change publishes `conversation.priority_changed` in its transaction, as status changes do; asking for
 * the priority it already has changes and announces nothing (so a rule reacting to the event cannot loop on it).
 */
export async function setPriority(deps: Deps, ctx: OrgContext, req: { id: string; priority?: string }) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  const priority = rules.priorityOf(req.priority ?? '');
  const changed = await withTransaction(deps.pool, async (db) => {
    const conv = isUuid(req.id) ? await convs.findById(db, orgId, req.id, true, viewerOf(ctx)) : undefined;
    if (!conv) throw notFound('Conversation');
    const previous = convs.priorityName(conv.priority);
    if (previous === priority) return false;
    await convs.setPriority(db, orgId, conv.id, priority);
    await enqueueEvent(db, {
      type: EVENTS.conversationPriorityChanged,
      orgId,
      data: {
        conversationId: conv.id,
        contactId: conv.contact_id,
        // Who may see it (the gateway routes the socket event by them, as for status changes).
        chatnetAccountId: conv.chatnet_account_id,
        assigneeId: conv.assignee_id,
        priority,
        previousPriority: previous,
        changedBy: ctx.userId || null,
      },
      traceparent: ctx.traceparent,
    });
    return true;
  });
  deps.log.debug({ conversationId: req.id, priority, changed, ...traceFields(ctx) }, 'conversation priority set');
  return convs.toConversation((await convs.findById(deps.pool, orgId, req.id))!);
}
