import type { PoolClient } from '@crm/db';
import { eventTraceparent, type ParsedEvent } from '@crm/events';
import { isUuid } from '@crm/validation';
import * as notifications from './notifications';

const text = (v: string, fallback: string) => v.trim() || fallback;

/**
 * messaging's `conversation.note_created` → one `mention` notification per mentioned user (messaging resolved
 * them to users of the org), except the author, who knows. Each id derives from (event, user), so a redelivered
 * event notifies nobody twice; the notification's `resourceId` is the conversation.
 */
export async function noteMentions(event: ParsedEvent<'conversation.note_created'>, db: PoolClient): Promise<number> {
  const d = event.data;
  const author = text(d.authorName, 'A teammate');
  const where = d.contactName.trim() ? `the conversation with ${d.contactName.trim()}` : 'a conversation';
  const preview = text(d.contentPreview, '');
  const users = new Set(d.mentions.filter((u) => isUuid(u) && u !== d.authorId));
  const traceparent = eventTraceparent(event);
  let created = 0;
  for (const userId of users) {
    const fresh = await notifications.create(db, notifications.derivedId('mention', event.id, userId), {
      orgId: event.orgId,
      userId,
      type: 'mention',
      title: `${author} mentioned you in ${where}`,
      message: preview ? `${author}: ${preview}` : `${author} mentioned you in a private note.`,
      resourceId: d.conversationId,
      traceparent,
    });
    if (fresh) created++;
  }
  return created;
}
