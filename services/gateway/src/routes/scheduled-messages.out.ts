import type { z } from 'zod';
import type { messaging } from '@crm/proto-types';
import { orNull } from '../http/shape';
import { attachmentOut } from './chat.out';
import type { ScheduledMessage } from './scheduled-messages.schemas';

type Status = z.input<typeof ScheduledMessage>['status'];

/** A scheduled message: messageId, error, cancelReason and createdBy are null when none. */
export function scheduledMessageOut(m: messaging.ScheduledMessage__Output): z.input<typeof ScheduledMessage> {
  return {
    id: m.id,
    conversationId: m.conversationId,
    content: m.content,
    contentType: m.contentType,
    attachments: m.attachments.map(attachmentOut),
    sendAt: m.sendAt,
    cancelIfReplied: m.cancelIfReplied,
    status: m.status as Status,
    messageId: orNull(m.messageId),
    error: orNull(m.error),
    cancelReason: orNull(m.cancelReason),
    createdBy: orNull(m.createdBy),
    createdAt: m.createdAt,
  };
}
