import type { z } from 'zod';
import type { messaging } from '@crm/proto-types';
import { messagingRules } from '@crm/validation';
import { answered, orNull } from '../http/shape';
import type * as S from './chat.schemas';
import type { ConversationNote } from './conversation-notes.schemas';

// messaging's answers (the generated types) and their internal and public mappers: one place per resource and
// audience. Each lists its fields, so a field added to the proto reaches no client until it is named here, and
// spells an absent value as null: proto3 `optional` fields arrive absent, unset strings arrive as "".

type Conversation = messaging.Conversation__Output;
type ConversationHeader = messaging.ConversationHeader__Output;
type LastMessage = messaging.LastMessage__Output;
type Message = messaging.Message__Output;
type Attachment = messaging.Attachment__Output;
type Note = messaging.Note__Output;
type TimelineItem = messaging.TimelineItem__Output;
type Preset = messaging.Preset__Output;
type ConversationMove = messaging.ConversationMove__Output;
type SentMessage = messaging.SentMessage__Output;
type PublicConversation = messaging.PublicConversation__Output;
type PublicContact = messaging.PublicContact__Output;
type PublicMessage = messaging.PublicMessage__Output;
type Folder = messaging.Folder__Output;
type Counts = messaging.Counts__Output;
type InboxSettings = messaging.InboxSettings__Output;
type Csat = messaging.Csat__Output;
type SearchHit = messaging.MessageSearchHit__Output;
type Quote = messaging.Quote__Output;
type Reaction = messaging.Reaction__Output;
type SlaState = messaging.SlaState__Output;
// messaging answers these as strings of its rules' sets; the schemas name the sets, and the response contract checks them.
type ThreadType = z.input<typeof S.Conversation>['type'];
type ConversationStatus = z.input<typeof S.Conversation>['status'];

/** The message a reply quotes; its content null when the reader may not see it (an agent, a contact's recalled message). */
export function quoteOut(q: Quote): z.input<typeof S.Quote> {
  return { messageId: q.messageId, content: q.content ?? null, senderName: q.senderName };
}

/** One person's reaction on a message: an agent (userId their user id) or the contact (userId their network uid). */
export function reactionOut(r: Reaction): z.input<typeof S.Reaction> {
  return { emoji: r.emoji, by: r.by as 'agent' | 'contact', userId: r.userId, at: r.at };
}

/** What every message shape says of replies, reactions and recall: null quote and recalledAt when there are none. */
function afterSendOut(m: { quote: Quote | null; reactions: Reaction[]; recalledAt?: string }) {
  return { quote: m.quote ? quoteOut(m.quote) : null, reactions: m.reactions.map(reactionOut), recalledAt: m.recalledAt ?? null };
}

/** A file sent with a message (as POST /chat/attachments answered it); `expiredAt` null while its bytes are kept. */
export function attachmentOut(a: Attachment): z.input<typeof S.Attachment> {
  return {
    id: a.id,
    filename: a.filename,
    size: a.size,
    contentType: a.contentType,
    url: a.url,
    uploadedAt: a.uploadedAt,
    expiredAt: a.expiredAt ?? null,
  };
}

/** A conversation's SLA (issue #29): due times of windows not running, and no breach, are null. */
export function slaOut(sla: SlaState) {
  return {
    policyId: sla.policyId,
    firstResponseDueAt: sla.firstResponseDueAt ?? null,
    nextResponseDueAt: sla.nextResponseDueAt ?? null,
    resolutionDueAt: sla.resolutionDueAt ?? null,
    status: sla.status as messagingRules.SlaStatus,
    breachedAt: sla.breachedAt ?? null,
  };
}

/** The conversation's owner, snooze, priority, SLA and CSAT: nobody, no team, not snoozed, no priority, no SLA and no answer are null. */
function ownerOut(c: Pick<Conversation, 'assigneeId' | 'teamId' | 'snoozedUntil' | 'priority' | 'sla' | 'csat'>) {
  return {
    assigneeId: c.assigneeId ?? null,
    teamId: c.teamId ?? null,
    snoozedUntil: c.snoozedUntil ?? null,
    priority: (c.priority ?? null) as messagingRules.ConversationPriority | null,
    sla: c.sla ? slaOut(c.sla) : null,
    csat: csatOut(c.csat),
  };
}

