/**
 * One event of each type as its producer writes it (the same fields, in the same shapes: read off the producer code
 * named beside some). The event catalogue shows them as examples, the schema tests parse them, and tests that stand
 * in for a producer start from them (a producer's event must pass its schema).
 */
const ID = (n: number) => `0b8c7a52-5a0e-4c1e-9d53-${String(n).padStart(12, '0')}`;
const AT = '2024-05-01T10:00:00.000Z';

/** crm db/contacts.repo.ts toEventContact. */
export const exampleContact = {
  id: ID(1),
  name: 'Ada Lovelace',
  email: '',
  phone: '+84901234567',
  source: 'api',
  status: 'lead',
  statusId: null,
  assignedUserId: ID(2),
  avatar: '',
  leadScore: 40,
  hasChatnet: false,
  chatnetUid: null,
  threadTypes: [],
  notes: 'met at the fair',
  tags: ['vip'],
  lastActivity: AT,
  createdAt: AT,
  updatedAt: AT,
  dealValue: 1250.5,
  customFields: { plan: 'gold', seats: 3, trial: false },
};

/** crm db/appointments.repo.ts toAppointment. */
const appointment = {
  id: ID(3),
  contactId: ID(1),
  contactName: 'Ada Lovelace',
  title: 'Demo',
  description: '',
  scheduledAt: AT,
  duration: 30,
  type: 'meeting',
  location: '',
  assignedUserId: null,
  status: 'scheduled',
  notes: '',
  createdAt: AT,
  updatedAt: AT,
  contact: { id: ID(1), name: 'Ada Lovelace', phone: '+84901234567', email: '' },
};

/** crm tasks/tasks.repo.ts toTask. */
const task = {
  id: ID(9),
  title: 'Call back about the quote',
  notes: null,
  dueAt: AT,
  status: 'open',
  assigneeId: ID(2),
  contactId: ID(1),
  conversationId: ID(7),
  createdBy: ID(2),
  createdAt: AT,
  completedAt: null,
};

const note = { contactId: ID(1), note: { id: ID(4), contactId: ID(1), content: 'called back', createdBy: ID(2), createdAt: AT }, by: ID(2) };
const merge = { mergeId: ID(5), targetId: ID(1), sourceId: ID(6), target: exampleContact, source: { ...exampleContact, id: ID(6), name: 'Ada L.' } };
const conversationRef = { conversationId: ID(7), contactId: ID(1), chatnetAccountId: ID(8) };

