/**
 * The public API and webhook events, described once. The OpenAPI 3.1 document at /api/public/openapi.json
 * and the documentation block of the settings page are both generated from this file, so they cannot
 * disagree. A test checks the event list against what the webhooks service accepts.
 */
type Schema = Record<string, unknown>;

const str = (description?: string): Schema => ({ type: 'string', ...(description ? { description } : {}) });
const int = (description?: string): Schema => ({ type: 'integer', ...(description ? { description } : {}) });
const dateTime: Schema = { type: 'string', format: 'date-time' };
const nullable = (s: Schema): Schema => ({ ...s, type: [s.type as string, 'null'] });
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({ type: 'object', properties, ...(required.length ? { required } : {}) });
const arr = (items: Schema): Schema => ({ type: 'array', items });

export const schemas: Record<string, Schema> = {
  Error: obj({ error: obj({ code: str(), message: str(), details: arr(obj({ field: str(), message: str() })) }, ['code', 'message']), requestId: str() }, ['error']),
  Contact: obj({
    id: str(),
    fullName: str(),
    phone: str(),
    email: str(),
    source: str('chatnet, socialnet, manual, api'),
    status: str('e.g. new, lead, customer, lost'),
    notes: str(),
    tags: arr(str()),
    createdAt: dateTime,
    updatedAt: dateTime,
  }),
  ContactInput: obj({ fullName: str(), phone: str(), email: str(), source: str(), status: str(), notes: str(), tags: arr(str()) }),
  Appointment: obj({
    id: str(),
    contactId: str(),
    appointmentDate: { type: 'string', format: 'date' },
    appointmentTime: str('HH:MM'),
    type: str('e.g. call, meeting'),
    notes: str(),
    status: str('scheduled, completed, cancelled'),
    contact: obj({ id: str(), fullName: str(), phone: str(), email: str() }),
    createdAt: dateTime,
  }),
  Conversation: obj({
    id: str(),
    threadType: { type: 'string', enum: ['user', 'group'] },
    externalThreadId: str(),
    lastMessageAt: nullable(dateTime),
    unreadCount: int(),
    isReplied: { type: 'boolean' },
    assigneeId: nullable(str('the user of the organization who owns the conversation; null when unassigned')),
    contact: nullable(obj({ id: str(), fullName: str(), phone: str(), avatarUrl: nullable(str()) })),
    updatedAt: { ...dateTime, description: 'the last change: a message, a read, its status, assignee or contact' },
  }),
  Message: obj({
    id: str(),
    conversationId: str(),
    senderType: str('contact, user, or system (public API, automation, campaign sends)'),
    senderName: str(),
    content: str(),
    contentType: str(),
    sentAt: dateTime,
    status: str('delivery status: sent, or seen once the recipient read it'),
    attachments: arr({ type: 'object' }),
  }),
};

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

export interface Endpoint {
  method: 'get' | 'post' | 'put';
  path: string;
  summary: string;
  query?: { name: string; schema: Schema; description: string }[];
  pathParams?: string[];
  body?: Schema;
  success: { status: number; schema: Schema };
  errors: number[];
}

const limit = (def: number, max: number) => ({ name: 'limit', schema: { type: 'integer', minimum: 1, maximum: max, default: def }, description: `default ${def}, at most ${max}` });

/** Every public list pages by cursor; `updatedSince` turns it into an incremental sync (see CURSORS). */
const paging = (def: number, max: number, changedAt = 'updatedAt') => [
  limit(def, max),
  { name: 'cursor', schema: str(), description: 'nextCursor of the previous page, passed back exactly; omit for the first page' },
  {
    name: 'updatedSince',
    schema: dateTime,
    description: `only records whose ${changedAt} is at or after this ISO 8601 time; the list is then ordered by ${changedAt} ascending, then id`,
  },
];
const nextCursor: Schema = nullable(str('pass as `cursor` for the next page; null on the last page'));

/** How cursors behave, for the document's description. */
const CURSORS =
  'Lists page with an opaque `cursor`: each page returns `nextCursor` (null on the last page); pass it back as `cursor`, with the same filters, ' +
  'for the next page. Pages neither overlap nor leave gaps. Without `updatedSince` a list keeps its usual order; with it the list is ordered by ' +
  'updatedAt (messages: sentAt) ascending, then id, so an integrator can sync incrementally: page to the end, remember the largest updatedAt seen, and ' +
  'next time ask for `updatedSince` a few seconds before it (a change committed late can carry a slightly earlier time). A record updated while ' +
  'you page moves behind the cursor and appears again on a later page: that is its new change. A cursor only continues the list that returned ' +
  'it (400 naming `cursor` otherwise, or when it was altered).';

