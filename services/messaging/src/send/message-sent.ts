import type { NewEvent } from '@crm/events';
import { EVENTS, messages, type ConversationRow } from '../conversations';
import { quoteOfEvent } from '../reactions';

/**
 * `message.sent` for a message stored as ours, whichever way it went out: through the CRM (the send pipeline: a
 * person, the API, automation, a schedule, the inbox itself) or typed on the account's phone (inbox's self messages:
 * source `phone`, no user). One builder, so automation, crm, analytics, the gateway's sockets and the reply timers
 * read one shape. The thread is the conversation's; `assigneeId` is the one the caller read.
 */
export function messageSentEvent(
  orgId: string,
  conv: ConversationRow,
  row: messages.MessageRow,
  by: { sentByUserId: string | null; source: string },
): NewEvent<typeof EVENTS.messageSent> {
  return {
    type: EVENTS.messageSent,
    orgId,
    data: {
      messageId: row.id,
      conversationId: conv.id,
      contactId: conv.contact_id,
      chatnetAccountId: conv.chatnet_account_id,
      assigneeId: conv.assignee_id,
      threadId: conv.thread_id,
      threadType: conv.thread_type,
      senderUid: row.sender_uid,
      senderName: row.sender_name,
      content: row.content,
      contentType: row.content_type,
      sentAt: row.sent_at.toISOString(),
      sentByUserId: by.sentByUserId,
      source: by.source,
      quote: quoteOfEvent(row),
    },
  };
}
