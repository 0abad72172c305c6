import { iso, isoOrUndefined, offsetOf, pagination } from '@crm/db';
import { AppError, invalid, notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import * as deliveries from '../db/deliveries.repo';
import * as webhooks from '../db/webhooks.repo';
import type { Deps } from '../deps';
import { isUuid, webhookRules } from '@crm/validation';

const STATUSES: readonly string[] = webhookRules.DELIVERY_STATUSES;

function attemptView(a: deliveries.AttemptRow) {
  return {
    attempt: a.attempt,
    trigger: a.trigger,
    startedAt: iso(a.started_at),
    durationMs: a.duration_ms,
    statusCode: a.status_code ?? undefined,
    ok: a.ok,
    error: a.error ?? undefined,
    responseBody: a.response_body,
    responseBodyTruncated: a.response_truncated,
  };
}

export function deliveryView(d: deliveries.DeliveryRow, attempts: deliveries.AttemptRow[] = []) {
  return {
    id: d.id,
    webhookId: d.webhook_id,
    eventId: d.event_id,
    eventType: d.event_type,
    status: d.status,
    attemptCount: d.attempts,
    nextAttemptAt: d.status === 'pending' ? isoOrUndefined(d.next_attempt_at) : undefined,
    lastStatusCode: d.last_status_code ?? undefined,
    lastError: d.last_error ?? undefined,
    createdAt: iso(d.created_at),
    deliveredAt: isoOrUndefined(d.delivered_at),
    attempts: attempts.map(attemptView),
    replay: d.replay_id !== null,
  };
}

/**
 * The attempt log of one endpoint: its deliveries, newest first, each with every attempt made. Owner and
 * admin only (settings:edit): the log keeps the payloads sent, and those carry customer data.
 */
export async function list(
  deps: Deps,
  ctx: OrgContext,
  req: { webhookId: string; page: number; limit: number; status?: string; eventType?: string },
) {
  requireCan(ctx, 'settings:edit');
  const orgId = ctx.orgId;
  if (!isUuid(req.webhookId) || !(await webhooks.find(deps.pool, orgId, req.webhookId))) throw notFound('Webhook');
  if (req.status && !STATUSES.includes(req.status)) throw invalid('status', `must be one of ${STATUSES.join(', ')}`);
  const page = { page: Math.max(1, req.page || 1), limit: Math.min(100, Math.max(1, req.limit || 50)) };
  const { rows, total } = await deliveries.listForWebhook(deps.pool, orgId, req.webhookId, {
    status: req.status || undefined,
    eventType: req.eventType || undefined,
    limit: page.limit,
    offset: offsetOf(page),
  });
  const attempts = await deliveries.attemptsOf(
    deps.pool,
    orgId,
    rows.map((r) => r.id),
  );
  const byDelivery = new Map<string, deliveries.AttemptRow[]>();
  for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
  return { data: rows.map((r) => deliveryView(r, byDelivery.get(r.id))), pagination: pagination(page, total) };
}

/** Queue one more attempt now; the endpoint must be active (a disabled one is switched on first). */
export async function redeliver(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'settings:edit');
  const orgId = ctx.orgId;
  const existing = isUuid(id) ? await deliveries.findInOrg(deps.pool, orgId, id) : undefined;
  if (!existing) throw notFound('Delivery');
  const w = await webhooks.find(deps.pool, orgId, existing.webhook_id);
  if (!w) throw notFound('Delivery');
  if (!w.active) throw new AppError('failed_precondition', 'The webhook is disabled; activate it before redelivering', { code: 'webhook_inactive' });
  const row = await deliveries.requestRedelivery(deps.pool, orgId, id);
  if (!row) throw notFound('Delivery');
  // Any instance may take it (the update has committed); should the NOTIFY fail, the next poll does.
  await deliveries
    .announceDue(deps.pool, row.webhook_id, [row.id])
    .catch((err) => deps.log.warn({ err, deliveryId: row.id, ...traceFields(ctx) }, 'webhooks: announcing a redelivery failed'));
  return deliveryView(row, await deliveries.attemptsOf(deps.pool, orgId, [row.id]));
}
