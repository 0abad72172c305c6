/**
 * The inbox: messages received (chatnet.inbound, stored in batches), the account's own messages typed on the phone,
 * read receipts, the conversation list, detail and its moves, and the public API's read of conversations. The
 * rest of messaging uses this face.
 */
export * as conversations from './conversations';
export * as publicApi from './public';
export { prepareInbound, storeInboundBatch, type InboundPrepared } from './inbound';
export { markManySeenOnNetwork } from './read-on-network';
export { recordSeen } from './seen';
