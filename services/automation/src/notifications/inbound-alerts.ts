import type { PoolClient } from '@crm/db';
import { eventTraceparent, type ParsedEvent } from '@crm/events';
import * as repo from './notifications.repo';
import { isUuid } from '@crm/validation';
import * as notifications from './notifications';

/** The longest message preview an alert (notification or email) shows. */
export const PREVIEW_CHARS = 120;

interface MessageReceived {
  conversationId?: unknown;
  senderName?: unknown;
  threadType?: unknown;
  content?: unknown;
  contentType?: unknown;
  assigneeId?: unknown;
  eligibleUserIds?: unknown;
}

/** The first PREVIEW_CHARS characters, whitespace folded; a non-text message says what it is. */
export function previewOf(content: unknown, contentType: unknown): string {
  const text = typeof content === 'string' ? content.replace(/\s+/g, ' ').trim() : '';
  const type = typeof contentType === 'string' && contentType ? contentType : 'text';
  const shown = text || (type === 'text' ? '' : `[${type}]`);
  const chars = Array.from(shown);
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS - 1).join('')}…` : shown;
}

/**
 * Who hears about an inbound message: its conversation's assignee, or when it has none, the users listed in its
 * chat-network account's assignment settings (messaging puts both on the event, as of the transaction that stored
 * the message). Nobody listed: nobody.
 */
export function recipientsOf(d: MessageReceived): string[] {
  if (typeof d.assigneeId === 'string' && isUuid(d.assigneeId)) return [d.assigneeId.toLowerCase()];
  if (!Array.isArray(d.eligibleUserIds)) return [];
  return [...new Set(d.eligibleUserIds.filter((u): u is string => typeof u === 'string' && isUuid(u)).map((u) => u.toLowerCase()))];
}

/** What one message tells each of its recipients (recipientsOf), in its org. */
export function alertsOf(event: ParsedEvent<'message.received'>): repo.NewMessageAlert[] {
  const d = event.data;
  const name = d.senderName.trim() || 'a contact';
  const title = d.threadType === 'group' ? `New message from ${name} in a group conversation` : `New message from ${name}`;
  const message = previewOf(d.content, d.contentType) || 'New message';
  return recipientsOf(d).map((userId) => ({ orgId: event.orgId, userId, conversationId: d.conversationId.toLowerCase(), title, message }));
}

/**
 * messaging's `message.received` → a `new_message` notification for each recipient, `resourceId` the conversation.
 * At most one unread per user and conversation: while one is unread, a further message updates its text and moves it
 * to the top instead of adding another (a busy group chat must not bury everything else). Only a new notification is
 * announced (`notification.created`, pushed to the user's socket and the trigger of alert emails); a bump is not,
 * since the socket's `message` event already tells open inboxes. A redelivered event finds its id recorded and does nothing.
 *
 * A batch's messages in three statements however many there are (issue #28 item 2; it was three per recipient of each
 * message): the alerts folded per (org, user, conversation) in delivery order, the latest text standing for all, as
 * one message after another would leave them; those locked, the unread ones bumped, the rest created with the id the
 * first of their messages derives. A new notification announces the latest text of the batch (one at a time, the
 * announcement carried the first message's and a bump then replaced it). Returns how many were created.
 */
export async function inboundAlerts(events: ParsedEvent<'message.received'>[], db: PoolClient): Promise<number> {
  // Each announcement in the trace of the message whose text it carries (the latest), whatever the batch's others.
  const folded = new Map<string, { firstEventId: string; alert: repo.NewMessageAlert; traceparent: string | undefined }>();
  for (const event of events) {
    const traceparent = eventTraceparent(event);
    for (const alert of alertsOf(event)) {
      const key = `${alert.orgId}|${alert.userId}|${alert.conversationId}`;
      const seen = folded.get(key);
      if (seen) {
        seen.alert = alert;
        seen.traceparent = traceparent;
      } else folded.set(key, { firstEventId: event.id, alert, traceparent });
    }
  }
  if (folded.size === 0) return 0;
  const alerts = [...folded.values()];
  const latest = alerts.map((a) => a.alert);
  await repo.lockNewMessageAlerts(db, latest);
  const bumped = await repo.bumpUnreadNewMessages(db, latest);
  const fresh = await notifications.createMany(
    db,
    alerts
      .filter((_, i) => !bumped.has(i))
      .map(({ firstEventId, alert: a, traceparent }) => ({
        id: notifications.derivedId('new_message', firstEventId, a.userId),
        input: {
          orgId: a.orgId,
          userId: a.userId,
          type: 'new_message',
          title: a.title,
          message: a.message,
          resourceId: a.conversationId,
          traceparent,
        },
      })),
  );
  return fresh.size;
}
