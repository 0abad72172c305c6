import { isoOrUndefined, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { notFound, requireCan, type OrgContext } from '@crm/grpc-kit';
import { isUuid } from '@crm/validation';
import type { Deps } from '../deps';
import * as repo from './business-hours.repo';
import { ALWAYS_OPEN, parseBusinessHours, statusAt, type BusinessHours, type OpeningRange } from './schedule';

interface HoursInput {
  chatnetAccountId?: string;
  timezone?: string;
  days?: Array<Partial<OpeningRange>>;
  holidays?: string[];
  clear?: boolean;
}

/** Empty: the org's; else an account of the caller's org (another org's, or a malformed id, is 404 as the connector says). */
async function accountOf(deps: Deps, ctx: OrgContext, id: string | undefined): Promise<string | null> {
  if (!id) return null;
  if (!isUuid(id) || !(await deps.remote.accountInOrg(ctx, id))) throw notFound('Chat-network account');
  return id.toLowerCase();
}

function present(accountId: string | null, hours: BusinessHours, inherited: boolean, updatedAt: Date | undefined) {
  return {
    chatnetAccountId: accountId ?? '',
    timezone: hours.timezone,
    days: hours.days,
    holidays: hours.holidays,
    inherited,
    updatedAt: isoOrUndefined(updatedAt),
  };
}

/** The hours that apply to an account (its own, else the org's) or to the org; open all the time when none were set. */
export async function hoursFor(
  deps: Deps,
  orgId: string,
  accountId: string | null,
): Promise<{ hours: BusinessHours; own: boolean; updatedAt?: Date }> {
  const row = await repo.effective(deps.pool, orgId, accountId);
  if (!row) return { hours: ALWAYS_OPEN, own: false };
  return { hours: { timezone: row.timezone, days: row.days, holidays: row.holidays }, own: row.own, updatedAt: row.updatedAt };
}

/** GET /settings/business-hours and /chatnet-accounts/:id/business-hours: anyone in the org. */
export async function get(deps: Deps, ctx: OrgContext, req: { chatnetAccountId?: string }) {
  const accountId = await accountOf(deps, ctx, req.chatnetAccountId);
  const { hours, own, updatedAt } = await hoursFor(deps, ctx.orgId, accountId);
  return present(accountId, hours, accountId !== null && !own, updatedAt);
}

/** PUT: admins (settings:edit); replaces the hours whole, or drops an account's own; audited with what was there before. */
export async function set(deps: Deps, ctx: OrgContext, req: HoursInput) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const clear = !!req.clear && !!req.chatnetAccountId;
  const next = clear ? undefined : parseBusinessHours(req);
  const accountId = await accountOf(deps, ctx, req.chatnetAccountId);
  await withTransaction(deps.pool, async (db) => {
    const before = await repo.find(db, orgId, accountId);
    if (next) await repo.upsert(db, orgId, accountId, next);
    else if (!(await repo.removeOwn(db, orgId, accountId!))) return;
    const previous = before ? { timezone: before.timezone, days: before.days, holidays: before.holidays } : null;
    await recordAudit(db, ctx, {
      action: 'settings.business_hours_updated',
      resourceType: accountId ? 'chatnet_account' : 'business_hours',
      resourceId: accountId,
      details: { hours: next ?? null, previous },
    });
  });
  return get(deps, ctx, { chatnetAccountId: accountId ?? undefined });
}

/** ListBusinessHours: the org's hours and every account's own, for another service's arithmetic (anyone in the org). */
export async function listAll(deps: Deps, ctx: OrgContext) {
  const rows = await repo.listAll(deps.pool, ctx.orgId);
  const org = rows.find((r) => r.accountId === null);
  return {
    org: present(null, org ?? ALWAYS_OPEN, false, org?.updatedAt),
    accounts: rows.filter((r) => r.accountId !== null).map((r) => present(r.accountId, r, false, r.updatedAt)),
  };
}

/** GET /settings/business-hours/status: open now, and when that next changes. */
export async function status(deps: Deps, ctx: OrgContext, req: { chatnetAccountId?: string }, now = new Date()) {
  const accountId = await accountOf(deps, ctx, req.chatnetAccountId);
  const { hours } = await hoursFor(deps, ctx.orgId, accountId);
  const { open, nextChangeAt } = statusAt(hours, now);
  return { open, nextChangeAt: nextChangeAt ? nextChangeAt.toISOString() : undefined };
}
