export { type EventEnvelope, InvalidEnvelopeError, parseEnvelope } from './envelope';
export { installEventTables, OUTBOX_CHANNEL } from './tables';
export { enqueueEvent, enqueueEvents, eventToSend, type NewEvent } from './outbox';
export type { EventToSend } from './message';
export { notifyOutboxCommitted, OutboxRelay, type OutboxRelayOptions } from './relay';
export { DirectPublisher, type DirectPublisherOptions } from './direct-publisher';
export { eventTraceFields, eventTraceparent, traceparentOf, TRACEPARENT_HEADER, withEventTrace } from './trace-context';
export { brokerConnected, type BrokerLink } from './readiness';
export { EventConsumer } from './consumer';
export {
  EVENT_STAMP_HEADER,
  EVENT_STAMP_SEAL_HEADER,
  eventOrigin,
  STAMP_CHECKERS,
  STAMPED_TYPES,
  stampRefusal,
  type EventStamper,
  type EventStampVerifier,
} from './stamps';
export type { QueueShare } from './queue-shares';
export {
  eachEvent,
  HIGH_VOLUME_PREFIXES,
  isHighVolume,
  type BatchHandler,
  type BatchHandlerWithoutDb,
  type BatchPrepare,
  type EventConsumerOptions,
  type EventHandler,
  type EventHandlerWithoutDb,
} from './consumer-options';
export { queueBindings, topicMatches } from './routing';
export { BROKER_SERVICES, type BrokerService, type ProducerService } from './broker-services';
export {
  amqpUser,
  brokerUser,
  isSharedBrokerUser,
  publisherRefusal,
  REFUSED_REASON_HEADER,
  RefusedPublisherError,
  type PublisherCheck,
} from './publishers';
export { declaredQueues, deleteTopology, dlqName, retryQueueName, DELIVERY_LIMIT } from './topology';
export {
  AUDIT_RECORDED,
  auditActor,
  auditEntry,
  auditEvent,
  recordAudit,
  type AuditAction,
  type AuditActorType,
  type AuditCaller,
  type AuditRecorded,
} from './audit';
export {
  checkProducedData,
  currentVersion,
  eventDefinitions,
  eventSchemas,
  EventContact,
  InvalidEventDataError,
  isEventOf,
  isKnownEventType,
  parseEventData,
  producersOf,
  PublicContact,
  narrowRoutingKeys,
  publicEventTypes,
  routingKeyOf,
  SCORE_ONLY_CONTACT_UPDATE,
  toPublicContact,
  webhookData,
  type EventData,
  type EventDefinition,
  type EventType,
  type ParsedEvent,
  type ParsedEventData,
} from './schemas';
export { ASSIGNMENT_REASONS, SLA_TARGETS, type AssignmentReason } from './schemas/conversations';
export { AVAILABILITY_STATUSES, type AvailabilityStatus } from './schemas/users';
export { eventCatalogue, jsonSchemaOf, type CatalogueEntry } from './schemas/catalogue';
export { EVENT_EXAMPLES, exampleContact } from './schemas/examples';
export { EVENT_OF_TRIGGER, TIMED_TRIGGER_TYPES, TRIGGER_TYPES, type TimedTriggerType, type TriggerType } from './triggers';
