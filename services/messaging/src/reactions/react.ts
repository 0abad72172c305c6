import { AppError, requireCan, requireUser, type OrgContext } from '@crm/grpc-kit';
import { messagingRules as rules } from '@crm/validation';
import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import { type convs, messages, EVENTS } from '../conversations';
import { loadVisibleMessage, messageFor } from './message-access';
import { deleteReaction, reactionOf, type ReactorKind, upsertReaction } from './reactions.repo';

/** A reaction as given: one emoji (or a network's reaction code), without spaces (the rule the gateway states too). */
export const emojiOf = (value: string | undefined): string => rules.reactionEmoji(value);

/** message.reaction: who changed their reaction on a message, and to what (null: taken back). */
export function reactionEvent(
  conv: convs.ConversationRow,
  row: messages.MessageRow,
  change: { emoji: string | null; at: Date } & ({ by: 'agent'; userId: string } | { by: 'contact'; fromUid: string }),
) {
  return {
    type: EVENTS.messageReaction,
    orgId: row.org_id,
    data: {
      messageId: row.id,
      conversationId: conv.id,
      contactId: conv.contact_id,
      chatnetAccountId: conv.chatnet_account_id,
      assigneeId: conv.assignee_id,
      emoji: change.emoji,
      by: change.by,
      userId: change.by === 'agent' ? change.userId : null,
      fromUid: change.by === 'contact' ? change.fromUid : null,
      at: change.at.toISOString(),
    },
  };
}

/** Tell the network the account's reaction on a message (an empty emoji takes it back). */
async function toNetwork(deps: Deps, ctx: OrgContext, conv: convs.ConversationRow, row: messages.MessageRow, emoji: string) {
  if (!row.chatnet_message_id) {
    throw new AppError('failed_precondition', 'This message never reached the chat network, so it takes no reaction', { code: 'not_on_network' });
  }
  await deps.remote.reactToChatMessage(
    { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role, requestId: ctx.requestId, origin: ctx.origin, traceparent: ctx.traceparent },
    {
      accountId: conv.chatnet_account_id,
      threadId: conv.thread_id,
      threadType: conv.thread_type,
      chatnetMessageId: row.chatnet_message_id,
      cliMsgId: row.cli_msg_id ?? '',
      emoji,
    },
  );
}

const AGENT = 'agent' satisfies ReactorKind;

/**
 * PUT /messages/:id/reactions: the caller's reaction (one per user: it replaces their previous one), sent to the
 * network through the account first, then stored with `message.reaction`. A recalled message takes none.
 */
export async function reactToMessage(deps: Deps, ctx: OrgContext, req: { id: string; emoji?: string }) {
  requireCan(ctx, 'conversations:write');
  const { userId } = requireUser(ctx);
  const emoji = emojiOf(req.emoji);
  const { row, conv } = await loadVisibleMessage(deps.pool, ctx, req.id);
  if (row.recalled_at) throw new AppError('failed_precondition', 'The message was recalled; it takes no reaction', { code: 'message_recalled' });
  if ((await reactionOf(deps.pool, ctx.orgId, row.id, AGENT, userId)) === emoji) return messageFor(deps, ctx, row);
  await toNetwork(deps, ctx, conv, row, emoji);
  const at = new Date();
  await withTransaction(deps.pool, async (db) => {
    await upsertReaction(db, { orgId: ctx.orgId, messageId: row.id, by: AGENT, userId, emoji, at });
    await enqueueEvent(db, { ...reactionEvent(conv, row, { emoji, at, by: AGENT, userId }), traceparent: ctx.traceparent });
  });
  return messageFor(deps, ctx, (await messages.findById(deps.pool, ctx.orgId, row.id))!);
}

/** DELETE /messages/:id/reactions: take the caller's reaction back (on the network too); none to take is a no-op. */
export async function removeReaction(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  const { userId } = requireUser(ctx);
  const { row, conv } = await loadVisibleMessage(deps.pool, ctx, id);
  if (!(await reactionOf(deps.pool, ctx.orgId, row.id, AGENT, userId))) return messageFor(deps, ctx, row);
  await toNetwork(deps, ctx, conv, row, '');
  const at = new Date();
  await withTransaction(deps.pool, async (db) => {
    if (await deleteReaction(db, ctx.orgId, row.id, AGENT, userId))
      await enqueueEvent(db, { ...reactionEvent(conv, row, { emoji: null, at, by: AGENT, userId }), traceparent: ctx.traceparent });
  });
  return messageFor(deps, ctx, (await messages.findById(deps.pool, ctx.orgId, row.id))!);
}