/** The newest message of an inbox row; a sender the network did not name is null. */
export function lastMessageOut(m: LastMessage): z.input<typeof S.LastMessage> {
  return { id: m.id, content: m.content, contentType: m.contentType, senderName: orNull(m.senderName), sentAt: m.sentAt };
}

/** An inbox row: the contact is null until it could be linked, the last message null before the first one. */
export function conversationOut(c: Conversation): z.input<typeof S.Conversation> {
  return {
    id: c.id,
    contactId: c.contactId ?? null,
    contactName: c.contactName,
    contactAvatar: orNull(c.contactAvatar),
    type: c.type as ThreadType,
    chatnetAccountId: c.chatnetAccountId,
    threadId: c.threadId,
    messageCount: c.messageCount,
    unreadCount: c.unreadCount,
    lastMessage: c.lastMessage ? lastMessageOut(c.lastMessage) : null,
    status: c.status as ConversationStatus,
    createdAt: c.createdAt,
    lastActivityAt: c.lastActivityAt,
    isReplied: c.isReplied,
    folderIds: c.folderIds,
    ...ownerOut(c),
  };
}

/** The conversation above its messages (GET /conversations/:id). */
export function headerOut(c: ConversationHeader): z.input<typeof S.ConversationHeader> {
  return {
    id: c.id,
    contactId: c.contactId ?? null,
    contactName: c.contactName,
    contactAvatar: orNull(c.contactAvatar),
    type: c.type as ThreadType,
    chatnetAccountId: c.chatnetAccountId,
    threadId: c.threadId,
    status: c.status as ConversationStatus,
    createdAt: c.createdAt,
    lastActivityAt: c.lastActivityAt,
    messageCount: c.messageCount,
    unreadCount: c.unreadCount,
    folderIds: c.folderIds,
    ...ownerOut(c),
  };
}

/**
 * A message of the internal API. senderUid is null for what the organization sent (only the contact's messages
 * carry a chat-network uid); sentByUserId null unless a user sent it; seenAt null until a read receipt came;
 * senderContactId null outside groups (the conversation's contact wrote it).
 */
export function messageOut(m: Message): z.input<typeof S.Message> {
  return {
    id: m.id,
    conversationId: m.conversationId,
    // A message the contact recalled has no content for an agent (team leads and above still read it).
    content: m.contentWithheld ? null : m.content,
    contentType: m.contentType,
    senderUid: orNull(m.senderUid),
    senderName: orNull(m.senderName),
    isFromChatnet: m.isFromChatnet,
    isRead: m.isRead,
    isReplied: m.isReplied,
    sentAt: m.sentAt,
    status: m.status,
    sentByUserId: m.sentByUserId ?? null,
    source: m.source,
    attachments: m.attachments.map(attachmentOut),
    seenAt: m.seenAt ?? null,
    senderContactId: m.senderContactId ?? null,
    ...afterSendOut(m),
  };
}

/** A private note of a conversation: its author is always a signed-in user, mentions are user ids. */
export function conversationNoteOut(n: Note): z.input<typeof ConversationNote> {
  return { id: n.id, content: n.content, authorId: n.authorId, mentions: n.mentions, createdAt: n.createdAt };
}

/** A timeline item: `{kind: 'message', ...Message}` or `{kind: 'note', ...Note, private: true}` (notes are never sent). */
export function timelineOut(t: TimelineItem): z.input<typeof S.TimelineItem> {
  if (t.kind === 'note')
    return { kind: 'note' as const, ...conversationNoteOut(answered(t.note, 'messaging GetConversation: timeline note')), private: true as const };
  return { kind: 'message' as const, ...messageOut(answered(t.message, 'messaging GetConversation: timeline message')) };
}

/** A saved reply: no category is null. */
export function presetOut(p: Preset): z.input<typeof S.Preset> {
  return { id: p.id, name: p.name, content: p.content, category: orNull(p.category), createdAt: p.createdAt, updatedAt: p.updatedAt };
}

