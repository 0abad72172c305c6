import type { webhooks } from '@crm/proto-types';
import { orNull } from '../http/shape';

type Webhook = webhooks.Webhook__Output;
type CreatedWebhook = webhooks.CreatedWebhook__Output;
type Delivery = webhooks.Delivery__Output;
type Attempt = webhooks.Attempt__Output;
type TestResult = webhooks.TestResult__Output;
type Replay = webhooks.Replay__Output;

/** The spec's list shape of an endpoint. Never a secret. */
export function webhookBriefOut(w: Webhook) {
  return { id: w.id, url: w.url, events: w.events, active: w.active, createdAt: w.createdAt };
}

/** One endpoint: the list's shape plus when it changed and why it is disabled. Never a secret. */
export function webhookOut(w: Webhook) {
  return { ...webhookBriefOut(w), updatedAt: w.updatedAt, disabledAt: w.disabledAt ?? null, disabledReason: w.disabledReason ?? null };
}

/** A new endpoint: the secret the service generated is shown here once; absent when the caller chose it. */
export function webhookCreatedOut(w: CreatedWebhook) {
  return { id: w.id, url: w.url, events: w.events, active: w.active, createdAt: w.createdAt, ...(w.secret ? { secret: w.secret } : {}) };
}

function attemptOut(a: Attempt) {
  return {
    attempt: a.attempt,
    trigger: a.trigger,
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
export function deliveryOut(d: Delivery) {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
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
export function testResultOut(t: TestResult) {
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
export function replayOut(r: Replay) {
  return {
    id: r.id,
    webhookId: r.webhookId,
    status: r.status,
    count: r.count,
    delivered: r.delivered,
    failed: r.failed,
    from: r.from,
    to: r.to,
    types: r.types,
    createdAt: r.createdAt,
  };
}
