import { AppError, invalid, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import type { ReadMessage, ThreadType } from '../drivers';
import { loadAccount } from '../accounts';

/** The network takes at most this many messages in one "seen" call (zca-js's limit). */
export const MARK_SEEN_MAX = 50;

export interface MarkSeenRequest {
  accountId: string;
  threadId: string;
  threadType: string;
  messages?: Array<{ chatnetMessageId?: string; cliMsgId?: string; fromUid?: string; contentType?: string; sentAt?: string }>;
}

export interface MarkSeen {
  threadId: string;
  threadType: ThreadType;
  messages: ReadMessage[];
}

const id = (field: string, v: string | undefined): string => {
  const s = (v ?? '').trim();
  if (!s) throw invalid(field, 'is required');
  if (s.length > 200) throw invalid(field, 'must be at most 200 characters');
  return s;
};

/** Validate a MarkThreadSeen (also on the holder, which trusts nothing a peer forwards). */
export function markSeenOf(req: MarkSeenRequest): MarkSeen {
  const threadId = id('threadId', req.threadId);
  const threadType = (req.threadType || 'user') as ThreadType;
  if (threadType !== 'user' && threadType !== 'group') throw invalid('threadType', 'must be user or group');
  const list = req.messages ?? [];
  if (list.length === 0) throw invalid('messages', 'must name at least one message');
  if (list.length > MARK_SEEN_MAX) throw invalid('messages', `must have at most ${MARK_SEEN_MAX} entries`);
  const messages = list.map((m, i) => {
    const sentAt = new Date(m.sentAt ?? '');
    if (Number.isNaN(sentAt.getTime())) throw invalid(`messages.${i}.sentAt`, 'must be a date');
    return {
      chatnetMessageId: id(`messages.${i}.chatnetMessageId`, m.chatnetMessageId),
      cliMsgId: id(`messages.${i}.cliMsgId`, m.cliMsgId),
      fromUid: id(`messages.${i}.fromUid`, m.fromUid),
      contentType: (m.contentType ?? '').trim().slice(0, 50) || 'text',
      sentAt,
    };
  });
  return { threadId, threadType, messages };
}

/**
 * MarkThreadSeen: the account tells the network it read messages of a thread, on the instance holding its session.
 * NOT_FOUND outside the org, FAILED_PRECONDITION when not connected or not live, UNAVAILABLE when the network refused.
 */
export async function markThreadSeen(deps: Deps, ctx: OrgContext, req: MarkSeenRequest) {
  const { orgId } = ctx;
  const row = await loadAccount(deps, orgId, req.accountId);
  const seen = markSeenOf(req);
  if (row.status !== 'connected') {
    throw new AppError('failed_precondition', 'The chat-network account is not connected', { code: 'account_not_connected' });
  }
  await deps.peers.onHolder(
    row.id,
    () => deps.sessions.markSeen(row.id, orgId, seen, ctx),
    async (peer) => {
      await peer.PeerMarkSeen({ ...req, accountId: row.id }, { orgId, requestId: ctx.requestId, traceparent: ctx.traceparent });
    },
  );
  return { ok: true, message: 'Marked seen on the network' };
}
