import { isEventOf, type EventEnvelope } from '@crm/events';
import { isUuid } from '../shared';
import type { Condition } from './model';

/**
 * Which scoring facts an event carries. Pure: the consumer adds what depends on stored state (which tags
 * an update added). Times are the event's own (a message's sentAt), so late or replayed events decay by
 * their real age.
 */

export interface Fact {
  condition: Condition;
  value: string;
  at: Date;
}

export interface ContactSnapshot {
  /** Lower-case tags of the contact as the event shows them. */
  tags: string[];
  /** contact.updatedAt: orders contact events of one contact. */
  version: Date;
  /** Whether the event says the tags changed (contact.created: always). */
  tagsChanged: boolean;
}

export interface EventFacts {
  contactId: string;
  facts: Fact[];
  /** Only for contact.created / contact.updated. */
  snapshot?: ContactSnapshot;
  created: boolean;
}

function timeOf(raw: unknown, fallback: string): Date {
  const d = new Date(typeof raw === 'string' ? raw : fallback);
  return Number.isNaN(d.getTime()) ? new Date(fallback) : d;
}

export function lowerTags(tags: unknown): string[] {
  if (!Array.isArray(tags)) return [];
  return [
    ...new Set(
      tags
        .filter((t): t is string => typeof t === 'string')
        .map((t) => t.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
}

/** Types scoring reads facts from. */
const SCORED_TYPES = ['message.received', 'message.sent', 'appointment.created', 'contact.created', 'contact.updated'] as const;

/**
 * undefined when the event concerns no usable contact or nothing scoring looks at. Its data fits its schema: the
 * message-family consumer parses it (parseData) and the contact writer passes what it just produced.
 */
export function factsOf(event: EventEnvelope): EventFacts | undefined {
  if (!isEventOf(event, ...SCORED_TYPES)) return undefined;
  switch (event.type) {
    case 'message.received': {
      const d = event.data;
      if (!isUuid(d.contactId)) return undefined;
      return {
        contactId: d.contactId,
        facts: [{ condition: 'message_received', value: '', at: timeOf(d.sentAt, event.occurredAt) }],
        created: false,
      };
    }
    case 'message.sent': {
      // A reply is a message a person sent; campaign and automation sends carry no sentByUserId.
      const d = event.data;
      if (!isUuid(d.contactId) || !isUuid(d.sentByUserId)) return undefined;
      return { contactId: d.contactId, facts: [{ condition: 'message_replied', value: '', at: timeOf(d.sentAt, event.occurredAt) }], created: false };
    }
    case 'appointment.created': {
      const a = event.data.appointment;
      if (!isUuid(a.contactId)) return undefined;
      return {
        contactId: a.contactId,
        facts: [{ condition: 'appointment_created', value: '', at: timeOf(a.createdAt, event.occurredAt) }],
        created: false,
      };
    }
    case 'contact.created':
    case 'contact.updated': {
      const c = event.data.contact;
      if (!isUuid(c.id)) return undefined;
      const at = new Date(event.occurredAt);
      const created = event.type === 'contact.created';
      const changes: string[] = event.type === 'contact.updated' ? event.data.changes : [];
      const facts: Fact[] = [];
      if (created) facts.push({ condition: 'contact_created', value: '', at });
      // A contact created with a status other than the default has reached that status.
      const status = c.status;
      if (status && (created ? status !== 'new' : changes.includes('status'))) facts.push({ condition: 'status_changed', value: status, at });
      // The org's own pipeline stages (custom statuses) are a separate condition, so a change of both status
      // and stage in one update counts once for each kind of rule, never twice for one.
      const stage = isUuid(c.statusId) ? c.statusId.toLowerCase() : '';
      if (stage && (created || changes.includes('statusId'))) facts.push({ condition: 'stage_reached', value: stage, at });
      return {
        contactId: c.id,
        facts,
        snapshot: { tags: lowerTags(c.tags), version: timeOf(c.updatedAt, event.occurredAt), tagsChanged: created || changes.includes('tags') },
        created,
      };
    }
  }
}

/**
 * Tags this event added: all of a new contact's tags; for an update, those not in the last snapshot (all of
 * them when no snapshot exists: the contact predates scoring). An event older than the snapshot adds none:
 * the newer one it lost the race to already compared against an older state.
 */
export function addedTags(snapshot: ContactSnapshot, previous: { tags: string[] | null; asOf: Date | null }, created: boolean): string[] {
  if (!snapshot.tagsChanged) return [];
  if (previous.asOf && snapshot.version < previous.asOf) return [];
  if (created || previous.tags === null) return snapshot.tags;
  const before = new Set(previous.tags);
  return snapshot.tags.filter((t) => !before.has(t));
}
