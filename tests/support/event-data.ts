import { randomUUID } from 'node:crypto';
import { EVENT_EXAMPLES, exampleContact } from '@crm/events';

/**
 * Data of an event as its producer writes it, for tests that stand in for a producer: the schema's example of
 * `type` (consumers parse data by its schema, so made-up fields or missing ones are dead-lettered), with `patch`
 * over it.
 */
export function eventData(type: string, patch: Record<string, unknown> = {}): Record<string, any> {
  const data = EVENT_EXAMPLES[type];
  if (!data) throw new Error(`no example of ${type}`);
  return { ...structuredClone(data as Record<string, unknown>), ...patch };
}

/**
 * A message event's data with fresh message and conversation ids; for message.sent, sent by nobody (sentByUserId
 * null: an automated send) unless `patch` names a user.
 */
export function messageData(type: 'message.received' | 'message.sent', patch: Record<string, unknown> = {}): Record<string, any> {
  const fresh = { messageId: randomUUID(), conversationId: randomUUID(), ...(type === 'message.sent' ? { sentByUserId: null } : {}) };
  return eventData(type, { ...fresh, ...patch });
}

/** A contact as crm's events carry it (the internal shape: `name`), with `patch` over it. */
export function eventContactData(patch: Record<string, unknown> = {}): Record<string, any> {
  return { ...structuredClone(exampleContact), ...patch };
}
