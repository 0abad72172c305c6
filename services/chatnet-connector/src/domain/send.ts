import { AppError, CallContext, invalid, requireOrg } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import type { ThreadType } from '../drivers/driver';
import { loadAccount } from './accounts';

export interface SendRequest {
  accountId: string;
  threadId: string;
  threadType: string;
  content: string;
  contentType: string;
  clientMessageId: string;
}

const MAX_CONTENT = 20_000;

/** Validate a send and normalise its defaults (threadType user, contentType text). */
export function outboundOf(req: SendRequest): { threadId: string; threadType: ThreadType; content: string; contentType: string; clientMessageId: string } {
  const threadId = (req.threadId ?? '').trim();
  if (!threadId) throw invalid('threadId', 'is required');
  const threadType = (req.threadType || 'user') as ThreadType;
  if (threadType !== 'user' && threadType !== 'group') throw invalid('threadType', 'must be user or group');
  const content = req.content ?? '';
  if (!content.trim()) throw invalid('content', 'is required');
  if (content.length > MAX_CONTENT) throw invalid('content', `must be at most ${MAX_CONTENT} characters`);
  const contentType = (req.contentType || 'text').trim();
  if (contentType.length > 50) throw invalid('contentType', 'must be at most 50 characters');
  const clientMessageId = (req.clientMessageId ?? '').trim();
  if (clientMessageId.length > 200) throw invalid('clientMessageId', 'must be at most 200 characters');
  return { threadId, threadType, content, contentType, clientMessageId };
}

/**
 * SendChatMessage: NOT_FOUND when the account is not in the org, FAILED_PRECONDITION when it is not
 * connected or no instance holds it live. Runs on the instance holding the session (forwarded there).
 */
export async function sendChatMessage(deps: Deps, ctx: CallContext, req: SendRequest) {
  const orgId = requireOrg(ctx);
  const row = await loadAccount(deps, orgId, req.accountId);
  const m = outboundOf(req);
  if (row.status !== 'connected') {
    throw new AppError('failed_precondition', 'The chat-network account is not connected', { code: 'account_not_connected' });
  }
  return deps.peers.onHolder(
    row.id,
    () => deps.sessions.send(row.id, orgId, m, m.clientMessageId),
    (peer) => peer.PeerSend({ message: { ...m, accountId: row.id } }, { orgId, requestId: ctx.requestId }),
  );
}
