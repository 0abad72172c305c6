/**
 * Quoted replies, recall and reactions (issue #26): what a message says about other messages and what happened to it
 * on the network after it was sent. Other folders use this face only.
 */
export { readerOf } from './message-access';
export { recallMessage } from './recall';
export { reactToMessage, removeReaction } from './react';
export { linkInboundQuote, quotedIdOf, quoteOfEvent, resolveReplyTo, type ResolvedQuote } from './quote';
export { recordReaction, recordRecall } from './network-news';
