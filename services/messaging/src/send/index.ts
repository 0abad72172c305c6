/**
 * Sending: a person's message (through the send governor, idempotent by request id), a scheduled one, and the inbox's
 * automatic messages, stored as outbound and handed to the connector. The rest of messaging uses this face.
 */
export * as send from './send';
export { checkUploads, parseInput, sendAutomatic, sendScheduled, sendToConversation } from './send';
export * as requests from './send-requests.repo';
export { messageSentEvent } from './message-sent';
