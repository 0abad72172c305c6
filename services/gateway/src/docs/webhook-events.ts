/** Webhook events, described once: the OpenAPI documents' `webhooks` and the settings page list them; a test checks them against what the webhooks service accepts. */
/** Events a webhook can subscribe to (the webhooks service accepts exactly these). */
export const WEBHOOK_EVENTS: { name: string; description: string }[] = [
  { name: 'contact.created', description: 'A contact was created (UI, public API, chat network or lead sync).' },
  { name: 'contact.updated', description: 'A contact changed; data.changes lists the fields.' },
  { name: 'contact.deleted', description: 'A contact was deleted.' },
  { name: 'contact.merged', description: 'A duplicate contact was merged into another; data: mergeId, targetId (the contact kept), sourceId (gone since; its id answers 404), target and source (the contacts, the source as it was).' },
  { name: 'contact.merge_undone', description: 'A merge was undone; data: mergeId, targetId, sourceId, target and source (both as they are now).' },
  { name: 'contact.note_created', description: 'A note was added to a contact; data: contactId, note {id, contactId, content, createdBy, createdAt}, by (the user, or null).' },
  { name: 'contact.note_updated', description: 'A contact’s note was edited; data as contact.note_created, note holding the new content.' },
  { name: 'contact.note_deleted', description: 'A contact’s note was deleted; data as contact.note_created, note as it was.' },
  { name: 'conversation.created', description: 'A new conversation started with a contact.' },
  { name: 'conversation.archived', description: 'A conversation was archived.' },
  {
    name: 'conversation.assigned',
    description: 'A conversation got a new assignee or team; data: conversationId, contactId, chatnetAccountId, assigneeId, teamId, previousAssigneeId, assignedBy (null: the system).',
  },
  {
    name: 'conversation.status_changed',
    description:
      'A conversation changed status (active, pending, snoozed, closed, archived); data: conversationId, contactId, chatnetAccountId, assigneeId, status, previousStatus, snoozedUntil, changedBy (null: a snooze ended or the contact wrote again).',
  },
  { name: 'conversation.note_created', description: 'A private note was written in a conversation; data.mentions lists the users it mentions.' },
  {
    name: 'message.received',
    description:
      'A customer’s message arrived through a chat-network account; data also has assigneeId (the conversation’s assignee, or null) and eligibleUserIds (when unassigned, the users listed in the account’s assignment settings; else []).',
  },
  { name: 'message.sent', description: 'A message was sent to a customer (UI, public API, automation, campaign, or typed on the account’s phone: source phone).' },
  { name: 'message.seen', description: 'The customer read messages we sent; data.messageIds lists them.' },
  { name: 'appointment.created', description: 'An appointment was scheduled.' },
  { name: 'appointment.updated', description: 'An appointment changed (rescheduled, completed, cancelled, edited); data: appointment, changes (the fields).' },
  { name: 'appointment.deleted', description: 'An appointment was deleted; data.appointment is the appointment as it was.' },
  { name: 'chatnet_account.connected', description: 'A chat-network account is connected and live.' },
  { name: 'chatnet_account.disconnected', description: 'A chat-network account lost its connection.' },
  { name: 'notification.created', description: 'An in-app notification was created.' },
];
