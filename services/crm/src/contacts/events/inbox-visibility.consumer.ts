import type { PoolClient } from '@crm/db';
import { isEventOf, type EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import * as repo from '../db/visibility.repo';
import { isUuid } from '../../shared';

/** What this consumer reads: messaging's conversation and settings events, the account assignment event. */
export const INBOX_VISIBILITY_BINDINGS = [
  'conversation.created',
  'conversation.assigned',
  'conversation.owners_snapshot',
  'inbox_settings.updated',
  'chatnet_account.assignment_updated',
];

const idOrNull = (v: string | null): string | null => (v !== null && isUuid(v) ? v : null);

/**
 * Keeps crm's projection of inbox visibility (migration 008): one queue, in order, so a conversation's later
 * assignment is never overwritten by an earlier one. The consumer parses each event's data by its schema
 * (parseData): one that does not fit is dead-lettered with the reason before it gets here.
 */
export function inboxVisibilityHandler(log: Logger) {
  return async (event: EventEnvelope, db: PoolClient): Promise<void> => {
    if (!isUuid(event.orgId)) return;
    const orgId = event.orgId;
    if (isEventOf(event, 'conversation.created')) {
      const d = event.data;
      // An assignee set at creation (auto-assignment) arrives as its own conversation.assigned.
      await repo.upsertConversation(db, orgId, {
        conversationId: d.id,
        contactId: idOrNull(d.contactId),
        chatnetAccountId: idOrNull(d.chatnetAccountId),
        assigneeKnown: false,
      });
    } else if (isEventOf(event, 'conversation.assigned')) {
      const d = event.data;
      await repo.upsertConversation(db, orgId, {
        conversationId: d.conversationId,
        contactId: idOrNull(d.contactId),
        chatnetAccountId: idOrNull(d.chatnetAccountId),
        assigneeId: idOrNull(d.assigneeId),
        assigneeKnown: true,
      });
    } else if (isEventOf(event, 'conversation.owners_snapshot')) {
      // Messaging's one-time snapshot of conversations stored before this projection existed: fills gaps only.
      const rows = event.data.conversations.map((c) => ({
        conversationId: c.conversationId,
        contactId: idOrNull(c.contactId),
        chatnetAccountId: idOrNull(c.chatnetAccountId),
        assigneeId: idOrNull(c.assigneeId),
      }));
      await repo.fillConversations(db, orgId, rows);
    } else if (isEventOf(event, 'inbox_settings.updated')) {
      const value = event.data.agentVisibility;
      if (value !== 'all' && value !== 'assigned')
        return void log.warn({ eventId: event.id }, 'inbox_settings.updated with an unknown agentVisibility; ignored');
      await repo.setVisibility(db, orgId, value);
    } else if (isEventOf(event, 'chatnet_account.assignment_updated')) {
      const d = event.data;
      await repo.setAccountUsers(
        db,
        orgId,
        d.chatnetAccountId,
        d.userIds.filter((u) => isUuid(u)),
      );
    }
  };
}
