/** A conversation as the AI features see it: oldest message first, customer messages marked. */
export interface ChatMessage {
  id: string;
  content: string;
  contentType: string;
  /** Sent by the customer (arrived from the chat network), as opposed to by the business. */
  fromCustomer: boolean;
  senderName: string;
  sentAt: string;
}

export interface ChatConversation {
  id: string;
  contactName: string;
  messages: ChatMessage[];
  /** Messages in the whole conversation (the list above holds the most recent ones). */
  totalMessages: number;
}

/** What a message says in words: text as is, other content types by their kind. */
export function messageText(m: ChatMessage): string {
  if (!m.contentType || m.contentType === 'text') return m.content ?? '';
  return m.content && m.contentType === 'link' ? m.content : `[${m.contentType}]`;
}
