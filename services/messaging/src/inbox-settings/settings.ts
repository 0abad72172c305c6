import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { enqueueEvent, recordAudit } from '@crm/events';
import { messagingRules as rules } from '@crm/validation';
import type { Deps } from '../deps';
import { AGENT_VISIBILITIES, AgentVisibility } from '../visibility';
import { EVENTS } from '../conversations';
import { replanAutoClose } from '../auto-close';
import * as repo from './repo';

/** UpdateInboxSettings as proto decodes it: every field optional (absent: kept); 0 and "" stand for null. */
export interface InboxSettingsInput {
  agentVisibility?: string;
  autoCloseAfterMinutes?: number;
  autoCloseMessage?: string;
  outOfHoursMessage?: string;
  csat?: { enabled?: boolean; message?: string } | null;
}

const FIELDS = ['agentVisibility', 'autoCloseAfterMinutes', 'autoCloseMessage', 'outOfHoursMessage', 'csat'] as const;

/** The answer: every setting, null for what is not set (proto: absent). */
function present(s: repo.InboxSettingsRow) {
  return {
    agentVisibility: s.agentVisibility,
    autoCloseAfterMinutes: s.autoCloseAfterMinutes ?? undefined,
    autoCloseMessage: s.autoCloseMessage ?? undefined,
    outOfHoursMessage: s.outOfHoursMessage ?? undefined,
    csat: { enabled: s.csatEnabled, message: repo.csatQuestion(s) },
  };
}

/** A message the inbox sends by itself: "" is none; otherwise trimmed, not blank, within AUTO_MESSAGE_MAX. */
function autoMessage(value: string, field: string): string | null {
  if (value.length > rules.AUTO_MESSAGE_MAX) throw invalid(field, `must be at most ${rules.AUTO_MESSAGE_MAX} characters`);
  return value.trim() ? value : null;
}

/** The change asked, checked field by field (the gateway checks the same; other callers get the same answers). */
function parse(req: InboxSettingsInput, current: repo.InboxSettingsRow): repo.InboxSettingsRow {
  const next = { ...current };
  if (req.agentVisibility !== undefined) {
    if (!(AGENT_VISIBILITIES as readonly string[]).includes(req.agentVisibility))
      throw invalid('agentVisibility', `must be one of ${AGENT_VISIBILITIES.join(', ')}`);
    next.agentVisibility = req.agentVisibility as AgentVisibility;
  }
  if (req.autoCloseAfterMinutes !== undefined) {
    const m = req.autoCloseAfterMinutes;
    if (!Number.isInteger(m) || m < 0 || m > rules.AUTO_CLOSE_MAX_MINUTES) throw invalid('autoCloseAfterMinutes', rules.AUTO_CLOSE_MINUTES_MESSAGE);
    next.autoCloseAfterMinutes = m === 0 ? null : m;
  }
  if (req.autoCloseMessage !== undefined) next.autoCloseMessage = autoMessage(req.autoCloseMessage, 'autoCloseMessage');
  if (req.outOfHoursMessage !== undefined) next.outOfHoursMessage = autoMessage(req.outOfHoursMessage, 'outOfHoursMessage');
  if (req.csat) {
    next.csatEnabled = req.csat.enabled === true;
    // "" (absent): the question stays as it is.
    const message = req.csat.message ?? '';
    if (message && !message.trim()) throw invalid('csat.message', 'must not be blank');
    if (message.length > rules.AUTO_MESSAGE_MAX) throw invalid('csat.message', `must be at most ${rules.AUTO_MESSAGE_MAX} characters`);
    if (message) next.csatMessage = message === rules.DEFAULT_CSAT_MESSAGE ? null : message;
  }
  return next;
}

export async function get(deps: Deps, ctx: OrgContext) {
  return present(await repo.find(deps.pool, ctx.orgId));
}

/**
 * PUT /settings/inbox (admin and owner): a partial update (fields not sent keep their value), audited with what
 * changed. A visibility change is announced (the gateway and crm route by it); an auto-close change re-plans the
 * org's open conversations in the same transaction (auto-close/replan).
 */
export async function update(deps: Deps, ctx: OrgContext, req: InboxSettingsInput) {
  requireCan(ctx, 'settings:edit');
  const orgId = ctx.orgId;
  if (FIELDS.every((f) => req[f] === undefined || req[f] === null)) throw invalid('agentVisibility', `send at least one of ${FIELDS.join(', ')}`);
  const saved = await withTransaction(deps.pool, async (db) => {
    const previous = await repo.find(db, orgId, true);
    const next = parse(req, previous);
    const changed = (Object.keys(next) as (keyof repo.InboxSettingsRow)[]).filter((k) => next[k] !== previous[k]);
    if (changed.length === 0) return next;
    await repo.save(db, orgId, next);
    if (next.agentVisibility !== previous.agentVisibility) {
      await enqueueEvent(db, {
        type: EVENTS.inboxSettingsUpdated,
        orgId,
        data: { agentVisibility: next.agentVisibility },
        traceparent: ctx.traceparent,
      });
    }
    if (next.autoCloseAfterMinutes !== previous.autoCloseAfterMinutes) {
      await replanAutoClose(db, orgId, next.autoCloseAfterMinutes, deps.config.SERVICE_LEVEL_MINUTE_MS);
    }
    await recordAudit(db, ctx, {
      action: 'settings.inbox_updated',
      resourceType: 'inbox_settings',
      resourceId: null,
      details: Object.fromEntries(changed.map((k) => [k, { from: previous[k], to: next[k] }])),
    });
    return next;
  });
  return present(saved);
}
