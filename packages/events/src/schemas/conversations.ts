import { z } from 'zod';
import { Id, Instant, Ref, ThreadType } from './common';
import { defineEvent } from './define';

/** Messaging's events. `chatnetAccountId` rides on each so the gateway can route socket events by who works the account. */

export const conversationCreated = defineEvent({
  type: 'conversation.created',
  version: 1,
  producers: ['messaging'],
  description: 'A new conversation started with a contact; data: id, contactId (null for a group), chatnetAccountId, type (user or group), threadId.',
  data: z.object({ id: Id, contactId: Id.nullable(), chatnetAccountId: Id, type: ThreadType, threadId: z.string() }),
  webhook: 'same',
});

export const conversationArchived = defineEvent({
  type: 'conversation.archived',
  version: 1,
  producers: ['messaging'],
  description: 'A conversation was archived; data.id.',
  data: z.object({ id: Id }),
  webhook: 'same',
});

/**
 * Why the system (assignedBy null) moved a conversation (issue #29 item 5): the account's rotation for a new one, the
 * assignee's reply timeout, an SLA breach, the backlog handed to someone with capacity, the assignee deactivated or
 * gone offline, the AI assistant handing a customer to a person (issue #32). Absent on events published before the
 * field existed.
 */
export const ASSIGNMENT_REASONS = [
  'round_robin',
  'reply_timeout',
  'sla_breach',
  'backlog',
  'user_deactivated',
  'user_offline',
  'ai_handoff',
] as const;
export type AssignmentReason = (typeof ASSIGNMENT_REASONS)[number];

export const conversationAssigned = defineEvent({
  type: 'conversation.assigned',
  version: 1,
  producers: ['messaging'],
  description:
    'A conversation got a new assignee or team; data: conversationId, contactId, chatnetAccountId, assigneeId, teamId, previousAssigneeId, assignedBy (null: the system), reason (why the system moved it; null when a person did).',
  data: z.object({
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    teamId: Ref.nullable(),
    previousAssigneeId: Ref.nullable(),
    assignedBy: Ref.nullable(),
    reason: z.enum(ASSIGNMENT_REASONS).nullable().optional(),
  }),
  webhook: 'same',
});

export const conversationStatusChanged = defineEvent({
  type: 'conversation.status_changed',
  version: 1,
  producers: ['messaging'],
  description:
    'A conversation changed status (active, pending, snoozed, closed, archived); data: conversationId, contactId, chatnetAccountId, assigneeId, status, previousStatus, snoozedUntil, changedBy (null: a snooze ended or the contact wrote again).',
  data: z.object({
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    status: z.string(),
    previousStatus: z.string(),
    snoozedUntil: Instant.nullable(),
    changedBy: Ref.nullable(),
  }),
  webhook: 'same',
});

export const conversationPriorityChanged = defineEvent({
  type: 'conversation.priority_changed',
  version: 1,
  producers: ['messaging'],
  description:
    'A conversation’s priority changed (low, medium, high, urgent; null: none); data: conversationId, contactId, chatnetAccountId, assigneeId, priority, previousPriority, changedBy (null: an automation rule or an API key).',
  data: z.object({
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    // The priorities of @crm/validation messagingRules.CONVERSATION_PRIORITIES (events depend on no validation package).
    priority: z.enum(['low', 'medium', 'high', 'urgent']).nullable(),
    previousPriority: z.enum(['low', 'medium', 'high', 'urgent']).nullable(),
    changedBy: Ref.nullable(),
  }),
  webhook: 'same',
});

/** Which promise of an SLA policy (issue #29 item 2) a breach is about. */
export const SLA_TARGETS = ['first_response', 'next_response', 'resolution'] as const;

export const conversationSlaBreached = defineEvent({
  type: 'conversation.sla_breached',
  version: 1,
  producers: ['messaging'],
  description:
    'A conversation missed a due time of its SLA policy; data: conversationId, contactId, chatnetAccountId, assigneeId (at the breach), policyId, target (first_response, next_response or resolution), dueAt, breachedAt, notify (whom the policy tells: assignee, team_leads).',
  data: z.object({
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    policyId: Id,
    target: z.enum(SLA_TARGETS),
    dueAt: Instant,
    breachedAt: Instant,
    /** Whom the policy's onBreach tells (automation's in-app notifications): the assignee, the org's team leads. */
    notify: z.array(z.enum(['assignee', 'team_leads'])).default([]),
  }),
  webhook: 'same',
});

