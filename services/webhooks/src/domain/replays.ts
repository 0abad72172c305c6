import { randomUUID } from 'node:crypto';
import { iso, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { AppError, invalid, notFound, requireCan, traceFields, type OrgContext } from '@crm/grpc-kit';
import { isUuid } from '@crm/validation';
import * as feed from '../db/feed.repo';
import * as replays from '../db/replays.repo';
import * as webhooks from '../db/webhooks.repo';
import type { Deps } from '../deps';
import { retentionMsOf } from './feed';
import { validateTypeFilter } from './validation';

/** An ISO 8601 time with a date and a time of day (a zone, or UTC); anything else is a 400 naming the field. */
function parseTime(raw: string, field: string): Date {
  const text = raw.trim();
  if (!text) throw invalid(field, 'is required');
  const t = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(t)) throw invalid(field, 'must be an ISO 8601 date or time');
  return new Date(t);
}

async function endpointOr404(deps: Deps, orgId: string, id: string) {
  const row = isUuid(id) ? await webhooks.find(deps.pool, orgId, id) : undefined;
  if (!row) throw notFound('Webhook');
  return row;
}

/**
 * Deliver the kept events of [from, to) (by occurredAt) that the endpoint subscribes to (narrowed to `types`) again,
 * with their own ids and bodies, marked as a replay in the log; the replay pump sends them at a bounded rate.
 */
export async function start(deps: Deps, ctx: OrgContext, req: { webhookId: string; from: string; to: string; types: string[] }) {
  requireCan(ctx, 'settings:edit');
  const endpoint = await endpointOr404(deps, ctx.orgId, req.webhookId);
  const from = parseTime(req.from, 'from');
  const to = parseTime(req.to, 'to');
  if (to <= from) throw invalid('to', 'must be after from');
  const retentionMs = retentionMsOf(deps);
  const now = await feed.clock(deps.pool);
  if (from.getTime() < now.getTime() - retentionMs) {
    throw invalid('from', `must be within the event feed's retention (the last ${deps.config.EVENT_FEED_RETENTION_DAYS} days)`);
  }
  const types = validateTypeFilter(req.types);
  if (!endpoint.active) {
    throw new AppError('failed_precondition', 'The webhook is disabled; activate it before replaying', { code: 'webhook_inactive' });
  }
  const deliver = types.length > 0 ? endpoint.events.filter((e) => types.includes(e)) : endpoint.events;
  const id = randomUUID();
  const count = await withTransaction(deps.pool, async (db) => {
    const n = await replays.create(db, { id, orgId: ctx.orgId, webhookId: endpoint.id, from, to, types, deliver });
    await recordAudit(db, ctx, {
      action: 'webhook.replayed',
      resourceType: 'webhook',
      resourceId: endpoint.id,
      details: { replayId: id, from: from.toISOString(), to: to.toISOString(), types, count: n },
    });
    return n;
  });
  deps.log.info({ orgId: ctx.orgId, webhookId: endpoint.id, replayId: id, count, ...traceFields(ctx) }, 'webhook replay started');
  return { replayId: id, count };
}

/** A replay of the endpoint: running while any of its deliveries is pending; how many were delivered and failed. */
export async function get(deps: Deps, ctx: OrgContext, req: { webhookId: string; replayId: string }) {
  requireCan(ctx, 'settings:edit');
  await endpointOr404(deps, ctx.orgId, req.webhookId);
  const replay = isUuid(req.replayId) ? await replays.findInOrg(deps.pool, ctx.orgId, req.webhookId, req.replayId) : undefined;
  if (!replay) throw notFound('Replay');
  const p = await replays.progress(deps.pool, replay.id);
  return {
    id: replay.id,
    webhookId: replay.webhook_id,
    status: p.pending > 0 ? 'running' : 'completed',
    count: replay.count,
    delivered: p.delivered,
    failed: p.failed,
    from: iso(replay.from_at),
    to: iso(replay.to_at),
    types: replay.types,
    createdAt: iso(replay.created_at),
  };
}
