import { AppError, requireCan, type OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import { type convs, messages, EVENTS } from '../conversations';
import { loadVisibleMessage, messageFor } from './message-access';

const notRecallable = (why: string) =>
  new AppError('invalid_argument', `This message cannot be recalled: ${why}`, { code: 'not_recallable', details: [{ field: 'id', message: why }] });

/** message.recalled for a message just marked recalled. */
export function recalledEvent(
  conv: convs.ConversationRow,
  row: messages.MessageRow,
  who: { by: 'agent'; userId: string | null } | { by: 'contact'; fromUid: string },
) {
  return {
    type: EVENTS.messageRecalled,
    orgId: row.org_id,
    data: {
      messageId: row.id,
      conversationId: conv.id,
      contactId: conv.contact_id,
      chatnetAccountId: conv.chatnet_account_id,
      assigneeId: conv.assignee_id,
      recalledAt: row.recalled_at!.toISOString(),
      recalledBy: who.by,
      userId: who.by === 'agent' ? who.userId : null,
      fromUid: who.by === 'contact' ? who.fromUid : null,
    },
  };
}

/**
 * POST /messages/:id/recall: take back an outbound message of the org on the network (connector RecallChatMessage,
 * zca `undo`), within the network's window (RECALL_WINDOW_MINUTES after it was sent). The network is asked first; the
 * message is marked recalled (its content kept) and `message.recalled` published only once it agreed. Recalling a
 * recalled message answers it as it is.
 */
export async function recallMessage(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  const { row, conv } = await loadVisibleMessage(deps.pool, ctx, id);
  if (row.direction !== 'outbound') throw notRecallable('only a message the organization sent can be recalled');
  if (row.recalled_at) return messageFor(deps, ctx, row);
  if (!row.chatnet_message_id) throw notRecallable('it never reached the chat network');
  const windowMs = deps.config.RECALL_WINDOW_MINUTES * 60_000;
  if (Date.now() - row.sent_at.getTime() > windowMs) {
    throw new AppError('already_exists', `A message can be recalled only within ${deps.config.RECALL_WINDOW_MINUTES} minutes of sending it`, {
      code: 'recall_window_passed',
    });
  }
  await deps.remote.recallChatMessage(
    { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role, requestId: ctx.requestId, origin: ctx.origin, traceparent: ctx.traceparent },
    {
      accountId: conv.chatnet_account_id,
      threadId: conv.thread_id,
      threadType: conv.thread_type,
      chatnetMessageId: row.chatnet_message_id,
      cliMsgId: row.cli_msg_id ?? '',
    },
  );
  const recalled = await withTransaction(deps.pool, async (db) => {
    const done = await messages.markRecalled(db, ctx.orgId, row.id, 'agent', new Date());
    // Recalled meanwhile (a second click, the contact's app): already announced.
    if (!done) return (await messages.findById(db, ctx.orgId, row.id))!;
    await enqueueEvent(db, { ...recalledEvent(conv, done, { by: 'agent', userId: ctx.userId || null }), traceparent: ctx.traceparent });
    return done;
  });
  return messageFor(deps, ctx, recalled);
}
