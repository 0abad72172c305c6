import { z } from 'zod';
import { nextCursorField as nextCursor } from '../../routes/crm';
import { PublicSend, StartConversation } from '../../routes/chat.routes';
import { START_CONVERSATION_DOC, StartedConversation } from './chat';
import { area } from '../registry';
import { PublicConversation, PublicMessage, PublicSent } from '../schemas/messaging';

/**
 * The external API under /api/public (X-API-Key); each operation names the scope its route requires (http/scopes.ts).
 * Contacts and appointments are declared with their routes (routes/crm/public-api.routes.ts).
 */

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

export const publicOps = [...messaging.ops, ...meta.ops];
