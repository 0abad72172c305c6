import { randomUUID } from 'node:crypto';
import type { PoolClient } from '@crm/db';
import { enqueueEvents, type NewEvent } from '@crm/events';
import { convs, EVENTS, type ConversationRow } from '../conversations';
import { groupFallbackName, type ContactTarget, type LinkedContact } from './contacts';

/** A thread that has no conversation yet, and what is known of its contact. */
export interface NewThread {
  accountId: string;
  threadType: 'user' | 'group';
  threadId: string;
  /** The one-to-one thread's contact as crm should know it; undefined for a group (a group has no contact). */
  target: ContactTarget | undefined;
  /** crm's contact for the target, undefined when crm could not answer (or for a group). */
  contact: LinkedContact | undefined;
  /** The name when neither crm nor the target names it: the group's name from the network, if it gave one. */
  groupName?: string;
  /** The avatar when crm gave none: the network's, if the caller has it. */
  avatar?: string;
  /**
   * Who vouches for the org when the contact is linked later (the event's stamp, or a send's request origin): carried
   * in `messaging.contact_link`, since crm's contact methods are origin-bound.
   */
  origin?: string;
  /**
   * The trace the events announcing it continue: the handler's ctx.traceparent, or the eventTraceparent of the message
   * that opened it. Explicit: the service runs without an active context unless spans are exported (main.ts).
   */
  traceparent: string | undefined;
}

/**
 * A thread's conversation when it has none yet, inside the caller's transaction (a message received, one the account
 * typed on its phone, the CRM's first send into a thread): race-safe on (org, account, thread), so a second caller
 * gets the same row. The one that made it announces `conversation.created`, and when crm could not answer for the
 * contact a `messaging.contact_link` event links it later with backoff.
 */
export async function openConversation(db: PoolClient, orgId: string, n: NewThread): Promise<{ row: ConversationRow; created: boolean }> {
  return (await openConversations(db, [{ orgId, thread: n }]))[0];
}

/**
 * openConversation for many threads of one transaction (an inbound batch's new threads), with two statements for the
 * conversations and one for their events whatever their number. Answers in the order of `list` (each thread given
 * with its org); a thread given twice is made once.
 */
export async function openConversations(
  db: PoolClient,
  list: Array<{ orgId: string; thread: NewThread }>,
): Promise<Array<{ row: ConversationRow; created: boolean }>> {
  const made = await convs.insertOrGetMany(
    db,
    list.map(({ orgId, thread: n }) => ({
      id: randomUUID(),
      orgId,
      accountId: n.accountId,
      threadType: n.threadType,
      threadId: n.threadId,
      contactId: n.contact?.id ?? null,
      contactChatnetUid: n.target?.chatnetUid ?? '',
      contactName: n.contact?.name || n.target?.displayName || n.groupName || groupFallbackName(n.threadId),
      contactAvatar: n.contact?.avatar || n.avatar || '',
      contactPhone: n.contact?.phone ?? '',
    })),
  );
  // Each in the trace of its own thread's opener (an inbound batch opens threads of several traces at once).
  await enqueueEvents(
    db,
    made.flatMap(({ row: conv, created }, i): NewEvent[] => {
      if (!created) return [];
      const { orgId, thread: n } = list[i];
      const { traceparent } = n;
      const events: NewEvent[] = [
        {
          type: EVENTS.conversationCreated,
          orgId,
          data: {
            id: conv.id,
            contactId: conv.contact_id,
            chatnetAccountId: conv.chatnet_account_id,
            type: conv.thread_type,
            threadId: conv.thread_id,
          },
          traceparent,
        },
      ];
      if (n.target && !n.contact)
        events.push({ type: EVENTS.contactLink, orgId, data: { conversationId: conv.id, ...n.target, origin: n.origin }, traceparent });
      return events;
    }),
  );
  return made;
}
