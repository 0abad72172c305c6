import type { PoolClient } from '@crm/db';
import { eventTraceparent, type ParsedEvent } from '@crm/events';
import * as notifications from './notifications';

/**
 * messaging's `conversation.reply_overdue` (an account whose reply timeout says notify_leads) → one `reply_overdue`
 * notification for the org's team leads and above, and its notification.created. The id derives from the event, so a
 * redelivered event notifies once; `resourceId` is the conversation.
 */
export async function replyOverdue(event: ParsedEvent<'conversation.reply_overdue'>, db: PoolClient): Promise<boolean> {
  const d = event.data;
  const who = d.contactName.trim() || 'A contact';
  const minutes = d.replyTimeoutMinutes === 1 ? '1 minute' : `${d.replyTimeoutMinutes} minutes`;
  return notifications.create(db, notifications.derivedId('reply_overdue', event.id), {
    orgId: event.orgId,
    audienceRole: 'team_lead',
    type: 'reply_overdue',
    title: `Reply overdue: ${who}`,
    message: `${who} has waited more than ${minutes} for a reply from the assignee.`,
    resourceId: d.conversationId,
    traceparent: eventTraceparent(event),
  });
}
