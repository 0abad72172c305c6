import { z } from 'zod';
import { Id, Ref } from './common';
import { defineEvent } from './define';

export const notificationCreated = defineEvent({
  type: 'notification.created',
  version: 1,
  producers: ['automation'],
  description:
    'An in-app notification was created; data: id, userId (one user) or audienceRole (every user of that role), type, title, message, resourceId.',
  data: z.object({
    id: Id,
    userId: Ref.optional(),
    audienceRole: z.string().optional(),
    type: z.string(),
    title: z.string(),
    message: z.string(),
    resourceId: z.string(),
  }),
  webhook: 'same',
});

/** audit.ts builds it; identity keeps the organization's audit log from it. */
export const auditRecorded = defineEvent({
  type: 'audit.recorded',
  version: 1,
  // Every service that records audit entries through its outbox (recordAudit); identity writes its own directly.
  producers: ['crm', 'messaging', 'chatnet-connector', 'automation', 'ai', 'webhooks'],
  description: 'Internal: an entry for the organization’s audit log, from whichever service acted.',
  data: z.object({
    actorId: Ref.nullable(),
    actorType: z.enum(['user', 'api_key', 'system']),
    action: z.string().min(1),
    resourceType: z.string().min(1),
    resourceId: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    ip: z.string().nullable(),
    requestId: z.string().nullable(),
  }),
});

export const webhookDisabled = defineEvent({
  type: 'webhook.disabled',
  version: 1,
  producers: ['webhooks'],
  description: 'Internal: a webhook endpoint was disabled after failing for too long (automation notifies the admins).',
  data: z.object({ webhookId: Id, url: z.string(), reason: z.string() }),
});

/**
 * ai's auto-reply settings (issue #32 item 5) as saved: messaging keeps the accounts whose customers get AI answers in
 * memory, so a message on any other account costs it nothing, and learns of a change from this event.
 */
export const aiAutoReplyChanged = defineEvent({
  type: 'ai.auto_reply_changed',
  version: 1,
  producers: ['ai'],
  description: 'Internal: an organization’s AI auto-reply settings changed (enabled, accounts, confidence threshold, hours, reply limit).',
  data: z.object({
    enabled: z.boolean(),
    chatnetAccountIds: z.array(Id),
    minConfidence: z.number().min(0).max(1),
    onlyOutsideBusinessHours: z.boolean(),
    maxRepliesPerConversation: z.number().int().min(1),
    /** When ai saved them: a consumer keeps the newest, whatever order the events arrive in. */
    updatedAt: z.string(),
  }),
});

export const platformEvents = [notificationCreated, auditRecorded, webhookDisabled, aiAutoReplyChanged];
