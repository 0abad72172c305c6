import { z } from 'zod';
import { page } from './common.schemas';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { parseDateOrTime } from '../http/validate';
import type { RouteDeps, ServiceRoutes } from './deps';
import { deliveryOut, replayOut, testResultOut, webhookBriefOut, webhookCreatedOut, webhookOut } from './webhooks.out';
import {
  Delivery,
  DeliveryQuery,
  EventTypes,
  NewWebhook,
  Replay,
  ReplayStarted,
  ReplayWindow,
  TestResult,
  Webhook,
  WebhookBrief,
  WebhookCreated,
  WebhookPatch,
} from './webhooks.schemas';

const isoOf = (v: string) => parseDateOrTime(v)!.at.toISOString();

/**
 * Webhook settings (ARCHITECTURE.md "Webhooks"): endpoints, test sends, the attempt log, redelivery, replays.
 * Everything here is owner/admin only (`settings:edit`), reads included: the delivery log holds event payloads with
 * customer data. Served and documented from these declarations.
 */
export const webhookRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Webhooks' });
const webhooks = (deps: RouteDeps) => deps.clients.webhooks;
const ADMIN = { permission: 'settings:edit' } as const;

webhookRoutes.route('GET /webhook-settings', {
  summary: 'The organization’s webhook endpoints',
  ...ADMIN,
  response: z.array(WebhookBrief),
  handler: async ({ ctx, deps }) => (await webhooks(deps).ListWebhooks({}, ctx)).data.map(webhookBriefOut),
});
webhookRoutes.route('GET /webhook-settings/event-types', {
  summary: 'The events an endpoint can subscribe to',
  ...ADMIN,
  response: EventTypes,
  handler: async ({ ctx, deps }) => webhooks(deps).ListEventTypes({}, ctx),
});
webhookRoutes.route('POST /webhook-settings', {
  summary: 'Add an endpoint; a secret is generated unless one is given, and shown only in this answer',
  description: '422 when the organization already has as many endpoints as it may (WEBHOOK_MAX_PER_ORG).',
  ...ADMIN,
  body: NewWebhook,
  status: 201,
  response: WebhookCreated,
  errors: [422],
  handler: async ({ body: b, ctx, deps }) =>
    webhookCreatedOut(await webhooks(deps).CreateWebhook({ url: b.url, events: b.events, secret: b.secret ?? '' }, ctx)),
});
webhookRoutes.route('POST /webhook-settings/deliveries/:deliveryId/redeliver', {
  summary: 'Queue one more attempt of a delivery now (422 while the endpoint is disabled)',
  ...ADMIN,
  status: 202,
  response: Delivery,
  errors: [422],
  handler: async ({ param, ctx, deps }) => deliveryOut(await webhooks(deps).Redeliver({ id: param('deliveryId') }, ctx)),
});
webhookRoutes.route('GET /webhook-settings/:id', {
  summary: 'One endpoint, with why it is disabled',
  ...ADMIN,
  response: Webhook,
  handler: async ({ param, ctx, deps }) => webhookOut(await webhooks(deps).GetWebhook({ id: param('id') }, ctx)),
});
webhookRoutes.route('PUT /webhook-settings/:id', {
  summary: 'Change an endpoint; only the fields sent change',
  ...ADMIN,
  body: WebhookPatch,
  response: Webhook,
  handler: async ({ param, body: p, ctx, deps }) => {
    const w = await webhooks(deps).UpdateWebhook(
      { id: param('id'), url: p.url, secret: p.secret, active: p.active, events: p.events ?? [], setEvents: p.events !== undefined },
      ctx,
    );
    return webhookOut(w);
  },
});
webhookRoutes.route('DELETE /webhook-settings/:id', {
  summary: 'Delete an endpoint',
  ...ADMIN,
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await webhooks(deps).DeleteWebhook({ id: param('id') }, ctx);
  },
});
webhookRoutes.route('POST /webhook-settings/:id/test', {
  summary: 'Send a `webhook.test` event now and answer how the endpoint replied',
  ...ADMIN,
  response: TestResult,
  handler: async ({ param, ctx, deps }) => testResultOut(await webhooks(deps).TestWebhook({ id: param('id') }, ctx)),
});
webhookRoutes.route('POST /webhook-settings/:id/replay', {
  summary: 'Deliver the kept events of a window to the endpoint again (same event ids), at a bounded rate',
  description:
    'Every event of the event feed whose occurredAt is in [from, to) and that the endpoint subscribes to (narrowed to `types` when ' +
    'given) is delivered again with its own id and body, marked `replay: true` in the delivery log, a few at a time ' +
    '(WEBHOOK_REPLAY_PER_SECOND, WEBHOOK_REPLAY_IN_FLIGHT), so live deliveries are never held back; a failed replayed delivery is not ' +
    'retried. 400 names `from` (not a time, or before the feed’s retention), `to` (not a time, or not after from) or `types`; ' +
    '422 `webhook_inactive` while the endpoint is disabled. Needs the API key scope `webhooks:manage` once scoped keys exist.',
  ...ADMIN,
  body: ReplayWindow,
  status: 202,
  response: ReplayStarted,
  errors: [422],
  handler: async ({ param, body: b, ctx, deps }) => {
    const started = await webhooks(deps).ReplayWebhook({ webhookId: param('id'), from: isoOf(b.from), to: isoOf(b.to), types: b.types ?? [] }, ctx);
    return { replayId: started.replayId, count: started.count };
  },
});
webhookRoutes.route('GET /webhook-settings/:id/replays/:replayId', {
  summary: 'How a replay of the endpoint is going: delivered and failed so far',
  ...ADMIN,
  response: Replay,
  handler: async ({ param, ctx, deps }) => replayOut(await webhooks(deps).GetReplay({ webhookId: param('id'), replayId: param('replayId') }, ctx)),
});
webhookRoutes.route('GET /webhook-settings/:id/deliveries', {
  summary: 'The endpoint’s delivery log, newest first',
  ...ADMIN,
  query: DeliveryQuery,
  paging: { limit: 50, max: 100 },
  response: page(Delivery),
  handler: async ({ param, query, page, ctx, deps }) => {
    const out = await webhooks(deps).ListDeliveries({ webhookId: param('id'), ...page, ...query }, ctx);
    return { data: out.data.map(deliveryOut), pagination: out.pagination! };
  },
});

export function webhooksRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: webhookRoutes.router(deps, responseContract(deps.config)) };
}