export const conversationCsatReceived = defineEvent({
  type: 'conversation.csat_received',
  version: 1,
  producers: ['messaging'],
  description:
    'The contact rated a closed conversation (issue #29 item 6); data: conversationId, contactId, chatnetAccountId, assigneeId, rating (1-5), comment (null until a later message adds one), respondedAt.',
  data: z.object({
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    rating: z.number().int().min(1).max(5),
    comment: z.string().nullable(),
    respondedAt: Instant,
  }),
  webhook: 'same',
});

export const conversationReplyOverdue = defineEvent({
  type: 'conversation.reply_overdue',
  version: 1,
  producers: ['messaging'],
  description:
    "The assignee left an inbound message unanswered for the account's reply timeout, and the account says to tell the team leads (onTimeout notify_leads, issue #29 item 5); data: conversationId, contactId, chatnetAccountId, assigneeId, contactName, waitingSince (the first unanswered message), dueAt, replyTimeoutMinutes.",
  data: z.object({
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    contactName: z.string(),
    waitingSince: Instant,
    dueAt: Instant,
    replyTimeoutMinutes: z.number().int().positive(),
  }),
  webhook: 'same',
});

export const conversationNoteCreated = defineEvent({
  type: 'conversation.note_created',
  version: 1,
  producers: ['messaging'],
  description: 'A private note was written in a conversation; data.mentions lists the users it mentions.',
  data: z.object({
    conversationId: Id,
    noteId: Id,
    authorId: Ref,
    mentions: z.array(Ref),
    contentPreview: z.string(),
    authorName: z.string(),
    contactId: Id.nullable(),
    contactName: z.string(),
    createdAt: Instant,
  }),
  webhook: 'same',
});

/** The message a reply quotes (null when it quotes none): its id, content and sender as stored. */
const QuoteRef = z.object({ messageId: Id, content: z.string(), senderName: z.string() });

export const messageReceived = defineEvent({
  type: 'message.received',
  version: 1,
  producers: ['messaging'],
  description:
    'A customer’s message arrived through a chat-network account; data also has assigneeId (the conversation’s assignee, or null) and eligibleUserIds (when unassigned, the users listed in the account’s assignment settings; else []).',
  data: z.object({
    messageId: Id,
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    threadId: z.string(),
    threadType: ThreadType,
    senderUid: z.string(),
    senderName: z.string(),
    /** Group messages: the sender as a crm contact (contactId is the conversation's, none for a group). */
    senderContactId: Id.nullable(),
    content: z.string(),
    contentType: z.string(),
    sentAt: Instant,
    assigneeId: Ref.nullable(),
    eligibleUserIds: z.array(Ref),
    /** The message it replies to; events written before quotes existed read as null. */
    quote: QuoteRef.nullable().default(null),
  }),
  webhook: 'same',
});

export const messageSent = defineEvent({
  type: 'message.sent',
  version: 1,
  producers: ['messaging'],
  description: 'A message was sent to a customer (UI, public API, automation, campaign, or typed on the account’s phone: source phone).',
  data: z.object({
    messageId: Id,
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    threadId: z.string(),
    threadType: ThreadType,
    senderUid: z.string(),
    senderName: z.string(),
    content: z.string(),
    contentType: z.string(),
    sentAt: Instant,
    sentByUserId: Ref.nullable(),
    source: z.string(),
    /** The message it replies to; events written before quotes existed read as null. */
    quote: QuoteRef.nullable().default(null),
  }),
  webhook: 'same',
});

export const messageSeen = defineEvent({
  type: 'message.seen',
  version: 1,
  producers: ['messaging'],
  description: 'The customer read messages we sent; data.messageIds lists them (data.messages: each with its source and sentAt).',
  data: z.object({
    messageIds: z.array(Id),
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    seenAt: Instant,
    messages: z.array(z.object({ id: Id, source: z.string(), sentAt: Instant })),
  }),
  webhook: 'same',
});

