/**
 * What an account does with messages on the network, on the instance holding its session: send (with files), recall,
 * react, mark a thread seen. Each request is checked here, and checked again by the holder a peer forwards it to.
 */
export { MAX_FILES, outboundOf, sendChatMessage, type SendRequest } from './send';
export { emojiOf, messageRefOf, reactToChatMessage, recallChatMessage } from './message-actions';
export { markSeenOf, markThreadSeen } from './mark-seen';
