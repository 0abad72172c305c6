import { AppError, invalid, OrgContext } from '@crm/grpc-kit';
import { isUuid } from '@crm/validation';
import type { Deps } from '../deps';
import type { QuotedMessage, ThreadType } from '../drivers';
import type { AttachmentRef, Outbound } from '../pool';
import { loadAccount } from '../accounts';

export interface SendRequest {
  accountId: string;
  threadId: string;
  threadType: string;
  content: string;
  contentType: string;
  clientMessageId: string;
  attachments?: Array<{ id?: string; fileName?: string; mimeType?: string; size?: number; sha256?: string }>;
  /** A message field decodes as null when the sender left it out. */
  quote?: { chatnetMessageId?: string; cliMsgId?: string; fromUid?: string; content?: string; contentType?: string; sentAt?: string } | null;
}

const MAX_CONTENT = 20_000;
/** Files one message may carry (messaging's limit too). */
export const MAX_FILES = 10;

/** Validate a send and normalise its defaults (threadType user, contentType text); a message of files only has no text. */
export function outboundOf(req: SendRequest, maxFileBytes: number): Outbound & { clientMessageId: string } {
  const threadId = (req.threadId ?? '').trim();
  if (!threadId) throw invalid('threadId', 'is required');
  const threadType = (req.threadType || 'user') as ThreadType;
  if (threadType !== 'user' && threadType !== 'group') throw invalid('threadType', 'must be user or group');
  const attachments = attachmentsOf(req.attachments ?? [], maxFileBytes);
  const content = req.content ?? '';
  if (!content.trim() && attachments.length === 0) throw invalid('content', 'is required');
  if (content.length > MAX_CONTENT) throw invalid('content', `must be at most ${MAX_CONTENT} characters`);
  const contentType = (req.contentType || 'text').trim();
  if (contentType.length > 50) throw invalid('contentType', 'must be at most 50 characters');
  const clientMessageId = (req.clientMessageId ?? '').trim();
  if (clientMessageId.length > 200) throw invalid('clientMessageId', 'must be at most 200 characters');
  const quote = req.quote ? quoteOf(req.quote) : undefined;
  return { threadId, threadType, content, contentType, clientMessageId, ...(attachments.length ? { attachments } : {}), ...(quote ? { quote } : {}) };
}

/** The message a send quotes: its network id is required, the rest as messaging stored it. */
function quoteOf(q: NonNullable<SendRequest['quote']>): QuotedMessage {
  const chatnetMessageId = (q.chatnetMessageId ?? '').trim();
  if (!chatnetMessageId || chatnetMessageId.length > 200) throw invalid('quote.chatnetMessageId', 'must be 1 to 200 characters');
  const sentAt = new Date(q.sentAt ?? '');
  if (Number.isNaN(sentAt.getTime())) throw invalid('quote.sentAt', 'must be a date');
  const content = q.content ?? '';
  if (content.length > MAX_CONTENT) throw invalid('quote.content', `must be at most ${MAX_CONTENT} characters`);
  return {
    chatnetMessageId,
    cliMsgId: (q.cliMsgId ?? '').trim().slice(0, 200),
    fromUid: (q.fromUid ?? '').trim().slice(0, 200),
    content,
    contentType: (q.contentType ?? '').trim().slice(0, 50) || 'text',
    sentAt,
  };
}

function attachmentsOf(list: NonNullable<SendRequest['attachments']>, maxFileBytes: number): AttachmentRef[] {
  if (list.length > MAX_FILES) throw invalid('attachments', `at most ${MAX_FILES} files per message`);
  return list.map((a, i) => {
    const id = (a.id ?? '').trim();
    if (!isUuid(id)) throw invalid(`attachments.${i}.id`, 'must be an attachment id');
    const fileName = (a.fileName ?? '').trim();
    if (!fileName || fileName.length > 255) throw invalid(`attachments.${i}.fileName`, 'must be 1 to 255 characters');
    const size = Number(a.size ?? 0);
    if (!Number.isInteger(size) || size < 1 || size > maxFileBytes) throw invalid(`attachments.${i}.size`, `must be from 1 to ${maxFileBytes} bytes`);
    return { id, fileName, mimeType: (a.mimeType ?? '').trim() || 'application/octet-stream', size };
  });
}

/**
 * SendChatMessage: NOT_FOUND when the account is not in the org, FAILED_PRECONDITION when it is not
 * connected or no instance holds it live. Runs on the instance holding the session (forwarded there), which
 * streams the message's files from messaging itself: the forwarded call carries their ids, never their bytes.
 */
export async function sendChatMessage(deps: Deps, ctx: OrgContext, req: SendRequest) {
  const { orgId } = ctx;
  const row = await loadAccount(deps, orgId, req.accountId);
  const m = outboundOf(req, deps.config.ATTACHMENT_MAX_BYTES);
  if (row.status !== 'connected') {
    throw new AppError('failed_precondition', 'The chat-network account is not connected', { code: 'account_not_connected' });
  }
  return deps.peers.onHolder(
    row.id,
    () => deps.sessions.send(row.id, orgId, m, m.clientMessageId, { requestId: ctx.requestId, origin: ctx.origin, traceparent: ctx.traceparent }),
    // The quote's time travels as text, as in the request. The origin goes along: the holder reads the files under it.
    (peer) =>
      peer.PeerSend(
        { message: { ...m, accountId: row.id, quote: req.quote ?? undefined } },
        { orgId, requestId: ctx.requestId, origin: ctx.origin, traceparent: ctx.traceparent },
      ),
  );
}
