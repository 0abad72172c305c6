import { invalid } from '@crm/grpc-kit';
import type { Queryable } from '@crm/db';
import { isUuid } from '@crm/validation';
import type { ChatnetQuote } from '../clients';
import { messages } from '../conversations';

/** A reply's quoted message: its row (to store) and how the network needs it named (to send). */
export interface ResolvedQuote {
  messageId: string;
  network: ChatnetQuote;
}

const notInConversation = () => invalid('replyToMessageId', 'must be a message of this conversation');

/**
 * `replyToMessageId` of a send: a message of the same conversation (else 400 naming the field), as the network names
 * it. Undefined when the send replies to nothing.
 */
export async function resolveReplyTo(db: Queryable, orgId: string, conversationId: string | undefined, replyToMessageId: string | undefined) {
  const id = (replyToMessageId ?? '').trim();
  if (!id) return undefined;
  if (!isUuid(id) || !conversationId) throw notInConversation();
  const q = await messages.findById(db, orgId, id);
  if (!q || q.conversation_id !== conversationId) throw notInConversation();
  if (!q.chatnet_message_id) throw invalid('replyToMessageId', 'is not a message of the chat network');
  if (q.recalled_at) throw invalid('replyToMessageId', 'was recalled');
  const resolved: ResolvedQuote = {
    messageId: q.id,
    network: {
      chatnetMessageId: q.chatnet_message_id,
      cliMsgId: q.cli_msg_id ?? '',
      // The contact's uid for their message; empty for the account's own (the network knows its own uid).
      fromUid: q.direction === 'inbound' ? q.sender_uid : '',
      content: q.content,
      contentType: q.content_type,
      sentAt: q.sent_at.toISOString(),
    },
  };
  return resolved;
}

/** The quote of message.received and message.sent: the quoted message as stored, or null. */
export function quoteOfEvent(row: Pick<messages.MessageRow, 'quote'>) {
  return row.quote ? { messageId: row.quote.id, content: row.quote.content, senderName: row.quote.sender_name } : null;
}

/**
 * An inbound message that quotes another of its thread (the network names it by its network id): the stored message
 * is linked to it. Null when it quotes nothing, or a message this conversation does not have (older than the CRM).
 */
export async function linkInboundQuote(db: Queryable, orgId: string, conversationId: string, messageId: string, quoteChatnetMessageId: string) {
  if (!quoteChatnetMessageId) return null;
  const quoted = await messages.findInConversationByNetworkId(db, orgId, conversationId, quoteChatnetMessageId);
  if (!quoted || quoted.id === messageId) return null;
  const row = await messages.setQuote(db, orgId, messageId, quoted.id);
  return row ? quoteOfEvent(row) : null;
}

/** The stored id of the message an inbound one quotes, before it is stored (the account's own messages). */
export async function quotedIdOf(db: Queryable, orgId: string, conversationId: string, quoteChatnetMessageId: string): Promise<string | null> {
  if (!quoteChatnetMessageId) return null;
  return (await messages.findInConversationByNetworkId(db, orgId, conversationId, quoteChatnetMessageId))?.id ?? null;
}
