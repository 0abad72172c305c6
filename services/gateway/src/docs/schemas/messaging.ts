import { z } from 'zod';
import { messagingRules as rules } from '@crm/validation';
import type {
  attachmentOut,
  conversationOut,
  countsOut,
  folderOut,
  headerOut,
  csatOut,
  inboxSettingsOut,
  lastMessageOut,
  messageOut,
  moveOut,
  presetOut,
  publicContactOut,
  publicConversationOut,
  publicMessageOut,
  quoteOut,
  reactionOut,
  searchHitOut,
  sentOut,
  timelineOut,
} from '../../routes/chat.out';
import { ConversationNote } from '../../routes/conversation-notes.schemas';
import { VIEW_COUNTS_MAX } from '../../routes/view-counts';
import { keysMatch } from './check';
import { Pagination } from './common';

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

/** A file of a message (routes/chat.out attachmentOut). */
export const Attachment = z.object({
  id: z.string(),
  filename: z.string(),
  size: z.number().int().meta({ description: 'bytes' }),
  contentType: z.string(),
  url: z.string().meta({ description: 'GET it with the same credentials' }),
  uploadedAt: iso(),
  expiredAt: iso().nullable().meta({
    description: 'when ATTACHMENTS_RETENTION_DAYS deleted the bytes (the url then answers 410 attachment_expired); null while they are kept',
  }),
});
keysMatch<z.infer<typeof Attachment>, ReturnType<typeof attachmentOut>>(true);

/** The message a reply quotes (routes/chat.out quoteOut). */
export const Quote = z.object({
  messageId: z.string(),
  content: z.string().nullable().meta({ description: 'null for an agent when the contact recalled the quoted message' }),
  senderName: z.string(),
});
keysMatch<z.infer<typeof Quote>, ReturnType<typeof quoteOut>>(true);

/** One person's reaction on a message (routes/chat.out reactionOut). */
export const Reaction = z.object({
  emoji: z.string(),
  by: z.enum(['agent', 'contact']),
  userId: z.string().meta({ description: 'the agent’s user id, or the contact’s chat-network uid' }),
  at: iso(),
});
keysMatch<z.infer<typeof Reaction>, ReturnType<typeof reactionOut>>(true);

/** What every message shape says of replies, reactions and recall (issue #26). */
const afterSend = {
  quote: Quote.nullable().meta({ description: 'the message this one replies to; null for none' }),
  reactions: z.array(Reaction).meta({ description: 'one per person, oldest first; an agent’s replaces their previous one' }),
  recalledAt: iso().nullable().meta({ description: 'when it was recalled on the network (status recalled); null otherwise' }),
};

/** The contact's latest answer to the satisfaction question (routes/chat.out csatOut; issue #29 item 6). */
export const Csat = z
  .object({
    rating: z.number().int().min(1).max(5),
    comment: z.string().nullable().meta({ description: 'text given with the rating, or the contact’s next message; null: none' }),
    respondedAt: iso(),
  })
  .meta({ description: 'a CSAT answer' });
keysMatch<z.infer<typeof Csat>, NonNullable<ReturnType<typeof csatOut>>>(true);
const csat = Csat.nullable().meta({ description: 'the contact’s latest CSAT answer; null: none (see PUT /settings/inbox csat)' });

/** The contact of a public conversation (routes/chat.out publicContactOut). */
export const PublicConversationContact = z.object({
  id: z.string(),
  fullName: z.string(),
  phone: z.string().nullable(),
  avatarUrl: z.string().nullable(),
});
keysMatch<z.infer<typeof PublicConversationContact>, ReturnType<typeof publicContactOut>>(true);

/** Public conversation (routes/chat.out publicConversationOut): unset values as null. */
export const PublicConversation = z.object({
  id: z.string(),
  threadType: z.enum(rules.THREAD_TYPES),
  externalThreadId: z.string(),
  lastMessageAt: iso().nullable().meta({ description: 'null before the first message' }),
  unreadCount: z.number().int(),
  isReplied: z.boolean(),
  contact: PublicConversationContact.nullable().meta({ description: 'null until the conversation is linked to a contact' }),
  assigneeId: z.string().nullable(),
  updatedAt: iso().meta({ description: 'the last change (a message, a read, its status, assignee or contact); updatedSince filters on it' }),
  csat,
});
keysMatch<z.infer<typeof PublicConversation>, ReturnType<typeof publicConversationOut>>(true);

