import type { EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import { isUuid } from '../shared';
import type { FamilyModule } from '../events';
import { applyContactChanges, ContactChanges, ContactSnapshot } from './contact-events';
import { applyConversationItems, ConversationItems } from './conversation-events';
import { ARCHIVED, INBOUND, Item, REPLY } from './turns';

const ANALYTICS_TYPES = new Set(['message.received', 'message.sent', 'conversation.archived', 'contact.created', 'contact.updated', 'contact.deleted']);

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

/** A contact.updated that only announces a new leadScore (scoring's own): the read model uses none of it. */
const onlyLeadScore = (changes: unknown[]) => changes.length > 0 && changes.every((c) => c === 'leadScore');

/**
 * Feeds the analytics read model from a batch of events in the consumer's transaction, which also records the
 * event ids, so a redelivered event changes nothing twice. Conversation items and contact changes are grouped
 * and applied conversation by conversation and contact by contact (see conversation-events.ts and
 * contact-events.ts); events of one conversation or contact may arrive in any order.
 */
export function analyticsEvents(log: Logger): FamilyModule {
  return async (events, db) => {
    const conversations: ConversationItems[] = [];
    const contacts: ContactChanges[] = [];
    for (const event of events) {
      if (!ANALYTICS_TYPES.has(event.type)) continue;
      const d = (event.data ?? {}) as Record<string, unknown>;
      const occurredAt = time(event.occurredAt);
      if (!isUuid(event.orgId) || occurredAt === undefined) {
        log.warn({ eventId: event.id, type: event.type }, 'analytics: event without a usable orgId or time; ignored');
        continue;
      }
      const orgId = event.orgId.toLowerCase();
      switch (event.type) {
        case 'message.received':
        case 'message.sent': {
          const item = messageItem(event, d);
          if (item && isUuid(d.conversationId as string)) conversations.push({ orgId, conversationId: (d.conversationId as string).toLowerCase(), items: [item] });
          break;
        }
        case 'conversation.archived':
          if (isUuid(d.id as string)) conversations.push({ orgId, conversationId: (d.id as string).toLowerCase(), items: [{ id: event.id.toLowerCase(), at: occurredAt, kind: ARCHIVED, userId: null }] });
          break;
        case 'contact.created':
        case 'contact.updated': {
          const changes = Array.isArray(d.changes) ? d.changes : [];
          if (event.type === 'contact.updated' && onlyLeadScore(changes)) break;
          const s = snapshot(d.contact as Record<string, unknown> | undefined);
          if (!s) {
            log.warn({ eventId: event.id, type: event.type }, 'analytics: contact event without a usable contact; ignored');
            break;
          }
          const assigned = event.type === 'contact.created' || changes.includes('assignedUserId');
          contacts.push({ orgId, contactId: s.id, changes: [{ kind: 'snapshot', snapshot: s, at: new Date(occurredAt), assigned }] });
          break;
        }
        case 'contact.deleted':
          if (isUuid(d.id as string)) contacts.push({ orgId, contactId: (d.id as string).toLowerCase(), changes: [{ kind: 'deleted', at: new Date(occurredAt) }] });
          break;
      }
    }
    if (conversations.length > 0) await applyConversationItems(db, conversations);
    if (contacts.length > 0) await applyContactChanges(db, contacts);
  };
}
