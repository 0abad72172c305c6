import type { webhooks } from '@crm/proto-types';
import type { z } from 'zod';
import { orNull } from '../http/shape';
import type {
  Delivery as DeliveryOut,
  Replay as ReplayOut,
  TestResult as TestResultOut,
  Webhook as WebhookOut,
  WebhookBrief,
  WebhookCreated,
} from './webhooks.schemas';

type Webhook = webhooks.Webhook__Output;
type CreatedWebhook = webhooks.CreatedWebhook__Output;
type Delivery = webhooks.Delivery__Output;
type Attempt = webhooks.Attempt__Output;
type TestResult = webhooks.TestResult__Output;
type Replay = webhooks.Replay__Output;
type Trigger = z.input<typeof DeliveryOut>['attempts'][number]['trigger'];

/** The spec's list shape of an endpoint. Never a secret. */
export function webhookBriefOut(w: Webhook): z.input<typeof WebhookBrief> {
  return { id: w.id, url: w.url, events: w.events, active: w.active, createdAt: w.createdAt };
}

/** One endpoint: the list's shape plus when it changed and why it is disabled. Never a secret. */
export function webhookOut(w: Webhook): z.input<typeof WebhookOut> {
  return { ...webhookBriefOut(w), updatedAt: w.updatedAt, disabledAt: w.disabledAt ?? null, disabledReason: w.disabledReason ?? null };
}

/** A new endpoint: the secret the service generated is shown here once; absent when the caller chose it. */
export function webhookCreatedOut(w: CreatedWebhook): z.input<typeof WebhookCreated> {
  return { id: w.id, url: w.url, events: w.events, active: w.active, createdAt: w.createdAt, ...(w.secret ? { secret: w.secret } : {}) };
}

function attemptOut(a: Attempt): z.input<typeof DeliveryOut>['attempts'][number] {
  return {
    attempt: a.attempt,
    trigger: a.trigger as Trigger,
    startedAt: a.startedAt,
    durationMs: a.durationMs,
    statusCode: a.statusCode ?? null,
    ok: a.ok,
    error: a.error ?? null,
    responseBody: orNull(a.responseBody),
    responseBodyTruncated: a.responseBodyTruncated,
  };
}

/** Absent optional proto fields become null, so every delivery has the same keys; no response body is null. */
export function deliveryOut(d: Delivery): z.input<typeof DeliveryOut> {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status as z.input<typeof DeliveryOut>['status'],
    attemptCount: d.attemptCount,
    nextAttemptAt: d.nextAttemptAt ?? null,
    lastStatusCode: d.lastStatusCode ?? null,
    lastError: d.lastError ?? null,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt ?? null,
    attempts: d.attempts.map(attemptOut),
    replay: d.replay,
  };
}

/** A test send's result, unset values as null. */
export function testResultOut(t: TestResult): z.input<typeof TestResultOut> {
  return {
    deliveryId: t.deliveryId,
    eventId: t.eventId,
    ok: t.ok,
    statusCode: t.statusCode ?? null,
    durationMs: t.durationMs,
    error: t.error ?? null,
    responseBody: orNull(t.responseBody),
    responseBodyTruncated: t.responseBodyTruncated,
  };
}

/** How a replay is going: running while any of its deliveries is pending. */
export function replayOut(r: Replay): z.input<typeof ReplayOut> {
  return {
    id: r.id,
    webhookId: r.webhookId,
    status: r.status as z.input<typeof ReplayOut>['status'],
    count: r.count,
    delivered: r.delivered,
    failed: r.failed,
    from: r.from,
    to: r.to,
    types: r.types,
    createdAt: r.createdAt,
  };
}