/** Public message (routes/chat.out publicMessageOut). */
export const PublicMessage = z.object({
  id: z.string(),
  senderType: z.enum(['contact', 'user', 'system']),
  senderName: z.string().nullable(),
  content: z.string(),
  contentType: z.string(),
  sentAt: iso(),
  attachments: z.array(Attachment),
  conversationId: z.string(),
  status: z.string().meta({ description: 'sent, seen once the recipient read it, or recalled' }),
  ...afterSend,
});
keysMatch<z.infer<typeof PublicMessage>, ReturnType<typeof publicMessageOut>>(true);
/** POST /api/public/messages/send. */
export const PublicSent = z.object({
  success: z.literal(true),
  messageId: z.string().describe('the stored message; read it with GET /api/public/messages/{id}'),
  status: z.string().describe('delivery status as stored: sent'),
});

// ------------------------------------------------------------------------------------------- internal API
// Each is checked against the mapper in routes/chat.out that shapes it (keysMatch), and live by
// tests/gateway/openapi-contract.test.ts.

const owner = {
  assigneeId: z.string().nullable(),
  teamId: z.string().nullable(),
  snoozedUntil: iso().nullable().meta({ description: 'only while status is snoozed: when it returns to active' }),
  priority: z.enum(rules.CONVERSATION_PRIORITIES).nullable().meta({ description: 'null: none; set with PUT /conversations/{id}/priority' }),
  sla: z
    .object({
      policyId: z.string(),
      firstResponseDueAt: iso()
        .nullable()
        .meta({ description: 'from the first inbound message of the cycle until our first reply; null once met or not running' }),
      nextResponseDueAt: iso()
        .nullable()
        .meta({ description: 'from an inbound message after our reply until we reply again; null when not running' }),
      resolutionDueAt: iso().nullable().meta({ description: 'from the opening of the cycle until the conversation closes; null when not running' }),
      status: z
        .enum(rules.SLA_STATUSES)
        .meta({ description: 'due_soon in the last 20% of the nearest window; breached once a window of the current cycle was missed' }),
      breachedAt: iso().nullable().meta({ description: 'the latest breach of the current cycle' }),
    })
    .nullable()
    .meta({
      description:
        'The SLA policy of its chat-network account (PUT /chatnet-accounts/{id}/sla); null: none. Due times skip closed hours when the policy counts business hours only. Closing stops every clock; the next inbound message or a reopening starts a new cycle.',
    }),
  csat,
};
const conversationFields = {
  id: z.string(),
  contactId: z.string().nullable().meta({ description: 'null while the contact could not be linked yet' }),
  contactName: z.string(),
  contactAvatar: z.string().nullable(),
  type: z.enum(rules.THREAD_TYPES),
  chatnetAccountId: z.string(),
  threadId: z.string(),
  messageCount: z.number().int(),
  unreadCount: z.number().int(),
  status: z.enum(rules.CONVERSATION_STATUSES),
  createdAt: iso(),
  lastActivityAt: iso(),
  folderIds: z.array(z.string()),
  ...owner,
};

export const LastMessage = z.object({
  id: z.string(),
  content: z.string(),
  contentType: z.string(),
  senderName: z.string().nullable(),
  sentAt: iso(),
});
keysMatch<z.infer<typeof LastMessage>, ReturnType<typeof lastMessageOut>>(true);

/** An inbox row (conversationOut). */
export const Conversation = z.object({ ...conversationFields, lastMessage: LastMessage.nullable(), isReplied: z.boolean() });
keysMatch<z.infer<typeof Conversation>, ReturnType<typeof conversationOut>>(true);

/** The conversation above its messages (headerOut). */
export const ConversationHeader = z.object(conversationFields);
keysMatch<z.infer<typeof ConversationHeader>, ReturnType<typeof headerOut>>(true);

/** messageOut. */
export const Message = z.object({
  id: z.string(),
  conversationId: z.string(),
  content: z
    .string()
    .nullable()
    .meta({ description: 'null for an agent when the contact recalled the message (team leads and above still read it)' }),
  contentType: z.string(),
  senderUid: z.string().nullable().meta({ description: 'the contact’s chat-network uid; null for what the organization sent' }),
  senderName: z.string().nullable(),
  isFromChatnet: z.boolean(),
  isRead: z.boolean(),
  isReplied: z.boolean(),
  sentAt: iso(),
  status: z.string().meta({ description: 'sent, seen once the recipient read it, or recalled' }),
  sentByUserId: z.string().nullable(),
  source: z.string().meta({
    description:
      'who sent it: ui, public_api, automation, campaign, phone (typed on the account’s phone), auto (the inbox itself: auto-close, out-of-hours and CSAT messages); inbound: chatnet',
  }),
  attachments: z.array(Attachment),
  seenAt: iso().nullable(),
  senderContactId: z.string().nullable().meta({ description: 'in groups: the crm contact who wrote it' }),
  ...afterSend,
});
keysMatch<z.infer<typeof Message>, ReturnType<typeof messageOut>>(true);

