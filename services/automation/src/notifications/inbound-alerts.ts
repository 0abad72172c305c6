import type { PoolClient } from '@crm/db';
import type { ParsedEvent } from '@crm/events';
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

/**
 * messaging's `message.received` → a `new_message` notification for each recipient, `resourceId` the conversation.
 * At most one unread per user and conversation: while one is unread, a further message updates its text and moves it
 * to the top instead of adding another (a busy group chat must not bury everything else). Only a new notification is
 * announced (`notification.created`, pushed to the user's socket and the trigger of alert emails); a bump is not,
 * since the socket's `message` event already tells open inboxes. A redelivered event finds its id recorded and does nothing.
 */
export async function inboundAlerts(event: ParsedEvent<'message.received'>, db: PoolClient): Promise<number> {
  const d = event.data;
  const conversationId = d.conversationId.toLowerCase();
  const name = d.senderName.trim() || 'a contact';
  const title = d.threadType === 'group' ? `New message from ${name} in a group conversation` : `New message from ${name}`;
  const message = previewOf(d.content, d.contentType) || 'New message';
  let created = 0;
  for (const userId of recipientsOf(d)) {
    await repo.lockNewMessage(db, event.orgId, userId, conversationId);
    const unread = await repo.findUnreadNewMessage(db, event.orgId, userId, conversationId);
    if (unread) {
      await repo.bumpNotification(db, unread, title, message);
      continue;
    }
    const fresh = await notifications.create(db, notifications.derivedId('new_message', event.id, userId), {
      orgId: event.orgId,
      userId,
      type: 'new_message',
      title,
      message,
      resourceId: conversationId,
    });
    if (fresh) created++;
  }
  return created;
}
