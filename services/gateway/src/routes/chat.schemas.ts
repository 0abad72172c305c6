import { z } from 'zod';
import { isUuid, messagingRules as rules } from '@crm/validation';
import { reply } from '../docs/proto-schema';
import { Pagination } from './common.schemas';
import { parseDateOrTime, s } from '../http/validate';
import { ConversationNote } from './conversation-notes.schemas';
import { sendAt } from './send-at';
import { VIEW_COUNTS_MAX } from './view-counts';

// What the conversations, messages, folders, presets and inbox settings routes (chat.routes.ts) take and answer.

export const id = () => z.string().trim().uuid('must be an id');
const bool = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');
export const idempotencyKey = z.string().trim().min(1).max(rules.IDEMPOTENCY_KEY_MAX, `must be at most ${rules.IDEMPOTENCY_KEY_MAX} characters`);
const STATUSES = rules.CONVERSATION_STATUSES;
/** A message body of at most CONTENT_MAX characters. */
const content = (absent: string) => z.string({ error: absent }).max(rules.CONTENT_MAX, `must be at most ${rules.CONTENT_MAX} characters`);
/** Empty is the default (text), as in messaging. */
const contentType = z
  .string({ error: rules.CONTENT_TYPE_MESSAGE })
  .trim()
  .refine((v) => v === '' || rules.CONTENT_TYPE_PATTERN.test(v), rules.CONTENT_TYPE_MESSAGE)
  .default(rules.DEFAULT_CONTENT_TYPE);

export const ListQuery = z.object({
  status: s.optionalQueryEnum(STATUSES),
  type: s.optionalQueryEnum(rules.THREAD_TYPES),
  search: z.string().max(rules.SEARCH_TERM_MAX, `must be at most ${rules.SEARCH_TERM_MAX} characters`).optional(),
  sortBy: s.optionalQueryEnum(rules.CONVERSATION_SORTS),
  direction: s.optionalQueryEnum(rules.SORT_DIRECTIONS),
  folderId: id().optional(),
  chatnetAccountId: id().optional(),
  contactId: id().optional(),
  unread: bool.optional(),
  unreplied: bool.optional(),
  assigneeId: z
    .string()
    .trim()
    .refine((v) => (rules.ASSIGNEE_FILTER_WORDS as readonly string[]).includes(v) || isUuid(v), rules.ASSIGNEE_FILTER_MESSAGE)
    .optional(),
  teamId: id().optional(),
  priority: s.optionalQueryEnum(rules.PRIORITY_FILTERS).describe('one priority, or none for the conversations without one'),
  sla: s.optionalQueryEnum(rules.SLA_STATUSES).describe('the SLA status now; conversations without an SLA match none'),
});

const nullableId = () =>
  z.union([z.null(), z.string().trim().uuid()], {
    error: (issue) => (issue.input === undefined ? 'is required (an id, or null)' : 'must be an id or null'),
  });

// userId is required (null = nobody); teamId left out keeps the conversation's team.
export const Assign = z.object({ userId: nullableId(), teamId: nullableId().optional() });

export const SetStatus = z
  .object({
    status: s.enumOf(STATUSES),
    // An ISO timestamp in years 1-9999, sent on as its UTC instant; whether it lies ahead is messaging's call.
    snoozedUntil: z
      .union([z.null(), s.timestamp()], { error: rules.SNOOZE_TIMESTAMP_MESSAGE })
      .optional()
      .transform((v) => (v ? parseDateOrTime(v.trim())!.at.toISOString() : undefined)),
  })
  .refine((b) => b.status === 'snoozed' || b.snoozedUntil === undefined, { path: ['snoozedUntil'], message: rules.SNOOZE_ONLY_WHEN_SNOOZED })
  .refine((b) => b.status !== 'snoozed' || b.snoozedUntil !== undefined, { path: ['snoozedUntil'], message: rules.SNOOZE_REQUIRED });

/** PUT /conversations/:id/priority: one of the priorities, or null for none (issue #29). */
export const SetPriority = z.object({
  priority: z.union([z.null(), z.enum(rules.CONVERSATION_PRIORITIES)], {
    error: (issue) => (issue.input === undefined ? `is required (${rules.PRIORITY_MESSAGE.replace('must be ', '')})` : rules.PRIORITY_MESSAGE),
  }),
});

const BULK_MAX_IDS = rules.BULK_MAX_IDS;
export const BulkIds = z
  .array(z.string({ error: 'must be an array of ids' }), { error: 'must be an array of ids' })
  .min(1, 'must list at least one id')
  .max(BULK_MAX_IDS, `must list at most ${BULK_MAX_IDS} ids`);

