import { AppError, invalid, notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import { forMessages } from '../attachments';
import { clampPage, convs, load, CONVERSATION_STATUSES, messages, EVENTS, MAX_TERM, MAX_WORDS, phoneDigits, wordsOf } from '../conversations';
import { mergeTimeline, notesBesidePage } from '../notes';
import { applyStatus } from '../status';
import { isUuid, messagingRules as rules, optionalOneOf } from '@crm/validation';
import { viewerOf } from '../visibility';
import { markSeenOnNetwork } from './read-on-network';
import { readerOf } from '../reactions';

function filterId(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!isUuid(value)) throw invalid(field, 'must be an id');
  return value;
}

export async function counts(deps: Deps, ctx: OrgContext) {
  return convs.counts(deps.pool, ctx.orgId, ctx.userId || null, viewerOf(ctx));
}

/** `assigneeId` filter: a user id, `me` (the caller) or `unassigned` (null). */
function assigneeFilter(ctx: OrgContext, value: string | undefined): string | null | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'unassigned') return null;
  if (value === 'me') {
    if (!ctx.userId) throw invalid('assigneeId', '"me" needs a signed-in user');
    return ctx.userId;
  }
  if (!isUuid(value)) throw invalid('assigneeId', rules.ASSIGNEE_FILTER_MESSAGE);
  return value;
}

export async function list(
  deps: Deps,
  ctx: OrgContext,
  req: Omit<convs.ConversationFilter, 'search' | 'assigneeId' | 'priority' | 'sla'> & {
    search?: string;
    assigneeId?: string;
    priority?: string;
    sla?: string;
  },
) {
  const { orgId } = ctx;
  const search = (req.search ?? '').trim();
  if (search.length > MAX_TERM) throw invalid('search', `must be at most ${MAX_TERM} characters`);
  const words = wordsOf(search);
  if (words.length > MAX_WORDS) throw invalid('search', `must have at most ${MAX_WORDS} words`);
  return convs.list(deps.pool, orgId, {
    ...clampPage(req.page, req.limit, 50, 100),
    status: optionalOneOf(req.status, CONVERSATION_STATUSES, 'status'),
    type: optionalOneOf(req.type, rules.THREAD_TYPES, 'type'),
    search: words.length ? { words, phoneDigits: phoneDigits(search), window: deps.config.MESSAGE_SEARCH_WINDOW } : undefined,
    sortBy: optionalOneOf(req.sortBy, rules.CONVERSATION_SORTS, 'sortBy'),
    direction: optionalOneOf(req.direction, rules.SORT_DIRECTIONS, 'direction'),
    folderId: filterId(req.folderId, 'folderId'),
    chatnetAccountId: filterId(req.chatnetAccountId, 'chatnetAccountId'),
    contactId: filterId(req.contactId, 'contactId'),
    assigneeId: assigneeFilter(ctx, req.assigneeId ?? undefined),
    teamId: filterId(req.teamId, 'teamId'),
    priority: optionalOneOf(req.priority, rules.PRIORITY_FILTERS, 'priority'),
    sla: optionalOneOf(req.sla, rules.SLA_STATUSES, 'sla'),
    unread: req.unread,
    unreplied: req.unreplied,
    viewer: viewerOf(ctx),
  });
}

/**
 * The conversation and one page of its messages, newest first (default 30 per page), and the timeline: the same
 * messages with the private notes written in the page's time range, merged newest first.
 */
export async function detail(deps: Deps, ctx: OrgContext, req: { id: string; page?: number; limit?: number }) {
  const { orgId } = ctx;
  const conv = await load(deps, ctx, req.id);
  const p = clampPage(req.page, req.limit, 30, 100);
  const { total, rows, files } = await messages.page(deps.pool, orgId, conv.id, p.limit, (p.page - 1) * p.limit);
  const list = rows.map((m) => messages.toMessage(m, files.get(m.id), readerOf(ctx)));
  const noteRows = await notesBesidePage(deps.pool, orgId, conv.id, { ...p, total, oldestOnPage: rows.at(-1)?.sent_at });
  return {
    conversation: convs.toHeader(conv),
    messages: list,
    pagination: { total, page: p.page, limit: p.limit, pages: Math.ceil(total / p.limit) },
    timeline: mergeTimeline(list, noteRows),
  };
}

type Move = 'archive' | 'close' | 'reopen';
const TARGET: Record<Move, 'archived' | 'closed' | 'active'> = { archive: 'archived', close: 'closed', reopen: 'active' };
const DONE: Record<Move, string> = { archive: 'Conversation archived', close: 'Conversation closed', reopen: 'Conversation reopened' };

/**
 * State moves: archive (any → archived), close (any → closed), reopen (any other status → active; a snooze ends).
 * Repeating a move is a no-op that answers the same way. A new message from the contact reopens it. Each change
 * publishes `conversation.status_changed`; archiving also `conversation.archived`.
 */
