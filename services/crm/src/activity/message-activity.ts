import { eventTraceFields, isEventOf, type ParsedEvent } from '@crm/events';
import type { Logger } from '@crm/logger';
import { ActivityType, recordMessageActivity } from '../contacts';
import { isUuid } from '../shared';
import type { FamilyModule } from '../events';

interface Touch {
  contactId: string;
  type: ActivityType;
  data: string;
  at: Date;
}

/** The activity a message event adds to its contact, or undefined for an event that names no usable contact. */
function touchOf(event: ParsedEvent<'message.received' | 'message.sent'>, log: Logger): Touch | undefined {
  const { data } = event;
  // A group conversation has no contact, nor has one not linked to a contact yet (contactId null): nothing to touch,
  // and nothing to report either (a warning per group message would bury the ones that matter).
  if (data.contactId === null || data.contactId === undefined) return undefined;
  if (!isUuid(data.contactId) || !isUuid(event.orgId)) {
    log.warn({ eventId: event.id, type: event.type, ...eventTraceFields(event) }, 'message event without a usable contactId or orgId; ignored');
    return undefined;
  }
  // sentAt is an ISO instant (the schema checked it).
  const at = new Date(data.sentAt);
  const preview = data.contentType && data.contentType !== 'text' ? `[${data.contentType}] ${data.content}`.trim() : data.content;
  return { contactId: data.contactId.toLowerCase(), type: event.type === 'message.sent' ? 'message_sent' : 'message_received', data: preview, at };
}

/**
 * message.received / message.sent → the contact's lastActivity moves to the message time (never back) and
 * the message joins the contact's activity timeline, in delivery order. Per org (in id order), the batch's
 * contacts are locked in id order and written, lastActivity and the timeline, with one statement.
 * Deleted, unknown and other orgs' contacts are left alone. lastActivity is derived data: no contact.updated
 * event for it (one per message would flood every subscriber).
 */
export function messageActivity(log: Logger): FamilyModule {
  return async (events, db) => {
    const byOrg = new Map<string, Touch[]>();
    for (const event of events) {
      if (!isEventOf(event, 'message.received', 'message.sent')) continue;
      const touch = touchOf(event, log);
      if (!touch) continue;
      const orgId = event.orgId.toLowerCase();
      const list = byOrg.get(orgId) ?? [];
      list.push(touch);
      byOrg.set(orgId, list);
    }
    for (const orgId of [...byOrg.keys()].sort()) {
      const touches = byOrg.get(orgId)!;
      const latest = new Map<string, Date>();
      for (const t of touches) {
        const seen = latest.get(t.contactId);
        if (!seen || t.at > seen) latest.set(t.contactId, t.at);
      }
      await recordMessageActivity(
        db,
        orgId,
        [...latest].map(([id, at]) => ({ id, at })),
        touches,
      );
    }
  };
}
