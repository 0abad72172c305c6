import type { PoolClient } from '@crm/db';
import { eventTraceFields, isEventOf, type BatchHandler, type EventEnvelope } from '@crm/events';
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

const idOrNull = (v: string | null | undefined): string | null => (typeof v === 'string' && isUuid(v) ? v.toLowerCase() : null);

/**
 * Keeps crm's projection of inbox visibility (migration 008): one queue, in order, so a conversation's later
 * assignment is never overwritten by an earlier one. The consumer parses each event's data by its schema
 * (parseData): one that does not fit is dead-lettered with the reason before it gets here.
 *
 * A batch's conversation events (every new conversation brings `conversation.created` and `conversation.assigned`)
 * are folded per conversation in delivery order and written with two statements for any number (issue #28: they
 * were two statements per new conversation); any other event writes what was folded before it first, so the
 * order of the batch holds.
 */
export function inboxVisibilityHandler(log: Logger): BatchHandler {
  return async (events, db) => {
    const folded = new Map<string, repo.ConversationFacts>();
    const flush = async () => {
      if (folded.size === 0) return;
      await repo.upsertConversations(db, [...folded.values()]);
      folded.clear();
    };
    const fold = async (
      orgId: string,
      c: { conversationId: string; contactId: string | null; chatnetAccountId: string | null },
      assignee?: string | null,
    ) => {
      const id = c.conversationId.toLowerCase();
      let row = folded.get(id);
      // The same conversation id under two orgs never comes from messaging; written apart, each is checked on its own.
      if (row && row.orgId !== orgId) {
        await flush();
        row = undefined;
      }
      if (!row)
        folded.set(id, (row = { conversationId: id, orgId, contactId: null, chatnetAccountId: null, assigneeKnown: false, assigneeId: null }));
      row.contactId = idOrNull(c.contactId) ?? row.contactId;
      row.chatnetAccountId = idOrNull(c.chatnetAccountId) ?? row.chatnetAccountId;
      if (assignee !== undefined) {
        row.assigneeKnown = true;
        row.assigneeId = idOrNull(assignee);
      }
    };
    for (const event of events) {
      if (!isUuid(event.orgId)) continue;
      const orgId = event.orgId.toLowerCase();
      if (isEventOf(event, 'conversation.created')) {
        const d = event.data;
        // An assignee set at creation (auto-assignment) arrives as its own conversation.assigned.
        await fold(orgId, { conversationId: d.id, contactId: d.contactId, chatnetAccountId: d.chatnetAccountId });
        continue;
      }
      if (isEventOf(event, 'conversation.assigned')) {
        const d = event.data;
        await fold(orgId, d, d.assigneeId);
        continue;
      }
      await flush();
      await applyOther(log, event, orgId, db);
    }
    await flush();
  };
}

/** The events that are not about one conversation's facts, one at a time in their place in the batch. */
async function applyOther(log: Logger, event: EventEnvelope, orgId: string, db: PoolClient): Promise<void> {
  if (isEventOf(event, 'conversation.owners_snapshot')) {
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
      return void log.warn({ eventId: event.id, ...eventTraceFields(event) }, 'inbox_settings.updated with an unknown agentVisibility; ignored');
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
}