type TimelineOut = ReturnType<typeof timelineOut>;
const TimelineMessage = Message.extend({ kind: z.literal('message') });
/** A private note in the timeline: the note as its routes declare it (routes/conversation-notes.schemas.ts). */
const TimelineNote = ConversationNote.extend({
  kind: z.literal('note'),
  private: z.literal(true).describe('notes are never sent to the chat network'),
});
keysMatch<z.infer<typeof TimelineMessage>, Extract<TimelineOut, { kind: 'message' }>>(true);
keysMatch<z.infer<typeof TimelineNote>, Extract<TimelineOut, { kind: 'note' }>>(true);

/** timelineOut: a message or a private note, told apart by `kind`. */
export const TimelineItem = z.union([TimelineMessage, TimelineNote]);

/** GET /conversations/:id: header, one page of messages, and the same page with the notes of its time range. */
export const ConversationDetail = z.object({
  conversation: ConversationHeader,
  messages: z.array(Message).describe('newest first'),
  pagination: Pagination,
  timeline: z.array(TimelineItem).describe('the page’s messages and the private notes of its time range, newest first'),
});

/** moveOut: archive, close, reopen, read, unread. */
export const ConversationMove = z.object({ message: z.string(), conversation: Conversation });
keysMatch<z.infer<typeof ConversationMove>, ReturnType<typeof moveOut>>(true);

/** sentOut: the stored message; `replayed` becomes the Idempotent-Replayed header. */
export const SentMessage = z.object({
  id: z.string(),
  conversationId: z.string(),
  content: z.string(),
  contentType: z.string(),
  senderName: z.string().nullable(),
  sentAt: iso(),
  status: z.string(),
  attachments: z.array(Attachment),
  ...afterSend,
});
keysMatch<z.infer<typeof SentMessage>, ReturnType<typeof sentOut>>(true);

/** A saved reply (presetOut): no category is null. */
export const Preset = z.object({
  id: z.string(),
  name: z.string(),
  content: z.string(),
  category: z.string().nullable(),
  createdAt: iso(),
  updatedAt: iso(),
});
keysMatch<z.infer<typeof Preset>, ReturnType<typeof presetOut>>(true);

/** A chat folder (routes/chat.out folderOut). */
export const Folder = z.object({
  id: z.string(),
  name: z.string(),
  color: z.string().meta({ description: 'hex color such as #3B82F6' }),
  conversationCount: z.number().int(),
  createdAt: iso(),
});
keysMatch<z.infer<typeof Folder>, ReturnType<typeof folderOut>>(true);

/** The inbox tabs' numbers (routes/chat.out countsOut). */
export const ConversationCounts = z.object({
  total: z.number().int(),
  unread: z.number().int(),
  unreplied: z.number().int(),
  archived: z.number().int(),
  mine: z.number().int().meta({ description: 'not archived, assigned to the caller' }),
  unassigned: z.number().int().meta({ description: 'not archived, assigned to nobody' }),
  views: z.record(z.string(), z.number().int()).meta({
    description: `{<view id>: how many conversations it holds now}, for the caller's saved conversation views (the first ${VIEW_COUNTS_MAX} by name)`,
  }),
});
keysMatch<z.infer<typeof ConversationCounts>, ReturnType<typeof countsOut>>(true);

/** Inbox settings (routes/chat.out inboxSettingsOut). */
export const InboxSettings = z.object({
  agentVisibility: z.enum(rules.AGENT_VISIBILITIES),
  autoCloseAfterMinutes: z.number().int().min(1).max(rules.AUTO_CLOSE_MAX_MINUTES).nullable().meta({
    description: 'an active or pending conversation whose last message is ours closes after this many idle minutes (changedBy null); null: never',
  }),
  autoCloseMessage: z.string().nullable().meta({ description: 'sent (source auto) just before an auto-close; null: none' }),
  outOfHoursMessage: z.string().nullable().meta({
    description:
      'sent (source auto) when a contact writes while the account’s business hours are closed, once per conversation and closed period; null: none',
  }),
  csat: z
    .object({ enabled: z.boolean(), message: z.string().meta({ description: 'the question sent when a conversation closes' }) })
    .meta({ description: 'the satisfaction question; a rating reply within 24 h is stored as the conversation’s csat' }),
});
keysMatch<z.infer<typeof InboxSettings>, ReturnType<typeof inboxSettingsOut>>(true);

/** A message matching a search (routes/chat.out searchHitOut). */
export const SearchHit = z.object({
  id: z.string(),
  conversationId: z.string(),
  content: z.string(),
  sentAt: iso(),
  senderType: z.string().meta({ description: 'contact, user or system' }),
  highlight: z.string().meta({ description: 'the matching fragment, HTML-escaped, each match in <mark>…</mark>' }),
});
keysMatch<z.infer<typeof SearchHit>, ReturnType<typeof searchHitOut>>(true);
