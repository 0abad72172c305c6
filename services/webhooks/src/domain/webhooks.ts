import { randomUUID } from 'node:crypto';
import { iso, isoOrUndefined, withRetriedTransaction, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { AppError, invalid, notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import * as deliveries from '../db/deliveries.repo';
import * as webhooks from '../db/webhooks.repo';
import { type Deps, secretAad } from '../deps';
import { PUBLIC_EVENT_TYPES, TEST_EVENT_TYPE } from './event-types';
import { generateSecret, parseSecret, secretKey } from './signing';
import { isUuid } from '@crm/validation';
import { parseWebhookUrl, validateEvents } from './validation';

/** How long saving a URL waits for its host to resolve. */
const RESOLVE_TIMEOUT_MS = 3_000;
/** A test send is answered within the gateway's deadline however long the delivery timeout is. */
const TEST_TIMEOUT_MS = 8_000;

export function view(w: webhooks.WebhookRow) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    active: w.active,
    createdAt: iso(w.created_at),
    updatedAt: iso(w.updated_at),
    disabledAt: isoOrUndefined(w.disabled_at),
    disabledReason: w.disabled_reason ?? undefined,
  };
}

/**
 * Validate a URL being saved: its shape, and the addresses its host has now. A host that resolves to a
 * refused address is a 400; one that does not resolve at the moment is accepted (DNS may not be set up
 * yet) and judged again on every attempt, which is where the guard really holds.
 */
async function checkUrl(deps: Deps, ctx: OrgContext, raw: string | undefined): Promise<string> {
  const url = parseWebhookUrl(raw);
  const check = await deps.sender.guard.checkOnSave(url.hostname, RESOLVE_TIMEOUT_MS);
  if ('refused' in check) throw invalid('url', check.refused);
  if ('unresolved' in check)
    deps.log.info({ host: url.hostname, err: check.unresolved, ...traceFields(ctx) }, 'webhook URL host does not resolve now; accepted');
  return raw!.trim();
}

function checkSecret(secret: string): string {
  const parsed = parseSecret(secret);
  if ('problem' in parsed) throw invalid('secret', parsed.problem);
  return secret;
}

async function findOr404(deps: Deps, orgId: string, id: string) {
  const row = isUuid(id) ? await webhooks.find(deps.pool, orgId, id) : undefined;
  if (!row) throw notFound('Webhook');
  return row;
}

// Reading needs settings:edit too: endpoint URLs often carry tokens, and only those who manage them see them.
export async function list(deps: Deps, ctx: OrgContext) {
  requireCan(ctx, 'settings:edit');
  return { data: (await webhooks.list(deps.pool, ctx.orgId)).map(view) };
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'settings:edit');
  return view(await findOr404(deps, ctx.orgId, id));
}

/** The event names an endpoint can subscribe to, for the settings form (which only its editors open). */
export async function eventTypes(ctx: OrgContext) {
  requireCan(ctx, 'settings:edit');
  return { events: [...PUBLIC_EVENT_TYPES] };
}

export async function create(deps: Deps, ctx: OrgContext, req: { url?: string; events?: string[]; secret?: string }) {
  requireCan(ctx, 'settings:edit');
  const orgId = ctx.orgId;
  const events = validateEvents(req.events);
  const given = (req.secret ?? '').trim();
  const secret = given ? checkSecret(given) : generateSecret();
  const url = await checkUrl(deps, ctx, req.url);
  if ((await webhooks.count(deps.pool, orgId)) >= deps.config.WEBHOOK_MAX_PER_ORG) {
    throw new AppError('failed_precondition', `An organization can have at most ${deps.config.WEBHOOK_MAX_PER_ORG} webhooks`, {
      code: 'limit_reached',
    });
  }
  const id = randomUUID();
  const row = await withTransaction(deps.pool, async (db) => {
    const inserted = await webhooks.insert(db, { id, orgId, url, events, secretEnc: deps.box.encrypt(secret, secretAad(orgId, id)) });
    await recordAudit(db, ctx, {
      action: 'webhook.created',
      resourceType: 'webhook',
      resourceId: id,
      details: { url: urlForAudit(url), events, secretGiven: given !== '' },
    });
    return inserted;
  });
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    active: row.active,
    createdAt: iso(row.created_at),
    // Shown once: the caller chose none, so this is the only time they can learn it.
    secret: given ? undefined : secret,
  };
}

