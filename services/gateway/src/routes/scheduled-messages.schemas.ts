import { z } from 'zod';
import { messagingRules as rules } from '@crm/validation';
import { s } from '../http/validate';
import { Attachment } from './chat.schemas';
import { sendAt } from './send-at';

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

export const ScheduledQuery = z.object({
  conversationId: z.string().trim().uuid('must be an id').optional(),
  status: s.optionalQueryEnum(rules.SCHEDULED_MESSAGE_STATUSES),
});

export const ScheduledPatch = z
  .object({
    content: z.string({ error: 'must be a string' }).max(rules.CONTENT_MAX, `must be at most ${rules.CONTENT_MAX} characters`).optional(),
    sendAt: sendAt().optional(),
  })
  .refine((b) => b.content !== undefined || b.sendAt !== undefined, { path: ['content'], message: rules.SCHEDULED_CHANGE_REQUIRED });

/** A scheduled message (scheduledMessageOut): sent by messaging at sendAt; the nullable fields are null when none. */
export const ScheduledMessage = z.object({
  id: z.string(),
  conversationId: z.string(),
  content: z.string(),
  contentType: z.string(),
  attachments: z.array(Attachment),
  sendAt: iso(),
  cancelIfReplied: z.boolean().meta({ description: 'a message from the contact after scheduling cancels it (cancelReason customer_replied)' }),
  status: z.enum(rules.SCHEDULED_MESSAGE_STATUSES),
  messageId: z.string().nullable().meta({ description: 'the message sent (status sent)' }),
  error: z.string().nullable().meta({ description: 'why the send failed (status failed), or why the last attempt is retried' }),
  cancelReason: z
    .string()
    .nullable()
    .meta({ description: 'customer_replied when the contact’s message cancelled it; null when a user cancelled it' }),
  createdBy: z.string().nullable(),
  createdAt: iso(),
});
