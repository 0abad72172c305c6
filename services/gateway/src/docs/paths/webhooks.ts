import { z } from 'zod';
import { DeliveryQuery, NewWebhook, ReplayWindow, WebhookPatch } from '../../routes/webhooks.routes';
import type { deliveryOut, replayOut, testResultOut, webhookOut } from '../../routes/webhooks.out';
import { proto, reply } from '../proto-schema';
import { area } from '../registry';
import { keysMatch } from '../schemas/check';
import { page } from '../schemas/common';

const WEBHOOKS = 'webhooks/v1/webhooks.proto';

/** The list's view of an endpoint (webhooks.out webhookBriefOut): never its secret. */
const WebhookBrief = proto(WEBHOOKS, 'webhooks.v1.Webhook').pick({ id: true, url: true, events: true, active: true, createdAt: true });
/** One endpoint (webhooks.out webhookOut): when it changed and why it is disabled, as null when not. */
const Webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  active: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  disabledAt: z.string().nullable(),
  disabledReason: z.string().nullable(),
});
keysMatch<z.infer<typeof Webhook>, ReturnType<typeof webhookOut>>(true);
/** Created: the generated secret is shown here once (absent when the caller chose it). */
const WebhookCreated = reply('webhooks', 'CreateWebhook');

const orNull = <T extends z.ZodType>(t: T) => t.nullable();
/** One event's deliveries to one endpoint with every attempt (webhooks.out deliveryOut): unset values as null. */
const Delivery = z.object({
  id: z.string(),
  webhookId: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  attemptCount: z.number().int(),
  nextAttemptAt: orNull(z.string()),
  lastStatusCode: orNull(z.number().int()),
  lastError: orNull(z.string()),
  createdAt: z.string(),
  deliveredAt: orNull(z.string()),
  attempts: z.array(
    z.object({
      attempt: z.number().int(),
      trigger: z.enum(['auto', 'manual', 'test']).meta({ description: 'auto: the event or a retry; manual: a redelivery; test: a test send' }),
      startedAt: z.string(),
      durationMs: z.number().int(),
      statusCode: orNull(z.number().int()),
      ok: z.boolean(),
      error: orNull(z.string()),
      responseBody: z.string().nullable().meta({ description: 'the start of the endpoint’s answer; null when none came back' }),
      responseBodyTruncated: z.boolean(),
    }),
  ),
  replay: z.boolean().meta({ description: 'true: the event sent again by a replay (same eventId as its own delivery)' }),
});
keysMatch<z.infer<typeof Delivery>, ReturnType<typeof deliveryOut>>(true);

/** webhooks.out testResultOut, POST …/:id/test: the attempt's result, unset values as null. */
const TestResult = z.object({
  deliveryId: z.string(),
  eventId: z.string(),
  ok: z.boolean(),
  statusCode: z.number().int().nullable(),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  responseBody: z.string().nullable(),
  responseBodyTruncated: z.boolean(),
});
keysMatch<z.infer<typeof TestResult>, ReturnType<typeof testResultOut>>(true);

/** webhooks.out replayOut: how a replay is going. */
const Replay = z.object({
  id: z.string(),
  webhookId: z.string(),
  status: z.enum(['running', 'completed']).meta({ description: 'running while any of its deliveries is pending' }),
  count: z.number().int().meta({ description: 'events the replay sends' }),
  delivered: z.number().int(),
  failed: z.number().int(),
  from: z.string(),
  to: z.string(),
  types: z.array(z.string()).meta({ description: 'the types asked for; empty: every type the endpoint subscribes to' }),
  createdAt: z.string(),
});
keysMatch<z.infer<typeof Replay>, ReturnType<typeof replayOut>>(true);

/** Webhook endpoints (webhooks service), internal API; owners and admins only (settings:edit), reads included. */
const hooks = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Webhooks' });
hooks.op('GET /webhook-settings', { summary: 'The organization’s webhook endpoints', responses: { 200: z.array(WebhookBrief) } });
hooks.op('GET /webhook-settings/event-types', {
  summary: 'The events an endpoint can subscribe to',
  responses: { 200: reply('webhooks', 'ListEventTypes') },
});
hooks.op('POST /webhook-settings', {
  summary: 'Add an endpoint; a secret is generated unless one is given, and shown only in this answer',
  description: '422 when the organization already has as many endpoints as it may (WEBHOOK_MAX_PER_ORG).',
  body: NewWebhook,
  responses: { 201: WebhookCreated },
  errors: [422],
});
hooks.op('POST /webhook-settings/deliveries/:deliveryId/redeliver', {
  summary: 'Queue one more attempt of a delivery now (422 while the endpoint is disabled)',
  responses: { 202: Delivery },
  errors: [422],
});
hooks.op('GET /webhook-settings/:id', { summary: 'One endpoint, with why it is disabled', responses: { 200: Webhook } });
hooks.op('PUT /webhook-settings/:id', {
  summary: 'Change an endpoint; only the fields sent change',
  body: WebhookPatch,
  responses: { 200: Webhook },
});
hooks.op('DELETE /webhook-settings/:id', { summary: 'Delete an endpoint', responses: { 204: null } });
hooks.op('POST /webhook-settings/:id/test', {
  summary: 'Send a `webhook.test` event now and answer how the endpoint replied',
  responses: { 200: TestResult },
});
hooks.op('POST /webhook-settings/:id/replay', {
  summary: 'Deliver the kept events of a window to the endpoint again (same event ids), at a bounded rate',
  description:
    'Every event of the event feed whose occurredAt is in [from, to) and that the endpoint subscribes to (narrowed to `types` when ' +
    'given) is delivered again with its own id and body, marked `replay: true` in the delivery log, a few at a time ' +
    '(WEBHOOK_REPLAY_PER_SECOND, WEBHOOK_REPLAY_IN_FLIGHT), so live deliveries are never held back; a failed replayed delivery is not ' +
    'retried. 400 names `from` (not a time, or before the feed’s retention), `to` (not a time, or not after from) or `types`; ' +
    '422 `webhook_inactive` while the endpoint is disabled. Needs the API key scope `webhooks:manage` once scoped keys exist.',
  body: ReplayWindow,
  responses: { 202: z.object({ replayId: z.string(), count: z.number().int().meta({ description: 'events to be sent again' }) }) },
  errors: [422],
});
hooks.op('GET /webhook-settings/:id/replays/:replayId', {
  summary: 'How a replay of the endpoint is going: delivered and failed so far',
  responses: { 200: Replay },
});
hooks.op('GET /webhook-settings/:id/deliveries', {
  summary: 'The endpoint’s delivery log, newest first',
  query: DeliveryQuery,
  paging: { limit: 50, max: 100 },
  responses: { 200: page(Delivery) },
});

export const webhookOps = hooks.ops;
