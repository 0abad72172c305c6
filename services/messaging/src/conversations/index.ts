/**
 * Messaging's core: the conversation and message rows and their SQL (convs, messages), the word search both lists
 * run on, the names of the events messaging publishes, and a conversation as its caller may see it (load). Every
 * other module builds on this one, and it on none but visibility and attachments.
 */
export * as convs from './conversations.repo';
export { CONVERSATION_STATUSES, type ConversationRow, type ConversationStatus } from './conversations.repo';
export * as messages from './messages.repo';
export { type NewlyRead, sentAtOffset } from './messages.repo';
export { search as findMessages } from './message-search.repo';
export { highlight, MAX_TERM, MAX_WORDS, phoneDigits, wordsOf } from './search-text';
export { EVENTS } from './events';
export type { InboundData } from './inbound-data';
export { clampPage, load } from './access';
