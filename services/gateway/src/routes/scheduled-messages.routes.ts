import { page } from './common.schemas';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps, ServiceRoutes } from './deps';
import { scheduledMessageOut } from './scheduled-messages.out';
import { ScheduledMessage, ScheduledPatch, ScheduledQuery } from './scheduled-messages.schemas';

const SCHEDULED =
  'Made by POST /conversations/:id/messages with sendAt; sent within 2 s of sendAt, once, as a normal send (status sent, messageId set), or failed with error. ' +
  'With inbox visibility `assigned`, an agent sees only the conversations assigned to them and the unassigned ones of their accounts; scheduled messages of the others answer 404.';

/**
 * Scheduled messages (owned by messaging): made by POST /conversations/:id/messages with `sendAt` (chat.routes.ts),
 * listed, read, changed and cancelled here until messaging's timer sends them. Internal API (bearer).
 */
export const scheduledMessageRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Scheduled messages' });
const messaging = (deps: RouteDeps) => deps.clients.messaging;

scheduledMessageRoutes.route('GET /scheduled-messages', {
  summary: 'Scheduled messages, latest send time first, optionally of one conversation and/or one status',
  description: SCHEDULED,
  query: ScheduledQuery,
  paging: { limit: 20, max: 100 },
  response: page(ScheduledMessage),
  handler: async ({ query, page, ctx, deps }) => {
    const out = await messaging(deps).ListScheduledMessages({ ...query, ...page }, ctx);
    return { data: out.data.map(scheduledMessageOut), pagination: out.pagination! };
  },
});
scheduledMessageRoutes.route('GET /scheduled-messages/:id', {
  summary: 'One scheduled message',
  description: SCHEDULED,
  response: ScheduledMessage,
  handler: async ({ param, ctx, deps }) => scheduledMessageOut(await messaging(deps).GetScheduledMessage({ id: param('id') }, ctx)),
});
scheduledMessageRoutes.route('PUT /scheduled-messages/:id', {
  summary: 'Change the content and/or sendAt of a message still scheduled (409 once sent, cancelled or failed, or while it is being sent)',
  body: ScheduledPatch,
  response: ScheduledMessage,
  errors: [409],
  handler: async ({ param, body, ctx, deps }) => scheduledMessageOut(await messaging(deps).UpdateScheduledMessage({ id: param('id'), ...body }, ctx)),
});
scheduledMessageRoutes.route('DELETE /scheduled-messages/:id', {
  summary: 'Cancel a message still scheduled (status cancelled; 409 once sent, cancelled or failed, or while it is being sent)',
  status: 204,
  response: null,
  errors: [409],
  handler: async ({ param, ctx, deps }) => {
    await messaging(deps).CancelScheduledMessage({ id: param('id') }, ctx);
  },
});

export function scheduledMessagesRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: scheduledMessageRoutes.router(deps, responseContract(deps.config)) };
}
