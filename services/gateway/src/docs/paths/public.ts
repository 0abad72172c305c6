import { z } from 'zod';
import { publicConversationRoutes } from '../../routes/chat.routes';
import { area } from '../registry';

/**
 * The external API under /api/public (X-API-Key); each operation names the scope its route requires (http/scopes.ts).
 * Contacts and appointments (routes/crm/public-api.routes.ts) and conversations and messages (routes/chat.routes.ts) are
 * declared with their routes; the key check is here.
 */

const meta = area({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: key' });
meta.op('GET /whoami', {
  scope: 'none',
  summary: 'Check an API key: the organization it acts for',
  responses: { 200: z.object({ organizationId: z.string() }) },
});

export const publicOps = [...publicConversationRoutes.ops, ...meta.ops];
