import { createHash, randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requirePermission, traceFields, OrgContext } from '@crm/grpc-kit';
import { Queryable, withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import { sendDefinitelyFailed } from '../clients';
import type { Deps } from '../deps';
import { files } from '../attachments';
import { convs, messages } from '../conversations';
import * as requests from './send-requests.repo';
import { ContactTarget, contactTarget, LinkedContact, openConversation, tryUpsertContact } from '../contacts';
import { SEND_SOURCES, SendSource } from '../governor';
import { isUuid, messagingRules as rules, optionalOneOf } from '@crm/validation';
import { viewerOf } from '../visibility';
import { resolveReplyTo, type ResolvedQuote } from '../reactions';
import { messageSentEvent } from './message-sent';
import { networkName } from '../network-names';
import { armAutoClose } from '../auto-close';

const SOURCE_NAMES: Record<SendSource, string> = {
  ui: '',
  public_api: 'API',
  automation: 'Automation',
  campaign: 'Campaign',
  auto: 'Automatic',
  ai: 'AI assistant',
};

interface Target {
  accountId: string;
  threadId: string;
  threadType: 'user' | 'group';
  /** Known when sending into an existing conversation; otherwise found or created by thread. */
  conversation?: convs.ConversationRow;
}

interface Input {
  content: string;
  contentType: string;
  key?: string;
  source: SendSource;
  attachmentIds: string[];
  /** The message of the conversation this one replies to (resolved once the conversation is known). */
  replyToMessageId?: string;
  /** Written in the transaction that stores the message (a scheduled message marks itself sent with it). */
  onStored?: (db: Queryable, messageId: string) => Promise<void>;
}

/** Who is sending and through which operation type; callers without a user default to the stricter budget. */
function sourceOf(ctx: OrgContext, raw: string | undefined): SendSource {
  return optionalOneOf(raw, SEND_SOURCES, 'source') ?? (ctx.userId ? 'ui' : 'automation');
}

export function parseInput(
  ctx: OrgContext,
  req: { content?: string; contentType?: string; clientMessageId?: string; source?: string; attachmentIds?: string[]; replyToMessageId?: string },
): Input {
  const content = req.content ?? '';
  const attachmentIds = [...new Set(req.attachmentIds ?? [])];
  if (attachmentIds.length > rules.MAX_ATTACHMENTS) throw invalid('attachments', rules.TOO_MANY_ATTACHMENTS);
  const bad = attachmentIds.find((id) => !isUuid(id));
  if (bad !== undefined) throw invalid('attachments', `unknown attachment ${bad}`);
  if (!content.trim() && attachmentIds.length === 0) throw invalid('content', 'is required');
  if (content.length > rules.CONTENT_MAX) throw invalid('content', `must be at most ${rules.CONTENT_MAX} characters`);
  const contentType = rules.contentType(req.contentType);
  const key = (req.clientMessageId ?? '').trim();
  if (key.length > rules.IDEMPOTENCY_KEY_MAX) throw invalid('clientMessageId', `must be at most ${rules.IDEMPOTENCY_KEY_MAX} characters`);
  return {
    content,
    contentType,
    key: key || undefined,
    source: sourceOf(ctx, req.source),
    attachmentIds,
    replyToMessageId: (req.replyToMessageId ?? '').trim(),
  };
}

/** The uploads a send names: each the org's, not yet sent with another message and not expired, else 400 naming `attachments`. */
export async function checkUploads(deps: Deps, orgId: string, ids: string[]) {
  const uploads = await files.findMany(deps.pool, orgId, ids);
  for (const id of ids) {
    const f = uploads.find((u) => u.id === id);
    if (!f) throw invalid('attachments', `unknown attachment ${id}`);
    if (f.message_id) throw invalid('attachments', `attachment ${id} was already sent with another message`);
    if (f.expired_at) throw invalid('attachments', `attachment ${id} has expired (its file was deleted)`);
  }
  return uploads;
}

/** Sending is open to every role of the org; callers from other services may carry no role at all. */
function authorize(ctx: OrgContext): string {
  const { orgId } = ctx;
  if (ctx.role) requirePermission(ctx.role, 'conversations:write');
  return orgId;
}

/** SendMessage: into an existing conversation (UI, automation, campaigns). */
export async function sendToConversation(
  deps: Deps,
  ctx: OrgContext,
  req: {
    conversationId: string;
    content?: string;
    contentType?: string;
    clientMessageId?: string;
    source?: string;
    attachmentIds?: string[];
    replyToMessageId?: string;
  },
) {
  const orgId = authorize(ctx);
  const input = parseInput(ctx, req);
  const conv = isUuid(req.conversationId) ? await convs.findById(deps.pool, orgId, req.conversationId, false, viewerOf(ctx)) : undefined;
  if (!conv) throw notFound('Conversation');
  const quote = await resolveReplyTo(deps.pool, orgId, conv.id, input.replyToMessageId);
  return send(
    deps,
    ctx,
    orgId,
    { accountId: conv.chatnet_account_id, threadId: conv.thread_id, threadType: conv.thread_type, conversation: conv },
    input,
    quote,
  );
}

/**
 * A scheduled message falling due (scheduled/sender.ts): sent as its author's UI send into the conversation, with
 * no visibility check (it was checked when it was scheduled), and the scheduled message's id as the idempotency
 * key, so a repeat after a crash answers with the message already sent (here, or by the connector's record of the
 * key) instead of sending again. `onStored` runs in the transaction that stores the message; a replay skips it.
 * A timer's work: its ctx has no traceparent, so the send and its message.sent start a trace of their own.
 */
export async function sendScheduled(
  deps: Deps,
  s: { id: string; orgId: string; createdBy: string | null; conversationId: string; content: string; contentType: string; attachmentIds: string[] },
  onStored: (db: Queryable, messageId: string) => Promise<void>,
) {
  const ctx = { orgId: s.orgId, userId: s.createdBy ?? '', role: '', requestId: `scheduled:${s.id}`, clientIp: '' } as OrgContext;
  const conv = await convs.findById(deps.pool, s.orgId, s.conversationId);
  if (!conv) throw notFound('Conversation');
  const input: Input = { content: s.content, contentType: s.contentType, key: s.id, source: 'ui', attachmentIds: s.attachmentIds, onStored };
  return send(
    deps,
    ctx,
    s.orgId,
    { accountId: conv.chatnet_account_id, threadId: conv.thread_id, threadType: conv.thread_type, conversation: conv },
    input,
  );
}

/**
 * A message the inbox sends by itself (issue #29: the auto-close message, the out-of-hours reply, the CSAT question):
 * source `auto`, no user, no visibility check, `key` as idempotency key (a repeat after a crash answers with the
 * message already sent). `onStored` runs in the transaction that stores the message; a replay skips it. It does not
 * arm auto-close: only a person's (or an integration's) message waits for the contact. The guarded AI auto-reply
 * (issue #32) sends its answers the same way with source `ai`: budgeted apart, and it does arm auto-close.
 * A timer's work (the auto-message sender, auto-close, the AI worker): no traceparent, a trace of its own.
 */
export async function sendAutomatic(
  deps: Deps,
  a: { key: string; orgId: string; conversationId: string; content: string },
  onStored: (db: Queryable, messageId: string) => Promise<void>,
  source: 'auto' | 'ai' = 'auto',
) {
  const ctx = { orgId: a.orgId, userId: '', role: '', requestId: `auto:${a.key}`, clientIp: '' } as OrgContext;
  const conv = await convs.findById(deps.pool, a.orgId, a.conversationId);
  if (!conv) throw notFound('Conversation');
  const input: Input = { content: a.content, contentType: 'text', key: a.key, source, attachmentIds: [], onStored };
  return send(
    deps,
    ctx,
    a.orgId,
    { accountId: conv.chatnet_account_id, threadId: conv.thread_id, threadType: conv.thread_type, conversation: conv },
    input,
  );
}

/** SendToThread: by account and network thread id (public API); the conversation is created when new. */
export async function sendToThread(
  deps: Deps,
  ctx: OrgContext,
  req: {
    chatnetAccountId: string;
    threadId: string;
    threadType?: string;
    content?: string;
    contentType?: string;
    clientMessageId?: string;
    source?: string;
    replyToMessageId?: string;
  },
) {
  const orgId = authorize(ctx);
  const threadId = (req.threadId ?? '').trim();
  if (!threadId) throw invalid('threadId', 'is required');
  if (threadId.length > rules.THREAD_ID_MAX) throw invalid('threadId', `must be at most ${rules.THREAD_ID_MAX} characters`);
  const threadType = optionalOneOf(req.threadType, ['user', 'group'] as const, 'threadType') ?? 'user';
  const input = parseInput(ctx, { ...req, attachmentIds: [] });
  if (!isUuid(req.chatnetAccountId)) throw new AppError('not_found', 'Chat-network account not found', { code: 'account_not_found' });
  // A reply quotes a message of the thread's conversation, which must exist for it to have one.
  const conv = input.replyToMessageId ? await convs.findByThread(deps.pool, orgId, req.chatnetAccountId, threadType, threadId) : undefined;
  const quote = await resolveReplyTo(deps.pool, orgId, conv?.id, input.replyToMessageId);
  return send(deps, ctx, orgId, { accountId: req.chatnetAccountId, threadId, threadType, conversation: conv }, input, quote);
}

/**
 * The one send pipeline. Order matters:
 * 1. idempotency key claimed (a repeat answers with the first result and sends nothing);
 * 2. governor slot reserved for the account and operation type (429 + Retry-After when full);
 * 3. the connector sends through the account's live session (404 unknown account, 422 not connected);
 * 4. the message, counters, reply flags and `message.sent` are stored in one transaction.
 * A send that certainly failed gives back its key and its governor slot.
 */
async function send(deps: Deps, ctx: OrgContext, orgId: string, target: Target, input: Input, quote?: ResolvedQuote) {
  const uploads = await checkUploads(deps, orgId, input.attachmentIds);

  if (input.key) {
    const replay = await claimKey(deps, orgId, input.key, fingerprint(target, input));
    if (replay) return replay;
  }
  const releaseKey = () =>
    input.key
      ? requests
          .release(deps.pool, orgId, input.key)
          .catch((err) => deps.log.error({ err, ...traceFields(ctx) }, 'could not release idempotency key'))
      : undefined;

  let reservation;
  try {
    reservation = await deps.governor.reserve(orgId, target.accountId, input.source);
  } catch (err) {
    await releaseKey();
    throw err;
  }

  const userId = isUuid(ctx.userId) ? ctx.userId : null;
  const senderName = userId
    ? await deps.remote.userName({ orgId, userId, role: ctx.role, requestId: ctx.requestId, traceparent: ctx.traceparent }, userId)
    : SOURCE_NAMES[input.source];
  // The files go to the network themselves: the connector streams each one from our attachments HTTP port.
  const attachments = input.attachmentIds.map((id) => files.toOutbound(uploads.find((u) => u.id === id)!));
  const clientMessageId = input.key ?? randomUUID();

  let sent;
  try {
    sent = await deps.remote.sendChatMessage(
      { orgId, userId: ctx.userId, role: ctx.role || 'agent', requestId: ctx.requestId, traceparent: ctx.traceparent },
      {
        accountId: target.accountId,
        threadId: target.threadId,
        threadType: target.threadType,
        content: input.content,
        contentType: input.contentType,
        clientMessageId,
        attachments,
        ...(quote ? { quote: quote.network } : {}),
      },
    );
  } catch (err) {
    if (sendDefinitelyFailed(err)) {
      await deps.governor.refund(reservation).catch((e) => deps.log.warn({ err: e, ...traceFields(ctx) }, 'governor refund failed'));
      await releaseKey();
    }
    throw err;
  }

  // A thread without a conversation yet (first message is ours): find its contact before opening a transaction.
  let conversation = target.conversation ?? (await convs.findByThread(deps.pool, orgId, target.accountId, target.threadType, target.threadId));
  let contactTargetForNew: ContactTarget | undefined;
  let contact: LinkedContact | undefined;
  if (!conversation) {
    // A group has no contact (it is a conversation): named "Group …" until its first message brings its name.
    // A person's new contact is named as the network names them, never after the bare uid (issue #26).
    contactTargetForNew = contactTarget(target.accountId, target.threadType, target.threadId);
    if (contactTargetForNew) {
      const named = await networkName(deps, ctx, target.accountId, target.threadId);
      contactTargetForNew = { ...contactTargetForNew, displayName: named.displayName, avatar: named.avatar };
    }
    contact = contactTargetForNew ? await tryUpsertContact(deps, orgId, contactTargetForNew, ctx.origin, ctx.traceparent) : undefined;
  }

  const sentAt = new Date(sent.sentAt);
  try {
    return await withTransaction(deps.pool, async (db) => {
      if (!conversation) {
        const { accountId, threadType, threadId } = target;
        conversation = (
          await openConversation(db, orgId, {
            accountId,
            threadType,
            threadId,
            target: contactTargetForNew,
            contact,
            origin: ctx.origin,
            traceparent: ctx.traceparent,
          })
        ).row;
      }
      const conv = conversation;
      let row = await messages.insertOutbound(db, {
        id: randomUUID(),
        orgId,
        conversationId: conv.id,
        accountId: target.accountId,
        chatnetMessageId: sent.chatnetMessageId,
        content: input.content,
        contentType: input.contentType,
        senderName,
        source: input.source,
        sentByUserId: userId,
        clientMessageId: input.key ?? null,
        sentAt: Number.isNaN(sentAt.getTime()) ? new Date() : sentAt,
        quoteMessageId: quote?.messageId ?? null,
      });
      if (row) {
        await convs.applyOutbound(db, conv.id, { id: row.id, sentAt: row.sent_at, content: row.content, contentType: row.content_type, senderName });
        // The last message is ours: the conversation closes when it stays idle (the org's auto-close, if set).
        if (input.source !== 'auto') await armAutoClose(db, orgId, conv.id, deps.config.SERVICE_LEVEL_MINUTE_MS);
      } else {
        // The network echoed our message back before we stored it (as inbound, or as the account's own message from
        // another device): keep that one, made the sender's when it was taken for a message typed on the phone.
        row = (await messages.findByNetworkId(db, orgId, target.accountId, sent.chatnetMessageId))!;
        row =
          (await messages.claimPhoneCopy(db, row.id, {
            source: input.source,
            sentByUserId: userId,
            senderName,
            clientMessageId: input.key ?? null,
            quoteMessageId: quote?.messageId ?? null,
          })) ?? row;
      }
      const attached = await files.linkToMessage(db, orgId, row.id, input.attachmentIds);
      if (input.key) await requests.markSent(db, orgId, input.key, row.id);
      await input.onStored?.(db, row.id);
      await enqueueEvent(db, { ...messageSentEvent(orgId, conv, row, { sentByUserId: userId, source: input.source }), traceparent: ctx.traceparent });
      return messages.toSent(row, attached);
    });
  } catch (err) {
    // Sent but not recorded: the key stays pending, so a retry within the pending timeout cannot send twice.
    deps.log.error({ err, orgId, chatnetMessageId: sent.chatnetMessageId, ...traceFields(ctx) }, 'message was sent but storing it failed');
    throw err;
  }
}

function fingerprint(t: Target, i: Input): string {
  // A reply's quote is part of the request only when there is one, so keys claimed before quotes existed still match.
  const parts: unknown[] = [t.accountId, t.threadType, t.threadId, i.content, i.contentType, [...i.attachmentIds].sort()];
  if (i.replyToMessageId) parts.push(i.replyToMessageId);
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/**
 * Claim an idempotency key. Returns the stored answer when the key already sent a message; throws when
 * the key is in flight or was used for a different request; returns undefined when this call may send.
 */
async function claimKey(deps: Deps, orgId: string, key: string, print: string) {
  const { pool, config } = deps;
  if (await requests.claim(pool, orgId, key, print)) return undefined;
  const seen = await requests.find(pool, orgId, key);
  if (!seen) return claimKey(deps, orgId, key, print);
  const expired = Date.now() - seen.created_at.getTime() > config.IDEMPOTENCY_TTL_HOURS * 3600_000;
  if (!expired && seen.fingerprint !== print) {
    throw new AppError('failed_precondition', 'This idempotency key was already used for a different message', { code: 'idempotency_key_reused' });
  }
  if (!expired && seen.status === 'sent' && seen.message_id) {
    const row = await messages.findById(pool, orgId, seen.message_id);
    if (row) {
      const attached = (await files.forMessages(pool, orgId, [row.id])).get(row.id) ?? [];
      return messages.toSent(row, attached, true);
    }
  }
  if (await requests.takeOver(pool, orgId, key, print, config.IDEMPOTENCY_PENDING_TIMEOUT_MS, config.IDEMPOTENCY_TTL_HOURS)) return undefined;
  throw new AppError('already_exists', 'A send with this idempotency key is still in progress; retry shortly', { code: 'send_in_progress' });
}
