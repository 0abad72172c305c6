/**
 * The events a webhook can subscribe to: the public ones only. Internal events (`chatnet.inbound`, the
 * raw network message, and `chatnet_account.qr`, a login credential) never leave the system, so they
 * are not bound to the delivery queue at all, and `webhook.test` is sent only by the test action.
 */
export const PUBLIC_EVENT_TYPES = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.merged',
  'contact.merge_undone',
  'contact.note_created',
  'contact.note_updated',
  'contact.note_deleted',
  'conversation.created',
  'conversation.archived',
  'conversation.assigned',
  'conversation.status_changed',
  'conversation.priority_changed',
  'conversation.sla_breached',
  'conversation.csat_received',
  'conversation.reply_overdue',
  'conversation.note_created',
  'message.received',
  'message.sent',
  'message.seen',
  'message.recalled',
  'message.reaction',
  'appointment.created',
  'appointment.updated',
  'appointment.deleted',
  'task.created',
  'task.completed',
  'task.due',
  'chatnet_account.connected',
  'chatnet_account.disconnected',
  'friend_request.accepted',
  'notification.created',
] as const;

export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

const PUBLIC = new Set<string>(PUBLIC_EVENT_TYPES);
export const isPublicEventType = (type: string): type is PublicEventType => PUBLIC.has(type);

export const TEST_EVENT_TYPE = 'webhook.test';
/** Emitted (through this service's outbox) when an endpoint is disabled after failing for too long. */
export const DISABLED_EVENT_TYPE = 'webhook.disabled';
