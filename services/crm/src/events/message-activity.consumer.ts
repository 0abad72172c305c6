import type { PoolClient } from '@crm/db';
import type { EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import { recordActivity } from '../db/activities.repo';
import { touchLastActivity } from '../db/contacts.repo';
import { isUuid } from '../domain/validation';

interface MessageEvent {
  contactId?: string;
  content?: string;
  contentType?: string;
  sentAt?: string;
}

/**
 * message.received / message.sent → the contact's lastActivity moves to the message time (never back) and
 * the message joins the contact's activity timeline. Runs in the consumer's transaction, which also records
 * the event id, so a redelivered event changes nothing twice. lastActivity is derived data: no
 * contact.updated event for it (one per message would flood every subscriber).
 */
export function messageActivityHandler(log: Logger) {
  return async (event: EventEnvelope, db?: PoolClient): Promise<void> => {
    const data = (event.data ?? {}) as MessageEvent;
    if (!db || !isUuid(data.contactId) || !isUuid(event.orgId)) {
      log.warn({ eventId: event.id, type: event.type }, 'message event without a usable contactId or orgId; ignored');
      return;
    }
    const sentAt = new Date(data.sentAt ?? event.occurredAt);
    const at = Number.isNaN(sentAt.getTime()) ? new Date(event.occurredAt) : sentAt;
    // Deleted or unknown contact: nothing to keep current.
    if (!(await touchLastActivity(db, event.orgId, data.contactId, at))) return;
    const preview = data.contentType && data.contentType !== 'text' ? `[${data.contentType}] ${data.content ?? ''}`.trim() : (data.content ?? '');
    await recordActivity(db, {
      orgId: event.orgId,
      contactId: data.contactId,
      type: event.type === 'message.sent' ? 'message_sent' : 'message_received',
      data: preview,
      at,
    });
  };
}
