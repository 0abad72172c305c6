import type { PoolClient } from '@crm/db';
import type { EventEnvelope } from '@crm/events';
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

const idOrNull = (v: unknown): string | null => (typeof v === 'string' && isUuid(v) ? v : null);

/**
 * Keeps crm's projection of inbox visibility (migration 008): one queue, in order, so a conversation's later
 * assignment is never overwritten by an earlier one. Malformed events are logged and dropped (retrying cannot fix them).
 */
export function inboxVisibilityHandler(log: Logger) {
  return async (event: EventEnvelope, db?: PoolClient): Promise<void> => {
    const d = (event.data ?? {}) as Record<string, unknown>;
    if (!db || !isUuid(event.orgId)) return;
    const orgId = event.orgId;
    switch (event.type) {
      case 'conversation.created': {
        const conversationId = idOrNull(d.id);
        if (!conversationId) return void log.warn({ eventId: event.id }, 'conversation.created without id; ignored');
        // An assignee set at creation (auto-assignment) arrives as its own conversation.assigned.
        await repo.upsertConversation(db, orgId, { conversationId, contactId: idOrNull(d.contactId), chatnetAccountId: idOrNull(d.chatnetAccountId), assigneeKnown: false });
        return;
      }
      case 'conversation.assigned': {
        const conversationId = idOrNull(d.conversationId);
        if (!conversationId) return void log.warn({ eventId: event.id }, 'conversation.assigned without conversationId; ignored');
        await repo.upsertConversation(db, orgId, {
          conversationId,
          contactId: idOrNull(d.contactId),
          chatnetAccountId: idOrNull(d.chatnetAccountId),
          assigneeId: idOrNull(d.assigneeId),
          assigneeKnown: true,
        });
        return;
      }
      case 'conversation.owners_snapshot': {
        // Messaging's one-time snapshot of conversations stored before this projection existed: fills gaps only.
        const list = Array.isArray(d.conversations) ? (d.conversations as Record<string, unknown>[]) : [];
        const rows = list
          .map((c) => ({ conversationId: idOrNull(c?.conversationId), contactId: idOrNull(c?.contactId), chatnetAccountId: idOrNull(c?.chatnetAccountId), assigneeId: idOrNull(c?.assigneeId) }))
          .filter((c): c is typeof c & { conversationId: string } => c.conversationId !== null);
        await repo.fillConversations(db, orgId, rows);
        return;
      }
      case 'inbox_settings.updated': {
        const value = d.agentVisibility;
        if (value !== 'all' && value !== 'assigned') return void log.warn({ eventId: event.id }, 'inbox_settings.updated with an unknown agentVisibility; ignored');
        await repo.setVisibility(db, orgId, value);
        return;
      }
      case 'chatnet_account.assignment_updated': {
        const accountId = idOrNull(d.chatnetAccountId);
        if (!accountId || !Array.isArray(d.userIds)) return void log.warn({ eventId: event.id }, 'chatnet_account.assignment_updated without chatnetAccountId or userIds; ignored');
        await repo.setAccountUsers(db, orgId, accountId, d.userIds.filter((u): u is string => typeof u === 'string' && isUuid(u)));
        return;
      }
    }
  };
}