export async function move(deps: Deps, ctx: OrgContext, id: string, how: Move) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  const target = TARGET[how];
  const changed = await withTransaction(deps.pool, async (db) => {
    const conv = isUuid(id) ? await convs.findById(db, orgId, id, true, viewerOf(ctx)) : undefined;
    if (!conv) throw notFound('Conversation');
    if (!(await applyStatus(db, conv, target, null, ctx.userId || null, ctx.traceparent))) return false;
    if (how === 'archive') await enqueueEvent(db, { type: EVENTS.conversationArchived, orgId, data: { id }, traceparent: ctx.traceparent });
    return true;
  });
  deps.log.debug({ conversationId: id, how, changed, ...traceFields(ctx) }, 'conversation state move');
  return { message: DONE[how], conversation: convs.toConversation((await convs.findById(deps.pool, orgId, id))!) };
}

/**
 * Mark the contact's messages read. After the commit, the account tells the network it read the newest of them (so
 * the contact sees them read), without waiting: the network being unreachable never fails the agent's mark-read.
 */
export async function markRead(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  const read = await withTransaction(deps.pool, async (db) => {
    const conv = isUuid(id) ? await convs.findById(db, orgId, id, true, viewerOf(ctx)) : undefined;
    if (!conv) throw notFound('Conversation');
    const newly = await messages.markAllRead(db, id);
    await convs.recount(db, id);
    return { conv, newly };
  });
  if (read.newly.length) void markSeenOnNetwork(deps, ctx, read);
  return { message: 'Conversation marked as read', conversation: convs.toConversation((await convs.findById(deps.pool, orgId, id))!) };
}

export async function markUnread(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  await withTransaction(deps.pool, async (db) => {
    const conv = isUuid(id) ? await convs.findById(db, orgId, id, true, viewerOf(ctx)) : undefined;
    if (!conv) throw notFound('Conversation');
    if (!(await messages.markLatestInboundUnread(db, id))) {
      throw new AppError('failed_precondition', 'The contact has not written in this conversation yet, so there is nothing to mark unread', {
        code: 'no_inbound_message',
      });
    }
    await convs.recount(db, id);
  });
  return { message: 'Conversation marked as unread', conversation: convs.toConversation((await convs.findById(deps.pool, orgId, id))!) };
}

export async function updateFlags(
  deps: Deps,
  ctx: OrgContext,
  req: { conversationId: string; messageId: string; isRead?: boolean; isReplied?: boolean },
) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  if (req.isRead === undefined && req.isReplied === undefined) throw invalid('isRead', rules.FLAGS_REQUIRED);
  return withTransaction(deps.pool, async (db) => {
    const conv = isUuid(req.conversationId) ? await convs.findById(db, orgId, req.conversationId, true, viewerOf(ctx)) : undefined;
    if (!conv) throw notFound('Conversation');
    const row = isUuid(req.messageId) ? await messages.setFlags(db, orgId, conv.id, req.messageId, req) : undefined;
    if (!row) throw notFound('Message');
    await convs.recount(db, conv.id);
    const files = await forMessages(db, orgId, [row.id]);
    return messages.toMessage(row, files.get(row.id), readerOf(ctx));
  });
}

/** For crm's contact detail: every conversation of a contact the caller may see (crm forwards the user's role). */
export async function contactConversations(deps: Deps, ctx: OrgContext, contactId: string) {
  const { orgId } = ctx;
  if (!isUuid(contactId)) return { conversations: [] };
  const rows = await convs.briefsForContact(deps.pool, orgId, contactId, viewerOf(ctx));
  return {
    conversations: rows.map((r) => ({
      id: r.id,
      chatnetAccountId: r.chatnet_account_id,
      messageCount: r.message_count,
      lastMessageAt: r.last_message_at ? r.last_message_at.toISOString() : undefined,
    })),
  };
}

/** latestForContacts answers for at most this many contacts a call. */
const LATEST_FOR_CONTACTS_MAX = 1_000;

/** For campaigns: latestForContact for a page of contacts at once (only the conversation's id and account). */
export async function latestForContacts(deps: Deps, ctx: OrgContext, contactIds: string[]) {
  if (contactIds.length > LATEST_FOR_CONTACTS_MAX) throw invalid('contactIds', `must be at most ${LATEST_FOR_CONTACTS_MAX}`);
  const ids = [...new Set(contactIds.filter(isUuid).map((id) => id.toLowerCase()))];
  const rows = await convs.latestForContacts(deps.pool, ctx.orgId, ids);
  return { conversations: rows.map((r) => ({ contactId: r.contact_id, conversationId: r.id, chatnetAccountId: r.chatnet_account_id })) };
}

/** For automation and campaigns: the contact's most recently active conversation, if any. */
export async function latestForContact(deps: Deps, ctx: OrgContext, contactId: string) {
  const { orgId } = ctx;
  if (!isUuid(contactId)) return {};
  const [row] = await convs.forContact(deps.pool, orgId, contactId);
  return row ? { conversation: convs.toConversation(row) } : {};
}
