/**
 * What the connector announces: the events it publishes (names and builders, derived ids), inbound messages published
 * straight to the broker with confirms, and the rest of the network's news written to the outbox in batches.
 */
export {
  connectedEvent,
  disconnectedEvent,
  EVENTS,
  friendsEvent,
  inboundEvent,
  inboundEventId,
  qrEvent,
  reactionEvent,
  recalledEvent,
  seenEvent,
} from './events';
export { NewsPublisher } from './news-publisher';
export { OutboxBatcher } from './outbox-batcher';