// Each action's parameters; ids that are malformed or not the org's fail one by one in the answer, not here.
export const BulkConversations = z.discriminatedUnion(
  'action',
  [
    z.object({ ids: BulkIds, action: z.literal('assign'), userId: nullableId(), teamId: nullableId().optional() }),
    z.object({ ids: BulkIds, action: z.literal('status'), status: s.enumOf(STATUSES), snoozedUntil: SetStatus.shape.snoozedUntil }),
    z.object({ ids: BulkIds, action: z.literal('folder'), folderId: z.string({ error: 'is required' }).trim().uuid('must be an id') }),
    z.object({ ids: BulkIds, action: z.literal('read') }),
    // The macro runs on each conversation as POST /conversations/:id/macros/:macroId/run would (issue #29).
    z.object({ ids: BulkIds, action: z.literal('macro'), macroId: z.string({ error: 'is required' }).trim().uuid('must be a macro id') }),
  ],
  { error: `must be one of ${rules.BULK_ACTIONS.join(', ')}` },
);

/** A message the inbox sends by itself: text, or null for none. */
const autoMessage = () =>
  z
    .string({ error: 'must be text or null' })
    .max(rules.AUTO_MESSAGE_MAX, `must be at most ${rules.AUTO_MESSAGE_MAX} characters`)
    .nullable()
    .optional();

/** PUT /settings/inbox: a partial update, every field optional (one absent keeps its value), at least one sent. */
export const InboxSettings = z
  .object({
    agentVisibility: s.enumOf(rules.AGENT_VISIBILITIES).optional(),
    autoCloseAfterMinutes: z
      .number({ error: rules.AUTO_CLOSE_MINUTES_MESSAGE })
      .int(rules.AUTO_CLOSE_MINUTES_MESSAGE)
      .min(1, rules.AUTO_CLOSE_MINUTES_MESSAGE)
      .max(rules.AUTO_CLOSE_MAX_MINUTES, rules.AUTO_CLOSE_MINUTES_MESSAGE)
      .nullable()
      .optional(),
    autoCloseMessage: autoMessage(),
    outOfHoursMessage: autoMessage(),
    csat: z
      .object(
        {
          enabled: z.boolean({ error: 'must be true or false' }),
          message: z
            .string({ error: 'must be text' })
            .trim()
            .min(1, 'must not be blank')
            .max(rules.AUTO_MESSAGE_MAX, `must be at most ${rules.AUTO_MESSAGE_MAX} characters`)
            .optional(),
        },
        { error: 'must be an object {enabled, message}' },
      )
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (Object.values(v).every((x) => x === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['agentVisibility'],
        message: 'send at least one of agentVisibility, autoCloseAfterMinutes, autoCloseMessage, outOfHoursMessage, csat',
      });
    }
  });

/** The update as messaging takes it: absent fields stay absent; null is 0 (minutes) or "" (messages). */
export function inboxSettingsIn(b: z.infer<typeof InboxSettings>) {
  const nullable = <T>(v: T | null | undefined, none: T) => (v === undefined ? undefined : (v ?? none));
  return {
    agentVisibility: b.agentVisibility,
    autoCloseAfterMinutes: nullable(b.autoCloseAfterMinutes, 0),
    autoCloseMessage: nullable(b.autoCloseMessage, ''),
    outOfHoursMessage: nullable(b.outOfHoursMessage, ''),
    csat: b.csat ? { enabled: b.csat.enabled, message: b.csat.message ?? '' } : undefined,
  };
}

export const SearchQuery = z.object({
  q: z
    .string({ error: 'is required' })
    .trim()
    .min(rules.SEARCH_QUERY_MIN, rules.SEARCH_QUERY_TOO_SHORT)
    .max(rules.SEARCH_TERM_MAX, `must be at most ${rules.SEARCH_TERM_MAX} characters`),
  conversationId: z.string().optional(),
  chatnetAccountId: id().optional(),
  from: s.dateOrTimestamp().optional(),
  to: s.dateOrTimestamp().optional(),
});

/** `attachments` in a send: attachment ids, or objects carrying one (`{id}`), as returned by the upload. */
const attachmentRefs = z
  .array(z.union([z.string(), z.object({ id: z.string() })]), { error: 'must be an array of attachment ids' })
  .max(rules.MAX_ATTACHMENTS, rules.TOO_MANY_ATTACHMENTS)
  .transform((list) => list.map((a) => (typeof a === 'string' ? a : a.id)));

