import type { EventType } from '@crm/events';

/** Event types this service publishes or consumes (routing keys on the exchange), each one of the catalogue's. */
export const EVENTS = {
  // consumed
  chatnetInbound: 'chatnet.inbound',
  chatnetSeen: 'chatnet.seen',
  chatnetRecalled: 'chatnet.recalled',
  chatnetReaction: 'chatnet.reaction',
  contactUpdated: 'contact.updated',
  contactDeleted: 'contact.deleted',
  contactMerged: 'contact.merged',
  contactMergeUndone: 'contact.merge_undone',
  userAvailabilityChanged: 'user.availability_changed',
  userDeactivated: 'user.deactivated',
  // published
  conversationCreated: 'conversation.created',
  conversationArchived: 'conversation.archived',
  conversationAssigned: 'conversation.assigned',
  conversationStatusChanged: 'conversation.status_changed',
  conversationPriorityChanged: 'conversation.priority_changed',
  conversationReplyOverdue: 'conversation.reply_overdue',
  conversationSlaBreached: 'conversation.sla_breached',
  conversationCsatReceived: 'conversation.csat_received',
  messageReceived: 'message.received',
  messageSent: 'message.sent',
  messageSeen: 'message.seen',
  messageRecalled: 'message.recalled',
  messageReaction: 'message.reaction',
  conversationNoteCreated: 'conversation.note_created',
  inboxSettingsUpdated: 'inbox_settings.updated',
  // internal: who works an account (the gateway's socket audience and crm's contact visibility follow it)
  accountAssignmentUpdated: 'chatnet_account.assignment_updated',
  // internal: a conversation whose contact could not be linked (crm unreachable); consumed by this service
  contactLink: 'messaging.contact_link',
  // internal, once per database: every conversation's owner for crm's visibility projection (assignment/owners-snapshot.ts)
  conversationOwnersSnapshot: 'conversation.owners_snapshot',
} as const satisfies Record<string, EventType>;
