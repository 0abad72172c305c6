import { z } from 'zod';
import { PublicAppointmentQuery, PublicContactFields, PublicContactQuery, PublicNewAppointment } from '../../routes/crm';
import { PublicSend, StartConversation } from '../../routes/chat.routes';
import { START_CONVERSATION_DOC, StartedConversation } from './chat';
import { area } from '../registry';
import { PublicAppointment, PublicContact, PublicContactDetail } from '../schemas/crm';
import { PublicConversation, PublicMessage, PublicSent } from '../schemas/messaging';

/** The external API under /api/public (X-API-Key); each operation names the scope its route requires (http/scopes.ts). */

/** Every public list answers the page's next cursor beside its items (http/cursor.ts). */
const nextCursor = z.string().nullable().describe('pass as `cursor` for the next page; null on the last page');
const contacts = area({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: contacts' });
contacts.op('GET /contacts', {
  scope: 'contacts:read',
  summary: 'List contacts (search by name, phone or email; filter by status)',
  query: PublicContactQuery,
  paging: { limit: 20, max: 100, limitOnly: true, cursor: 'updatedAt' },
  responses: { 200: z.object({ contacts: z.array(PublicContact), nextCursor }) },
});
contacts.op('GET /contacts/:id', {
  scope: 'contacts:read',
  summary: 'One contact with its 5 most recent appointments and its conversation count',
  responses: { 200: PublicContactDetail },
});
contacts.op('POST /contacts', {
  scope: 'contacts:write',
  summary: 'Create a contact; at least one of fullName or phone is required',
  body: PublicContactFields,
  responses: { 201: PublicContact },
  errors: [409],
});
contacts.op('PUT /contacts/:id', {
  scope: 'contacts:write',
  summary: 'Update a contact; only the fields sent are changed',
  body: PublicContactFields,
  responses: { 200: PublicContact },
  errors: [409],
});

const appointments = area({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: appointments' });
appointments.op('GET /appointments', {
  scope: 'appointments:read',
  summary:
    'Appointments with contact information, filtered on appointmentDate (from/to inclusive), earliest first (with updatedSince: least recently changed first), up to 100 a page',
  query: PublicAppointmentQuery,
  paging: { limit: 100, max: 100, limitOnly: true, cursor: 'updatedAt' },
  responses: { 200: z.object({ appointments: z.array(PublicAppointment), nextCursor }) },
});
appointments.op('POST /appointments', {
  scope: 'appointments:write',
  summary: 'Create an appointment for a contact (404 when the contact is not the organization’s)',
  body: PublicNewAppointment,
  responses: { 201: PublicAppointment },
  errors: [404],
});

const messaging = area({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: conversations' });
messaging.op('GET /conversations', {
  scope: 'conversations:read',
  summary: 'List conversations, most recent message first (with updatedSince: least recently changed first)',
  paging: { limit: 20, max: 100, limitOnly: true, cursor: 'updatedAt' },
  responses: { 200: z.object({ conversations: z.array(PublicConversation), nextCursor }) },
});
messaging.op('GET /conversations/:id/messages', {
  scope: 'conversations:read',
  summary: 'Messages of one conversation of the organization, newest first (with updatedSince: oldest first)',
  paging: { limit: 50, max: 200, limitOnly: true, cursor: 'sentAt' },
  responses: { 200: z.object({ messages: z.array(PublicMessage), nextCursor }) },
});
messaging.op('GET /messages/:id', {
  scope: 'conversations:read',
  summary: 'One message of the organization (e.g. the messageId a send returned)',
  responses: { 200: PublicMessage },
});
messaging.op('POST /messages/send', {
  scope: 'messages:send',
  summary: 'Send a message through a connected chat-network account of the organization',
  description:
    'Send an Idempotency-Key header (or clientMessageId) so a retried request never sends twice; a replay answers the first result with `Idempotent-Replayed: true`.',
  body: PublicSend,
  headers: [{ name: 'Idempotency-Key', description: '1 to 255 characters; a repeated key answers with the first result' }],
  responses: { 200: PublicSent },
  errors: [404, 409, 422, 503],
});

messaging.op('POST /conversations', {
  scope: 'messages:send',
  summary: 'Start a conversation with a contact, phone number or network uid (optionally with a first message)',
  description: START_CONVERSATION_DOC,
  body: StartConversation,
  headers: [{ name: 'Idempotency-Key', description: 'for the first message: 1 to 255 characters; a repeated key answers with the first result' }],
  responses: { 200: StartedConversation, 201: StartedConversation },
  errors: [404, 409, 422, 503],
});

const meta = area({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: key' });
meta.op('GET /whoami', {
  scope: 'none',
  summary: 'Check an API key: the organization it acts for',
  responses: { 200: z.object({ organizationId: z.string() }) },
});

export const publicOps = [...contacts.ops, ...appointments.ops, ...messaging.ops, ...meta.ops];