export const EVENT_EXAMPLES: Record<string, unknown> = {
  // crm
  'contact.created': { contact: exampleContact },
  'contact.updated': { contact: exampleContact, changes: ['leadScore'], highValueThreshold: 80 },
  'contact.deleted': { id: ID(1) },
  'contact.merged': merge,
  'contact.merge_undone': merge,
  'contact.note_created': note,
  'contact.note_updated': note,
  'contact.note_deleted': { ...note, by: null },
  'appointment.created': { appointment },
  'appointment.updated': { appointment, changes: ['scheduledAt', 'status'] },
  'appointment.deleted': { appointment },
  'task.created': { task },
  'task.completed': { task: { ...task, status: 'done', completedAt: AT } },
  'task.due': { task },
  // messaging
  'conversation.created': { id: ID(7), contactId: null, chatnetAccountId: ID(8), type: 'group', threadId: 'g-1' },
  'conversation.archived': { id: ID(7) },
  'conversation.assigned': { ...conversationRef, assigneeId: ID(2), teamId: null, previousAssigneeId: null, assignedBy: null, reason: 'round_robin' },
  'conversation.priority_changed': { ...conversationRef, assigneeId: null, priority: 'urgent', previousPriority: null, changedBy: ID(2) },
  'conversation.sla_breached': { ...conversationRef, assigneeId: ID(2), policyId: ID(16), target: 'first_response', dueAt: AT, breachedAt: AT, notify: ['assignee'] },
  'conversation.csat_received': { ...conversationRef, assigneeId: ID(2), rating: 5, comment: null, respondedAt: AT },
  'conversation.status_changed': { ...conversationRef, assigneeId: null, status: 'snoozed', previousStatus: 'active', snoozedUntil: AT, changedBy: ID(2) },
  'conversation.note_created': {
    conversationId: ID(7),
    noteId: ID(9),
    authorId: ID(2),
    mentions: [ID(10)],
    contentPreview: '@Bob please call',
    authorName: 'Alice',
    contactId: ID(1),
    contactName: 'Ada Lovelace',
    createdAt: AT,
  },
  'message.received': {
    messageId: ID(11),
    ...conversationRef,
    threadId: 'u-1',
    threadType: 'user',
    senderUid: 'u-1',
    senderName: 'Ada',
    senderContactId: null,
    content: 'hello',
    contentType: 'text',
    sentAt: AT,
    assigneeId: null,
    eligibleUserIds: [ID(2)],
    quote: null,
  },
  'message.sent': {
    messageId: ID(12),
    ...conversationRef,
    assigneeId: ID(2),
    threadId: 'u-1',
    threadType: 'user',
    senderUid: '',
    senderName: 'Alice',
    content: 'hi Ada',
    contentType: 'text',
    sentAt: AT,
    sentByUserId: ID(2),
    source: 'ui',
    quote: { messageId: ID(11), content: 'hello', senderName: 'Ada' },
  },
  'message.seen': { messageIds: [ID(12)], ...conversationRef, assigneeId: ID(2), seenAt: AT, messages: [{ id: ID(12), source: 'ui', sentAt: AT }] },
  'message.recalled': { messageId: ID(12), ...conversationRef, assigneeId: ID(2), recalledAt: AT, recalledBy: 'agent', userId: ID(2), fromUid: null },
  'message.reaction': { messageId: ID(11), ...conversationRef, assigneeId: ID(2), emoji: '👍', by: 'agent', userId: ID(2), fromUid: null, at: AT },
  'inbox_settings.updated': { agentVisibility: 'assigned' },
  'chatnet_account.assignment_updated': { chatnetAccountId: ID(8), mode: 'round_robin', userIds: [ID(2)], maxOpenPerUser: null },
  'messaging.contact_link': { conversationId: ID(7), chatnetUid: 'u-9', displayName: 'Bob', avatar: '', chatnetAccountId: ID(8), threadType: 'group', sender: true },
  'conversation.owners_snapshot': { conversations: [{ ...conversationRef, assigneeId: null }] },
  // chatnet-connector
  'chatnet.inbound': {
    accountId: ID(8),
    chatnetMessageId: 'm-1',
    threadId: 'g-1',
    threadType: 'group',
    fromUid: 'u-9',
    fromName: 'Bob',
    fromAvatar: '',
    content: 'photo',
    contentType: 'image',
    sentAt: AT,
    groupName: 'Friends',
    cliMsgId: 'c-1',
    quoteChatnetMessageId: 'm-0',
    attachments: [{ id: ID(13), fileName: 'a.jpg', mimeType: 'image/jpeg', size: 1024 }],
  },
  'chatnet.recalled': { accountId: ID(8), threadId: 'u-1', threadType: 'user', chatnetMessageId: 'm-1', fromUid: 'u-1', recalledAt: AT },
  'chatnet.reaction': { accountId: ID(8), threadId: 'u-1', threadType: 'user', chatnetMessageId: 'm-2', fromUid: 'u-1', emoji: '❤️', at: AT },
  'chatnet.seen': { accountId: ID(8), threadId: 'u-1', threadType: 'user', chatnetMessageIds: ['m-2'], seenByUid: null, seenAt: AT },
  'chatnet_account.qr': { accountId: ID(8), qr: 'data:image/png;base64,AAAA', expiresAt: AT },
  'chatnet_account.connected': { accountId: ID(8), chatnetUid: 'me-1', displayName: 'Shop' },
  'chatnet_account.disconnected': { accountId: ID(8), reason: 'logged out on the phone' },
  'chatnet_account.friends': { accountId: ID(8), friends: [{ chatnetUid: 'u-1', displayName: 'Ada' }] },
  // chatnet-connector domain/friend-requests.ts recordAccepted
  'friend_request.accepted': { id: ID(30), chatnetAccountId: ID(8), chatnetUid: 'u-1', acceptedAt: AT },
  // automation, every service, webhooks
  'notification.created': { id: ID(14), userId: ID(2), type: 'high_value_lead', title: 'Hot lead', message: 'Ada reached 80', resourceId: ID(1) },
  'audit.recorded': {
    actorId: null,
    actorType: 'api_key',
    action: 'contact.deleted',
    resourceType: 'contact',
    resourceId: ID(1),
    details: { name: 'Ada' },
    ip: '203.0.113.9',
    requestId: 'r-1',
  },
  'webhook.disabled': { webhookId: ID(15), url: 'https://example.com/hook', reason: 'failing continuously for 3 days' },
  'user.availability_changed': { userId: ID(2), status: 'offline', previousStatus: 'online', chosenStatus: 'online' },
  'user.deactivated': { userId: ID(2) },
};