export async function update(
  deps: Deps,
  ctx: OrgContext,
  req: { id: string; url?: string; events?: string[]; setEvents?: boolean; secret?: string; active?: boolean },
) {
  requireCan(ctx, 'settings:edit');
  const orgId = ctx.orgId;
  const before = await findOr404(deps, orgId, req.id);
  const patch: webhooks.WebhookPatch = {};
  if (req.setEvents) patch.events = validateEvents(req.events);
  if (req.secret !== undefined) patch.secretEnc = deps.box.encrypt(checkSecret(req.secret.trim()), secretAad(orgId, req.id));
  if (req.active !== undefined) patch.active = req.active;
  if (req.url !== undefined) patch.url = await checkUrl(deps, ctx, req.url);
  const row = await withTransaction(deps.pool, async (db) => {
    const updated = await webhooks.update(db, orgId, req.id, patch);
    // Deactivated: what still waits for this endpoint fails now and can be redelivered after re-activation.
    if (updated && patch.active === false) await deliveries.failPending(db, req.id, 'webhook deactivated');
    if (updated)
      await recordAudit(db, ctx, {
        action: 'webhook.updated',
        resourceType: 'webhook',
        resourceId: req.id,
        details: webhookChanges(before, updated, patch),
      });
    return updated;
  });
  if (!row) throw notFound('Webhook');
  // A fan-out write under way as the switch-off committed may have left rows pending: they fail too.
  if (patch.active === false) await deliveries.failPendingAfterWrites(deps.pool, req.id, 'webhook deactivated');
  return view(row);
}

export async function remove(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'settings:edit');
  const w = await findOr404(deps, ctx.orgId, id);
  // The delete cascades to the endpoint's deliveries; the worker recording an attempt locks a delivery, then the
  // endpoint (its failure run): when the two meet, PostgreSQL aborts one of them, and the delete is simply run again.
  await withRetriedTransaction(deps.pool, async (db) => {
    if (!(await webhooks.remove(db, ctx.orgId, id))) throw notFound('Webhook');
    await recordAudit(db, ctx, {
      action: 'webhook.deleted',
      resourceType: 'webhook',
      resourceId: id,
      details: { url: urlForAudit(w.url), events: w.events },
    });
  });
  return { ok: true, message: 'Webhook deleted' };
}

/**
 * An endpoint URL as the audit log shows it: scheme, host and path. Its query, fragment and user info are
 * dropped because integrations often put a token there, and the log must hold no secret.
 */
function urlForAudit(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '';
  }
}

/** What an update changed (from/to), the secret only as the fact that it changed. */
function webhookChanges(before: webhooks.WebhookRow, after: webhooks.WebhookRow, patch: webhooks.WebhookPatch) {
  const details: Record<string, unknown> = { url: urlForAudit(after.url) };
  if (before.url !== after.url) details.urlChanged = { from: urlForAudit(before.url), to: urlForAudit(after.url) };
  if (before.events.join() !== after.events.join()) details.events = { from: before.events, to: after.events };
  if (before.active !== after.active) details.active = { from: before.active, to: after.active };
  if (patch.secretEnc !== undefined) details.secretChanged = true;
  return details;
}

/**
 * Send one `webhook.test` event now, whatever the endpoint subscribes to and whether or not it is
 * active (so an endpoint can be checked before it is switched back on). The attempt is logged like any
 * other but never retried.
 */
export async function test(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'settings:edit');
  const orgId = ctx.orgId;
  const w = await findOr404(deps, orgId, id);
  const key = secretKey(deps.box.decrypt(w.secret_enc, secretAad(orgId, w.id)))!;
  const eventId = randomUUID();
  const payload = JSON.stringify({
    type: TEST_EVENT_TYPE,
    timestamp: new Date().toISOString(),
    data: { webhookId: w.id, message: 'This is a test event sent from the webhook settings.' },
  });
  const result = await deps.sender.send({
    url: w.url,
    id: eventId,
    body: payload,
    key,
    timeoutMs: Math.min(TEST_TIMEOUT_MS, deps.config.WEBHOOK_TIMEOUT_MS),
    traceparent: ctx.traceparent,
  });
  const deliveryId = randomUUID();
  await deliveries.insertFinished(deps.pool, { id: deliveryId, orgId, webhookId: w.id, eventId, type: TEST_EVENT_TYPE, payload }, 'test', result);
  return {
    deliveryId,
    eventId,
    ok: result.ok,
    statusCode: result.statusCode ?? undefined,
    durationMs: result.durationMs,
    error: result.error ?? undefined,
    responseBody: result.responseBody,
    responseBodyTruncated: result.responseBodyTruncated,
  };
}
