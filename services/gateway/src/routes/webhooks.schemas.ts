import { z } from 'zod';
import type { webhooks } from '@crm/proto-types';
import { webhookRules as rules } from '@crm/validation';
import { reply } from '../docs/proto-schema';
import { s } from '../http/validate';

// Shapes and the URL scheme only; the webhooks service owns the rules (event names, URL address policy, secret format).
const url = z
  .string({ error: 'is required' })
  .trim()
  .min(1, 'is required')
  .pipe(s.httpUrl({ max: rules.MAX_URL_LENGTH }));
const events = z
  .array(z.string({ error: 'must be an array of event names' }), { error: 'must be an array of event names' })
  .max(rules.MAX_EVENTS, rules.TOO_MANY_EVENTS);
// 128 characters may take 256 UTF-16 units (emoji); the service counts characters. An unpaired surrogate
// cannot cross gRPC as itself (it would arrive as U+FFFD, a different key), so it stops here.
const secret = z
  .string({ error: 'must be a string' })
  .max(256, 'must be at most 128 characters')
  .refine((v) => !/\p{Cs}/u.test(v), 'must not contain control characters or line breaks');

export const NewWebhook = z.object({
  url,
  events: events.min(1, rules.NO_EVENTS),
  secret: secret.optional(),
});
export const WebhookPatch = z.object({
  url: url.optional(),
  events: events.min(1, rules.NO_EVENTS).optional(),
  secret: secret.min(1, 'must not be empty').optional(),
  active: z.boolean({ error: 'must be true or false' }).optional(),
});
/** A replay's window (event occurredAt, from inclusive, to exclusive) and types; the service checks the retention. */
export const ReplayWindow = z.object({
  from: s.timestamp(),
  to: s.timestamp(),
  types: z
    .array(z.string({ error: 'must be an array of event names' }), { error: 'must be an array of event names' })
    .max(rules.MAX_EVENTS, rules.TOO_MANY_EVENTS)
    .optional(),
});
export const DeliveryQuery = z.object({
  status: s.optionalQueryEnum(rules.DELIVERY_STATUSES),
  eventType: z.string().max(100).optional(),
});

/** A service's answer forwarded untouched: documented from its proto, typed as the generated client gives it. */
const forwarded = <T>(schema: z.ZodObject) => schema as unknown as z.ZodType<T>;

/** One endpoint (webhooks.out webhookOut): when it changed and why it is disabled, as null when not. */
export const Webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  active: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  disabledAt: z.string().nullable(),
  disabledReason: z.string().nullable(),
});
/** The list's view of an endpoint (webhooks.out webhookBriefOut): never its secret. */
export const WebhookBrief = Webhook.pick({ id: true, url: true, events: true, active: true, createdAt: true });
/** Created: the generated secret is shown here once (absent when the caller chose it). */
export const WebhookCreated = reply('webhooks', 'CreateWebhook');
export const EventTypes = forwarded<webhooks.EventTypeList__Output>(reply('webhooks', 'ListEventTypes'));

const orNull = <T extends z.ZodType>(t: T) => t.nullable();
/** One event's deliveries to one endpoint with every attempt (webhooks.out deliveryOut): unset values as null. */
export const Delivery = z.object({
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

/** webhooks.out testResultOut, POST …/:id/test: the attempt's result, unset values as null. */
export const TestResult = z.object({
  deliveryId: z.string(),
  eventId: z.string(),
  ok: z.boolean(),
  statusCode: z.number().int().nullable(),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  responseBody: z.string().nullable(),
  responseBodyTruncated: z.boolean(),
});

/** webhooks.out replayOut: how a replay is going. */
export const Replay = z.object({
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

/** POST …/:id/replay: the replay started and how many events it sends. */
export const ReplayStarted = z.object({ replayId: z.string(), count: z.number().int().meta({ description: 'events to be sent again' }) });
