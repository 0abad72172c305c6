import { eventTraceFields, isEventOf, type EventContact, type ParsedEvent } from '@crm/events';
import type { Logger } from '@crm/logger';
import { isUuid } from '../shared';
import type { FamilyModule } from '../events';
import { applyContactChanges, ContactChanges, ContactSnapshot } from './contact-events';
import { applyConversationItems, ConversationItems } from './conversation-events';
import { ARCHIVED, INBOUND, Item, REPLY } from './turns';

const ANALYTICS_TYPES = [
  'message.received',
  'message.sent',
  'conversation.archived',
  'contact.created',
  'contact.updated',
  'contact.deleted',
] as const;

/** Sends that are not a person answering: they neither end a wait nor count as someone's reply. */
const AUTOMATED_SOURCES = new Set(['automation', 'campaign']);

function time(value: unknown): number | undefined {
  const t = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** A conversation item from a message event, or undefined when it does not count (see turns.ts). */
function messageItem(event: ParsedEvent<'message.received' | 'message.sent'>): Item | undefined {
  const d = event.data;
  // Group chats: most messages there are not addressed to the team, so they have no response times.
  if (d.threadType === 'group') return undefined;
  const at = time(d.sentAt) ?? time(event.occurredAt)!;
  const id = d.messageId.toLowerCase();
  if (event.type === 'message.received') return { id, at, kind: INBOUND, userId: null };
  const userId = event.data.sentByUserId;
  if (!isUuid(userId) || AUTOMATED_SOURCES.has(event.data.source)) return undefined;
  return { id, at, kind: REPLY, userId: userId.toLowerCase() };
}

function snapshot(c: EventContact): ContactSnapshot {
  const uuidOrNull = (v: string | null) => (isUuid(v) ? v.toLowerCase() : null);
  return {
    id: c.id.toLowerCase(),
    status: c.status,
    statusId: uuidOrNull(c.statusId),
    assignedUserId: uuidOrNull(c.assignedUserId),
    dealValue: Number.isFinite(c.dealValue) ? c.dealValue : 0,
    createdAt: new Date(c.createdAt),
  };
}

/**
 * Feeds the analytics read model from a batch of events in the consumer's transaction, which also records the
 * event ids, so a redelivered event changes nothing twice. Conversation items and contact changes are grouped
 * per conversation and per contact (see conversation-events.ts and contact-events.ts); events of one
 * conversation or contact may arrive in any order.
 */
export function analyticsEvents(log: Logger): FamilyModule {
  return async (events, db) => {
    const conversations: ConversationItems[] = [];
    const contacts: ContactChanges[] = [];
    for (const event of events) {
      // Data parsed by its schema (the family consumers' parseData): ids are ids, times are instants.
      if (!isEventOf(event, ...ANALYTICS_TYPES)) continue;
      const occurredAt = time(event.occurredAt);
      if (!isUuid(event.orgId) || occurredAt === undefined) {
        log.warn({ eventId: event.id, type: event.type, ...eventTraceFields(event) }, 'analytics: event without a usable orgId or time; ignored');
        continue;
      }
      const orgId = event.orgId.toLowerCase();
      switch (event.type) {
        case 'message.received':
        case 'message.sent': {
          const item = messageItem(event);
          if (item) conversations.push({ orgId, conversationId: event.data.conversationId.toLowerCase(), items: [item] });
          break;
        }
        case 'conversation.archived':
          conversations.push({
            orgId,
            conversationId: event.data.id.toLowerCase(),
            items: [{ id: event.id.toLowerCase(), at: occurredAt, kind: ARCHIVED, userId: null }],
          });
          break;
        case 'contact.created':
        case 'contact.updated': {
          const changes = event.type === 'contact.updated' ? event.data.changes : [];
          const s = snapshot(event.data.contact);
          const created = event.type === 'contact.created';
          const assigned = created || changes.includes('assignedUserId');
          contacts.push({ orgId, contactId: s.id, changes: [{ kind: 'snapshot', snapshot: s, at: new Date(occurredAt), assigned, created }] });
          break;
        }
        case 'contact.deleted':
          contacts.push({ orgId, contactId: event.data.id.toLowerCase(), changes: [{ kind: 'deleted', at: new Date(occurredAt) }] });
          break;
      }
    }
    if (conversations.length > 0) await applyConversationItems(db, conversations);
    if (contacts.length > 0) await applyContactChanges(db, contacts);
  };
}
