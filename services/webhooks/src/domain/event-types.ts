import { publicEventTypes, type EventType } from '@crm/events';

/**
 * The events a webhook can subscribe to: the public ones only, those the event catalogue gives a webhook payload
 * (one declaration: a new public event is subscribable, documented and delivered with no list to update here).
 * Internal events (`chatnet.inbound`, the raw network message, and `chatnet_account.qr`, a login credential) never
 * leave the system, so they are not bound to the delivery queue at all, and `webhook.test` is sent only by the test
 * action.
 */
export const PUBLIC_EVENT_TYPES: readonly EventType[] = publicEventTypes();

/** A public event type: the catalogue's types with a webhook payload (packages/events/src/schemas). */
export type PublicEventType = EventType;

const PUBLIC = new Set<string>(PUBLIC_EVENT_TYPES);
export const isPublicEventType = (type: string): type is PublicEventType => PUBLIC.has(type);

export const TEST_EVENT_TYPE = 'webhook.test';
/** Emitted (through this service's outbox) when an endpoint is disabled after failing for too long. */
export const DISABLED_EVENT_TYPE = 'webhook.disabled';
