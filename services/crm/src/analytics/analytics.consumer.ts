import type { PoolClient } from '@crm/db';
import type { EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import { isUuid } from '../domain/validation';
import { applyContactDeleted, applyContactSnapshot, ContactSnapshot } from './contact-events';
import { applyItem } from './conversation-events';
import { ARCHIVED, INBOUND, Item, REPLY } from './turns';

export const ANALYTICS_BINDINGS = ['message.received', 'message.sent', 'conversation.archived', 'contact.created', 'contact.updated', 'contact.deleted'];

/** Sends that are not a person answering: they neither end a wait nor count as someone's reply. */
const AUTOMATED_SOURCES = new Set(['automation', 'campaign']);

function time(value: unknown): number | undefined {
  const t = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** A conversation item from a message event, or undefined when it does not count (see turns.ts). */
function messageItem(event: EventEnvelope, d: Record<string, unknown>): Item | undefined {
  // Group chats: most messages there are not addressed to the team, so they have no response times.
  if (d.threadType === 'group' || !isUuid(d.messageId as string)) return undefined;
  const at = time(d.sentAt) ?? time(event.occurredAt)!;
  const id = (d.messageId as string).toLowerCase();
  if (event.type === 'message.received') return { id, at, kind: INBOUND, userId: null };
  const userId = d.sentByUserId as string | undefined;
  if (!isUuid(userId) || AUTOMATED_SOURCES.has(d.source as string)) return undefined;
  return { id, at, kind: REPLY, userId: userId.toLowerCase() };
}

function snapshot(c: Record<string, unknown> | undefined): ContactSnapshot | undefined {
  if (!c || !isUuid(c.id as string)) return undefined;
  const createdAt = time(c.createdAt);
  if (createdAt === undefined) return undefined;
  const uuidOrNull = (v: unknown) => (isUuid(v as string) ? (v as string).toLowerCase() : null);
  return {
    id: (c.id as string).toLowerCase(),
    status: typeof c.status === 'string' ? c.status : 'new',
    statusId: uuidOrNull(c.statusId),
    assignedUserId: uuidOrNull(c.assignedUserId),
    dealValue: typeof c.dealValue === 'number' && Number.isFinite(c.dealValue) ? c.dealValue : 0,
    createdAt: new Date(createdAt),
  };
}

/**
 * Feeds the analytics read model (queue `<EVENTS_EXCHANGE>.crm.analytics`). Runs in the consumer's
 * transaction, which also records the event id, so a redelivered event changes nothing twice; events of one
 * conversation or contact may arrive in any order (see conversation-events.ts and contact-events.ts).
 */
export function analyticsHandler(log: Logger) {
  return async (event: EventEnvelope, db?: PoolClient): Promise<void> => {
    const d = (event.data ?? {}) as Record<string, unknown>;
    const occurredAt = time(event.occurredAt);
    if (!db || !isUuid(event.orgId) || occurredAt === undefined) {
      log.warn({ eventId: event.id, type: event.type }, 'analytics: event without a usable orgId or time; ignored');
      return;
    }
    const orgId = event.orgId.toLowerCase();
    switch (event.type) {
      case 'message.received':
      case 'message.sent': {
        const item = messageItem(event, d);
        if (item && isUuid(d.conversationId as string)) await applyItem(db, orgId, (d.conversationId as string).toLowerCase(), item);
        return;
      }
      case 'conversation.archived':
        if (isUuid(d.id as string)) await applyItem(db, orgId, (d.id as string).toLowerCase(), { id: event.id.toLowerCase(), at: occurredAt, kind: ARCHIVED, userId: null });
        return;
      case 'contact.created':
      case 'contact.updated': {
        const s = snapshot(d.contact as Record<string, unknown> | undefined);
        if (!s) {
          log.warn({ eventId: event.id, type: event.type }, 'analytics: contact event without a usable contact; ignored');
          return;
        }
        const changes = Array.isArray(d.changes) ? d.changes : [];
        const assigned = event.type === 'contact.created' || changes.includes('assignedUserId');
        await applyContactSnapshot(db, orgId, s, new Date(occurredAt), assigned);
        return;
      }
      case 'contact.deleted':
        if (isUuid(d.id as string)) await applyContactDeleted(db, orgId, (d.id as string).toLowerCase(), new Date(occurredAt));
        return;
    }
  };
}
