import { AppError, invalid, type OrgContext } from '@crm/grpc-kit';
import { messagingRules } from '@crm/validation';
import type { Deps } from '../deps';
import type { MessageRef, ThreadType } from '../drivers';
import { loadAccount } from '../accounts';

/** A recall or a reaction as messaging asks for it (also as a peer forwards it: the holder trusts nothing it gets). */
export interface MessageActionRequest {
  accountId: string;
  threadId?: string;
  threadType?: string;
  chatnetMessageId?: string;
  cliMsgId?: string;
  emoji?: string;
}

const required = (field: string, v: string | undefined): string => {
  const s = (v ?? '').trim();
  if (!s) throw invalid(field, 'is required');
  if (s.length > 200) throw invalid(field, 'must be at most 200 characters');
  return s;
};

/** The message a recall or a reaction names, checked. */
export function messageRefOf(req: MessageActionRequest): MessageRef {
  const threadType = (req.threadType || 'user') as ThreadType;
  if (threadType !== 'user' && threadType !== 'group') throw invalid('threadType', 'must be user or group');
  return {
    threadId: required('threadId', req.threadId),
    threadType,
    chatnetMessageId: required('chatnetMessageId', req.chatnetMessageId),
    cliMsgId: (req.cliMsgId ?? '').trim().slice(0, 200),
  };
}

/** A reaction: one emoji (or network code) without spaces, as messaging states it; empty takes the reaction back. */
export const emojiOf = (value: string | undefined): string => messagingRules.reactionEmoji(value, true);

/** The account, which must be connected; NOT_FOUND outside the org. */
async function connectedAccount(deps: Deps, ctx: OrgContext, accountId: string) {
  const row = await loadAccount(deps, ctx.orgId, accountId);
  if (row.status !== 'connected') {
    throw new AppError('failed_precondition', 'The chat-network account is not connected', { code: 'account_not_connected' });
  }
  return row;
}

/**
 * RecallChatMessage: the account recalls a message it sent (zca `undo`), on the instance holding its session.
 * NOT_FOUND outside the org, FAILED_PRECONDITION when not connected or not live, UNAVAILABLE when the network refused.
 */
export async function recallChatMessage(deps: Deps, ctx: OrgContext, req: MessageActionRequest) {
  const ref = messageRefOf(req);
  const row = await connectedAccount(deps, ctx, req.accountId);
  await deps.peers.onHolder(
    row.id,
    () => deps.sessions.recall(row.id, ctx.orgId, ref, ctx),
    async (peer) => {
      await peer.PeerRecall({ ...req, accountId: row.id }, { orgId: ctx.orgId, requestId: ctx.requestId, traceparent: ctx.traceparent });
    },
  );
  return { ok: true, message: 'Recalled on the network' };
}

/** ReactToChatMessage: the account's reaction on a message (zca `addReaction`); errors as RecallChatMessage. */
export async function reactToChatMessage(deps: Deps, ctx: OrgContext, req: MessageActionRequest) {
  const ref = messageRefOf(req);
  const emoji = emojiOf(req.emoji);
  const row = await connectedAccount(deps, ctx, req.accountId);
  await deps.peers.onHolder(
    row.id,
    () => deps.sessions.react(row.id, ctx.orgId, ref, emoji, ctx),
    async (peer) => {
      await peer.PeerReact({ ...req, accountId: row.id }, { orgId: ctx.orgId, requestId: ctx.requestId, traceparent: ctx.traceparent });
    },
  );
  return { ok: true, message: emoji ? 'Reaction sent to the network' : 'Reaction taken back on the network' };
}