/** A message of the same conversation the new one replies to (quotes); whether it is one is messaging's call. */
const replyToMessageId = z.string({ error: 'must be a message id' }).trim().uuid('must be a message id').optional();

export const Send = z
  .object({
    content: content('must be a string').default(''),
    contentType,
    attachments: attachmentRefs.default([]),
    clientMessageId: idempotencyKey.optional(),
    replyToMessageId,
    // With sendAt the message is scheduled (202, a scheduled message) instead of sent now; null is no schedule.
    sendAt: z.union([z.null(), sendAt()], { error: rules.SEND_AT_FORMAT }).optional(),
    cancelIfReplied: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .refine((b) => b.content.trim() !== '' || b.attachments.length > 0, { path: ['content'], message: 'is required' })
  // A scheduled message is sent as written, without a quote: refused rather than dropped without a word.
  .refine((b) => !(b.sendAt && b.replyToMessageId), {
    path: ['replyToMessageId'],
    message: 'cannot be combined with sendAt (a scheduled message quotes nothing)',
  });

// The spec's send body names the account zaloAccountId, the rest of the API chatnetAccountId: either is accepted.
export const PublicSend = z
  .object({
    chatnetAccountId: s.requiredText(100).optional(),
    zaloAccountId: s.requiredText(100).optional(),
    threadId: s.requiredText(rules.THREAD_ID_MAX),
    content: content('is required').refine((v) => v.trim() !== '', 'is required'),
    threadType: s.enumOf(rules.THREAD_TYPES).default('user'),
    contentType,
    clientMessageId: idempotencyKey.optional(),
    replyToMessageId,
  })
  .refine((b) => b.chatnetAccountId !== undefined || b.zaloAccountId !== undefined, {
    path: ['chatnetAccountId'],
    message: 'is required (or zaloAccountId, its other name)',
  })
  .refine((b) => b.chatnetAccountId === undefined || b.zaloAccountId === undefined || b.chatnetAccountId === b.zaloAccountId, {
    path: ['zaloAccountId'],
    message: 'differs from chatnetAccountId; both name the same account, send one',
  })
  .transform(({ zaloAccountId, ...b }) => ({ ...b, chatnetAccountId: (b.chatnetAccountId ?? zaloAccountId)! }));

/** PUT /messages/:id/reactions: one emoji (the caller's reaction replaces the one they had). */
export const ReactionBody = z.object({
  emoji: z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'is required')
    .max(rules.REACTION_EMOJI_MAX, rules.REACTION_EMOJI_TOO_LONG)
    .refine((v) => !/\s/.test(v), rules.REACTION_EMOJI_MESSAGE),
});

/** Start a conversation with someone who never wrote: exactly one of contactId, phone and chatnetUid (issue #26). */
export const StartConversation = z
  .object({
    chatnetAccountId: z.string({ error: 'is required (the account to write from)' }).trim().uuid('must be a chat-network account id'),
    contactId: z.string({ error: 'must be a contact id' }).trim().min(1, 'must be a contact id').optional(),
    phone: z
      .string({ error: 'must be a phone number' })
      .trim()
      .max(40, 'must be at most 40 characters')
      .regex(/^\+?[0-9 ().-]+$/, 'must be a phone number (digits, spaces, + - . ( ) only)')
      .optional()
      .describe('any Vietnamese spelling: 0912345678, +84912345678, 84 912 345 678'),
    chatnetUid: s.requiredText(64).optional(),
    content: content('must be a string').default('').describe('a first message; without it (and attachments) the conversation is only opened'),
    contentType,
    attachments: attachmentRefs.default([]),
    clientMessageId: idempotencyKey.optional(),
  })
  .refine((b) => [b.contactId, b.phone, b.chatnetUid].filter((v) => v !== undefined).length === 1, {
    path: ['contactId'],
    message: 'give exactly one of contactId, phone and chatnetUid',
  });

export const Flags = z
  .object({ isRead: z.boolean({ error: 'must be true or false' }).optional(), isReplied: z.boolean({ error: 'must be true or false' }).optional() })
  .refine((b) => b.isRead !== undefined || b.isReplied !== undefined, { path: ['isRead'], message: rules.FLAGS_REQUIRED });

const color = z.string().trim().regex(rules.FOLDER_COLOR_PATTERN, rules.FOLDER_COLOR_MESSAGE);
export const NewFolder = z.object({ name: s.requiredText(rules.FOLDER_NAME_MAX), color: color.optional() });
export const FolderPatch = z.object({ name: s.requiredText(rules.FOLDER_NAME_MAX).optional(), color: color.optional() });
export const FolderConversations = z.object({
  conversationIds: z
    .array(z.string(), { error: 'must be an array of conversation ids' })
    .min(1, rules.FOLDER_CONVERSATIONS_EMPTY)
    .max(rules.FOLDER_CONVERSATIONS_MAX, rules.FOLDER_CONVERSATIONS_TOO_MANY),
});

const PRESET = rules.PRESET_TEXT_MAX;
export const NewPreset = z.object({
  name: s.requiredText(PRESET.name),
  content: s.requiredText(PRESET.content),
  category: s.text(PRESET.category).default(''),
});
export const PresetQuery = z.object({ category: s.text(PRESET.category).optional() });
export const PresetPatch = z.object({
  name: s.requiredText(PRESET.name).optional(),
  content: s.requiredText(PRESET.content).optional(),
  category: s.text(PRESET.category).optional(),
});

// ------------------------------------------------------------------------------------------- responses

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

/** The message a reply quotes (routes/chat.out quoteOut). */
export const Quote = z.object({
  messageId: z.string(),
  content: z.string().nullable().meta({ description: 'null for an agent when the contact recalled the quoted message' }),
  senderName: z.string(),
});

/** One person's reaction on a message (routes/chat.out reactionOut). */
export const Reaction = z.object({
  emoji: z.string(),
  by: z.enum(['agent', 'contact']),
  userId: z.string().meta({ description: 'the agent’s user id, or the contact’s chat-network uid' }),
  at: iso(),
});

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
const csat = Csat.nullable().meta({ description: 'the contact’s latest CSAT answer; null: none (see PUT /settings/inbox csat)' });

/** The contact of a public conversation (routes/chat.out publicContactOut). */
export const PublicConversationContact = z.object({
  id: z.string(),
  fullName: z.string(),
  phone: z.string().nullable(),
  avatarUrl: z.string().nullable(),
});

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
/** POST /api/public/messages/send. */
export const PublicSent = z.object({
  success: z.literal(true),
  messageId: z.string().describe('the stored message; read it with GET /api/public/messages/{id}'),
  status: z.string().describe('delivery status as stored: sent'),
});

// ------------------------------------------------------------------------------------------- internal API
// Each mapper in chat.out.ts is typed by its schema, and live answers are checked against it (RESPONSE_CONTRACT).

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

/** An inbox row (conversationOut). */
export const Conversation = z.object({ ...conversationFields, lastMessage: LastMessage.nullable(), isReplied: z.boolean() });

/** The conversation above its messages (headerOut). */
export const ConversationHeader = z.object(conversationFields);

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

const TimelineMessage = Message.extend({ kind: z.literal('message') });
/** A private note in the timeline: the note as its routes declare it (routes/conversation-notes.schemas.ts). */
const TimelineNote = ConversationNote.extend({
  kind: z.literal('note'),
  private: z.literal(true).describe('notes are never sent to the chat network'),
});

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

/** A saved reply (presetOut): no category is null. */
export const Preset = z.object({
  id: z.string(),
  name: z.string(),
  content: z.string(),
  category: z.string().nullable(),
  createdAt: iso(),
  updatedAt: iso(),
});

/** A chat folder (routes/chat.out folderOut). */
export const Folder = z.object({
  id: z.string(),
  name: z.string(),
  color: z.string().meta({ description: 'hex color such as #3B82F6' }),
  conversationCount: z.number().int(),
  createdAt: iso(),
});

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

/** Inbox settings (routes/chat.out inboxSettingsOut). */
export const InboxSettingsOut = z.object({
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

/** A message matching a search (routes/chat.out searchHitOut). */
export const SearchHit = z.object({
  id: z.string(),
  conversationId: z.string(),
  content: z.string(),
  sentAt: iso(),
  senderType: z.string().meta({ description: 'contact, user or system' }),
  highlight: z.string().meta({ description: 'the matching fragment, HTML-escaped, each match in <mark>…</mark>' }),
});

/** POST /conversations (internal and public): the conversation, and the first message when one was given. */
export const StartedConversation = z.object({ conversation: Conversation, message: SentMessage.nullable() });

/** `{updated, failed: [{id, code}]}` of POST /conversations/bulk: messaging's answer. */
export const BulkResult = reply('messaging', 'BulkUpdateConversations');