/** What archive, close, reopen, read and unread answer: what happened and the conversation after it. */
export function moveOut(m: ConversationMove): z.input<typeof S.ConversationMove> {
  return { message: m.message, conversation: conversationOut(answered(m.conversation, 'messaging move: conversation')) };
}

/** A send's answer: the stored message (`replayed` is not in it: the route turns it into the Idempotent-Replayed header). */
export function sentOut(s: SentMessage): z.input<typeof S.SentMessage> {
  return {
    id: s.id,
    conversationId: s.conversationId,
    content: s.content,
    contentType: s.contentType,
    senderName: orNull(s.senderName),
    sentAt: s.sentAt,
    status: s.status,
    attachments: s.attachments.map(attachmentOut),
    ...afterSendOut(s),
  };
}

// ------------------------------------------------------------------------------------------- public API

/** The contact of a public conversation: no phone and no avatar are null. */
export function publicContactOut(c: PublicContact): z.input<typeof S.PublicConversationContact> {
  return { id: c.id, fullName: c.fullName, phone: orNull(c.phone), avatarUrl: orNull(c.avatarUrl) };
}

/** A public conversation: null contact until one is linked, null lastMessageAt before the first message. */
export function publicConversationOut(c: PublicConversation): z.input<typeof S.PublicConversation> {
  return {
    id: c.id,
    threadType: c.threadType as z.input<typeof S.PublicConversation>['threadType'],
    externalThreadId: c.externalThreadId,
    lastMessageAt: c.lastMessageAt ?? null,
    unreadCount: c.unreadCount,
    isReplied: c.isReplied,
    contact: c.contact ? publicContactOut(c.contact) : null,
    assigneeId: c.assigneeId ?? null,
    updatedAt: c.updatedAt,
    csat: csatOut(c.csat),
  };
}

/** A public message (lists and GET /api/public/messages/:id): a sender without a name is null. */
export function publicMessageOut(m: PublicMessage): z.input<typeof S.PublicMessage> {
  return {
    id: m.id,
    senderType: m.senderType as z.input<typeof S.PublicMessage>['senderType'],
    senderName: orNull(m.senderName),
    content: m.content,
    contentType: m.contentType,
    sentAt: m.sentAt,
    attachments: m.attachments.map(attachmentOut),
    conversationId: m.conversationId,
    status: m.status,
    ...afterSendOut(m),
  };
}

/** A chat folder with how many conversations are filed in it. */
export function folderOut(f: Folder): z.input<typeof S.Folder> {
  return { id: f.id, name: f.name, color: f.color, conversationCount: f.conversationCount, createdAt: f.createdAt };
}

/** The inbox tabs' numbers (GET /conversations/counts). */
export function countsOut(c: Counts, views: Record<string, number>): z.input<typeof S.ConversationCounts> {
  return { total: c.total, unread: c.unread, unreplied: c.unreplied, archived: c.archived, mine: c.mine, unassigned: c.unassigned, views };
}

/** Whether agents see every conversation or only their own; auto-close, the out-of-hours reply and CSAT (null: not set). */
export function inboxSettingsOut(s: InboxSettings): z.input<typeof S.InboxSettingsOut> {
  return {
    agentVisibility: (s.agentVisibility ?? 'all') as (typeof messagingRules.AGENT_VISIBILITIES)[number],
    autoCloseAfterMinutes: s.autoCloseAfterMinutes ?? null,
    autoCloseMessage: s.autoCloseMessage ?? null,
    outOfHoursMessage: s.outOfHoursMessage ?? null,
    csat: { enabled: s.csat?.enabled ?? false, message: s.csat?.message || messagingRules.DEFAULT_CSAT_MESSAGE },
  };
}

/** The contact's latest answer to the satisfaction question, or null. */
export function csatOut(c: Csat | null | undefined): z.input<typeof S.Csat> | null {
  return c ? { rating: c.rating, comment: c.comment ?? null, respondedAt: c.respondedAt } : null;
}

/** A message matching a search, with its highlighted fragment (HTML-escaped, matches in <mark>). */
export function searchHitOut(h: SearchHit): z.input<typeof S.SearchHit> {
  return { id: h.id, conversationId: h.conversationId, content: h.content, sentAt: h.sentAt, senderType: h.senderType, highlight: h.highlight };
}