export const PUBLIC_ENDPOINTS: Endpoint[] = [
  {
    method: 'get',
    path: '/api/public/contacts',
    summary: 'List contacts (search by name, phone or email; filter by status)',
    query: [{ name: 'search', schema: str(), description: 'name, phone or email' }, { name: 'status', schema: str(), description: 'contact status' }, ...paging(20, 100)],
    success: { status: 200, schema: obj({ contacts: arr(ref('Contact')), nextCursor }, ['contacts', 'nextCursor']) },
    errors: [400, 401, 429],
  },
  {
    method: 'get',
    path: '/api/public/contacts/{id}',
    summary: 'One contact with its 5 most recent appointments and its conversation count',
    pathParams: ['id'],
    success: { status: 200, schema: obj({ contact: ref('Contact'), appointments: arr(ref('Appointment')), conversationCount: int() }) },
    errors: [401, 404],
  },
  {
    method: 'post',
    path: '/api/public/contacts',
    summary: 'Create a contact; at least one of fullName or phone is required',
    body: ref('ContactInput'),
    success: { status: 201, schema: obj({ contact: ref('Contact') }) },
    errors: [400, 401, 409],
  },
  {
    method: 'put',
    path: '/api/public/contacts/{id}',
    summary: 'Update a contact; only the fields sent are changed',
    pathParams: ['id'],
    body: ref('ContactInput'),
    success: { status: 200, schema: obj({ contact: ref('Contact') }) },
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/api/public/conversations',
    summary: 'List conversations, most recent message first (with updatedSince: least recently changed first)',
    query: paging(20, 100),
    success: { status: 200, schema: obj({ conversations: arr(ref('Conversation')), nextCursor }, ['conversations', 'nextCursor']) },
    errors: [400, 401],
  },
  {
    method: 'get',
    path: '/api/public/conversations/{id}/messages',
    summary: 'Messages of one conversation of the organization, newest first (with updatedSince: oldest first)',
    pathParams: ['id'],
    query: paging(50, 200, 'sentAt'),
    success: { status: 200, schema: obj({ messages: arr(ref('Message')), nextCursor }, ['messages', 'nextCursor']) },
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/api/public/messages/{id}',
    summary: 'One message of the organization (e.g. the messageId a send returned)',
    pathParams: ['id'],
    success: { status: 200, schema: ref('Message') },
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/api/public/appointments',
    summary: 'Appointments with contact information, filtered on appointmentDate, earliest first (with updatedSince: least recently changed first), up to 100 a page',
    query: [
      { name: 'from', schema: { type: 'string', format: 'date' }, description: 'first appointmentDate (ISO date)' },
      { name: 'to', schema: { type: 'string', format: 'date' }, description: 'last appointmentDate (ISO date)' },
      ...paging(100, 100),
    ],
    success: { status: 200, schema: obj({ appointments: arr(ref('Appointment')), nextCursor }, ['appointments', 'nextCursor']) },
    errors: [400, 401],
  },
  {
    method: 'post',
    path: '/api/public/appointments',
    summary: 'Create an appointment for a contact',
    body: obj({ contactId: str(), appointmentDate: { type: 'string', format: 'date' }, appointmentTime: str('HH:MM'), type: str(), notes: str() }, ['contactId', 'appointmentDate']),
    success: { status: 201, schema: obj({ appointment: ref('Appointment') }) },
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/api/public/messages/send',
    summary: 'Send a message through a connected chat-network account of the organization (send an Idempotency-Key header, or clientMessageId, so a retried request never sends twice)',
    body: obj(
      {
        chatnetAccountId: str('the account to send through (required, under this name or as zaloAccountId)'),
        zaloAccountId: str('another name for chatnetAccountId; when both are sent they must be equal'),
        threadId: str(),
        content: str(),
        threadType: { type: 'string', enum: ['user', 'group'], default: 'user' },
      },
      ['threadId', 'content'],
    ),
    success: {
      status: 200,
      schema: obj(
        { success: { type: 'boolean', const: true }, messageId: str('the stored message; read it with GET /api/public/messages/{id}'), status: str('delivery status as stored: sent') },
        ['success', 'messageId', 'status'],
      ),
    },
    errors: [400, 401, 404, 409, 422, 429, 503],
  },
  {
    method: 'get',
    path: '/api/public/whoami',
    summary: 'Check an API key: the organization it acts for',
    success: { status: 200, schema: obj({ organizationId: str() }) },
    errors: [401],
  },
];