export const messageRecalled = defineEvent({
  type: 'message.recalled',
  version: 1,
  producers: ['messaging'],
  description:
    'A message was recalled (taken back) on the chat network: by an agent (an outbound message, recalledBy agent, userId the agent) or by the contact (recalledBy contact, fromUid the contact); data: messageId, conversationId, contactId, chatnetAccountId, assigneeId, recalledAt.',
  data: z.object({
    messageId: Id,
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    recalledAt: Instant,
    recalledBy: z.enum(['agent', 'contact']),
    userId: Ref.nullable(),
    fromUid: z.string().nullable(),
  }),
  webhook: 'same',
});

export const messageReaction = defineEvent({
  type: 'message.reaction',
  version: 1,
  producers: ['messaging'],
  description:
    'A reaction on a message changed: an agent (by agent, userId) or the contact (by contact, fromUid) set one (emoji) or took theirs back (emoji null); data: messageId, conversationId, contactId, chatnetAccountId, assigneeId, at.',
  data: z.object({
    messageId: Id,
    conversationId: Id,
    contactId: Id.nullable(),
    chatnetAccountId: Id,
    assigneeId: Ref.nullable(),
    emoji: z.string().nullable(),
    by: z.enum(['agent', 'contact']),
    userId: Ref.nullable(),
    fromUid: z.string().nullable(),
    at: Instant,
  }),
  webhook: 'same',
});

export const inboxSettingsUpdated = defineEvent({
  type: 'inbox_settings.updated',
  version: 1,
  producers: ['messaging'],
  description: 'Internal: the organization’s agent visibility changed (the gateway and crm follow it).',
  data: z.object({ agentVisibility: z.string() }),
});

export const accountAssignmentUpdated = defineEvent({
  type: 'chatnet_account.assignment_updated',
  version: 1,
  producers: ['messaging'],
  description: 'Internal: who works a chat-network account changed (the gateway’s socket audience and crm’s contact visibility follow it).',
  data: z.object({ chatnetAccountId: Id, mode: z.string(), userIds: z.array(Ref), maxOpenPerUser: z.number().nullable() }),
});

export const contactLink = defineEvent({
  type: 'messaging.contact_link',
  version: 1,
  producers: ['messaging'],
  description: 'Internal: a conversation (or a group sender) whose contact could not be linked yet (crm unreachable); messaging retries it.',
  data: z.object({
    conversationId: Id,
    chatnetUid: z.string(),
    displayName: z.string(),
    avatar: z.string(),
    chatnetAccountId: Id,
    threadType: ThreadType,
    /** A group message's sender rather than the conversation's contact. */
    sender: z.literal(true).optional(),
    /**
     * What vouches for the org at crm (the call's origin): the stamp of the inbound message that asked for the link, or
     * the origin of the user's (or automation's) send. Absent on requests from before it: crm then refuses the link.
     */
    origin: z.string().max(8192).optional(),
  }),
});

export const conversationOwnersSnapshot = defineEvent({
  type: 'conversation.owners_snapshot',
  version: 1,
  producers: ['messaging'],
  description: 'Internal, once per database: every conversation’s owner, for crm’s contact visibility projection.',
  data: z.object({
    conversations: z.array(z.object({ conversationId: Id, contactId: Id.nullable(), chatnetAccountId: Id, assigneeId: Ref.nullable() })),
  }),
});

export const conversationEvents = [
  conversationCreated,
  conversationArchived,
  conversationAssigned,
  conversationStatusChanged,
  conversationPriorityChanged,
  conversationSlaBreached,
  conversationReplyOverdue,
  conversationCsatReceived,
  conversationNoteCreated,
  messageReceived,
  messageSent,
  messageSeen,
  messageRecalled,
  messageReaction,
  inboxSettingsUpdated,
  accountAssignmentUpdated,
  contactLink,
  conversationOwnersSnapshot,
];