/** Events a webhook can subscribe to (the webhooks service accepts exactly these). */
export const WEBHOOK_EVENTS: { name: string; description: string }[] = [
  { name: 'contact.created', description: 'A contact was created (UI, public API, chat network or lead sync).' },
  { name: 'contact.updated', description: 'A contact changed; data.changes lists the fields.' },
  { name: 'contact.deleted', description: 'A contact was deleted.' },
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
  { name: 'message.sent', description: 'A message was sent to a customer (UI, public API, automation, campaign).' },
  { name: 'message.seen', description: 'The customer read messages we sent; data.messageIds lists them.' },
  { name: 'appointment.created', description: 'An appointment was scheduled.' },
  { name: 'appointment.updated', description: 'An appointment changed (rescheduled, completed, cancelled, edited); data: appointment, changes (the fields).' },
  { name: 'appointment.deleted', description: 'An appointment was deleted; data.appointment is the appointment as it was.' },
  { name: 'chatnet_account.connected', description: 'A chat-network account is connected and live.' },
  { name: 'chatnet_account.disconnected', description: 'A chat-network account lost its connection.' },
  { name: 'notification.created', description: 'An in-app notification was created.' },
];

const STATUS_TEXT: Record<number, string> = {
  400: 'A required field is missing or a value is invalid',
  401: 'Missing or invalid API key',
  404: 'Not found in this organization',
  409: 'Conflicts with an existing record, or the same Idempotency-Key is still being processed',
  422: 'The chat-network account is not connected',
  429: 'Rate limit or send cap reached; see Retry-After',
  503: 'The chat network did not answer in time; retry with the same Idempotency-Key',
};

export function openApiDocument(serverUrl = '/'): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  for (const e of PUBLIC_ENDPOINTS) {
    const parameters = [
      ...(e.pathParams ?? []).map((name) => ({ name, in: 'path', required: true, schema: str() })),
      ...(e.query ?? []).map((q) => ({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema })),
    ];
    const responses: Record<string, Schema> = {
      [String(e.success.status)]: { description: 'Success', content: { 'application/json': { schema: e.success.schema } } },
    };
    for (const s of e.errors) responses[String(s)] = { description: STATUS_TEXT[s], content: { 'application/json': { schema: ref('Error') } } };
    paths[e.path] ??= {};
    paths[e.path][e.method] = {
      summary: e.summary,
      operationId: `${e.method}${e.path.replace(/\/api\/public/, '').replace(/[{}]/g, '').split('/').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('')}`,
      ...(parameters.length ? { parameters } : {}),
      ...(e.body ? { requestBody: { required: true, content: { 'application/json': { schema: e.body } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Messaging CRM public API',
      version: '1.0.0',
      description:
        'Authenticate every call with the `X-API-Key` header (generate the key on the API & webhook settings page). ' +
        'Webhooks are signed per Standard Webhooks: headers `webhook-id`, `webhook-timestamp`, `webhook-signature` ' +
        '(`v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the base64-decoded part of a `whsec_` secret, ' +
        'or by the UTF-8 bytes of a secret you typed yourself: 16 to 128 printable characters not starting with `whsec_`). ' +
        `${CURSORS} ` +
        `Events: ${WEBHOOK_EVENTS.map((w) => w.name).join(', ')}.`,
    },
    servers: [{ url: serverUrl }],
    security: [{ apiKey: [] }],
    components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } }, schemas },
    paths,
    webhooks: Object.fromEntries(
      WEBHOOK_EVENTS.map((w) => [
        w.name,
        { post: { summary: w.description, requestBody: { content: { 'application/json': { schema: obj({ type: { type: 'string', const: w.name }, timestamp: dateTime, data: { type: 'object' } }) } } }, responses: { '200': { description: 'Any 2xx acknowledges the delivery' } } } },
      ]),
    ),
  };
}
