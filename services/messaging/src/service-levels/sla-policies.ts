import { randomUUID } from 'node:crypto';
import { iso, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { invalid, notFound, requireCan, type OrgContext } from '@crm/grpc-kit';
import { isUuid, requireText } from '@crm/validation';
import type { Deps } from '../deps';
import { clampPage } from '../conversations';
import { reapplySla } from './conversation-sla';
import * as repo from './sla-policies.repo';
import type { SlaPolicyFields, SlaPolicyRow } from './sla-policies.repo';

export const SLA_NOTIFY = ['assignee', 'team_leads'] as const;
/** A window of at most a year of minutes. */
export const SLA_MINUTES_MAX = 525_600;
const NAME_MAX = 100;

interface PolicyInput {
  id?: string;
  name?: string;
  firstResponseMinutes?: number;
  nextResponseMinutes?: number | null;
  resolutionMinutes?: number | null;
  businessHoursOnly?: boolean;
  onBreach?: { notify?: string[]; reassign?: boolean } | null;
}

function minutes(value: number | null | undefined, field: string, required: boolean): number | null {
  if (value === undefined || value === null) {
    if (required) throw invalid(field, 'is required (whole minutes)');
    return null;
  }
  if (!Number.isInteger(value) || value < 1 || value > SLA_MINUTES_MAX) throw invalid(field, `must be whole minutes from 1 to ${SLA_MINUTES_MAX}`);
  return value;
}

function parse(req: PolicyInput): SlaPolicyFields {
  const notify: string[] = [];
  (req.onBreach?.notify ?? []).forEach((who, i) => {
    if (!(SLA_NOTIFY as readonly string[]).includes(who)) throw invalid(`onBreach.notify.${i}`, `must be one of ${SLA_NOTIFY.join(', ')}`);
    if (!notify.includes(who)) notify.push(who);
  });
  return {
    name: requireText(req.name, 'name', NAME_MAX),
    firstResponseMinutes: minutes(req.firstResponseMinutes, 'firstResponseMinutes', true)!,
    nextResponseMinutes: minutes(req.nextResponseMinutes, 'nextResponseMinutes', false),
    resolutionMinutes: minutes(req.resolutionMinutes, 'resolutionMinutes', false),
    businessHoursOnly: req.businessHoursOnly === true,
    notify,
    reassign: req.onBreach?.reassign === true,
  };
}

function present(p: SlaPolicyRow) {
  return {
    id: p.id,
    name: p.name,
    firstResponseMinutes: p.firstResponseMinutes,
    nextResponseMinutes: p.nextResponseMinutes ?? undefined,
    resolutionMinutes: p.resolutionMinutes ?? undefined,
    businessHoursOnly: p.businessHoursOnly,
    onBreach: { notify: p.notify, reassign: p.reassign },
    chatnetAccountIds: p.chatnetAccountIds,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

const policyId = (id: string | undefined) => (isUuid(id) ? id.toLowerCase() : undefined);

async function requireAccount(deps: Deps, ctx: OrgContext, id: string | undefined): Promise<string> {
  if (!isUuid(id) || !(await deps.remote.accountInOrg(ctx, id))) throw notFound('Chat-network account');
  return id.toLowerCase();
}

export async function list(deps: Deps, ctx: OrgContext, req: { page?: number; limit?: number }) {
  const p = clampPage(req.page, req.limit, 20, 100);
  const { total, rows } = await repo.page(deps.pool, ctx.orgId, p.limit, (p.page - 1) * p.limit);
  return { data: rows.map(present), pagination: { total, page: p.page, limit: p.limit, pages: Math.ceil(total / p.limit) } };
}

export async function get(deps: Deps, ctx: OrgContext, req: { id?: string }) {
  const id = policyId(req.id);
  const row = id && (await repo.find(deps.pool, ctx.orgId, id));
  if (!row) throw notFound('SLA policy');
  return present(row);
}

export async function create(deps: Deps, ctx: OrgContext, req: PolicyInput) {
  requireCan(ctx, 'settings:edit');
  const fields = parse(req);
  const id = randomUUID();
  const row = await withTransaction(deps.pool, async (db) => {
    await repo.insert(db, ctx.orgId, id, fields);
    await recordAudit(db, ctx, { action: 'sla_policy.created', resourceType: 'sla_policy', resourceId: id, details: { ...fields } });
    return (await repo.find(db, ctx.orgId, id))!;
  });
  return present(row);
}

export async function update(deps: Deps, ctx: OrgContext, req: PolicyInput) {
  requireCan(ctx, 'settings:edit');
  const id = policyId(req.id);
  if (!id) throw notFound('SLA policy');
  const fields = parse(req);
  const row = await withTransaction(deps.pool, async (db) => {
    const before = await repo.find(db, ctx.orgId, id);
    if (!before || !(await repo.update(db, ctx.orgId, id, fields))) return undefined;
    const { id: _id, chatnetAccountIds: _accounts, createdAt: _c, updatedAt: _u, ...previous } = before;
    await recordAudit(db, ctx, { action: 'sla_policy.updated', resourceType: 'sla_policy', resourceId: id, details: { ...fields, previous } });
    // Its open conversations keep their clocks and get the new windows.
    await reapplySla(deps, db, ctx.orgId, { policyId: id }, id);
    return repo.find(db, ctx.orgId, id);
  });
  if (!row) throw notFound('SLA policy');
  return present(row);
}

export async function remove(deps: Deps, ctx: OrgContext, req: { id?: string }) {
  requireCan(ctx, 'settings:edit');
  const id = policyId(req.id);
  const detached = id
    ? await withTransaction(deps.pool, async (db) => {
        const accounts = await repo.remove(db, ctx.orgId, id);
        // Its conversations lose their SLA (no due time, no status).
        if (accounts) await reapplySla(deps, db, ctx.orgId, { policyId: id }, null);
        if (accounts)
          await recordAudit(db, ctx, {
            action: 'sla_policy.deleted',
            resourceType: 'sla_policy',
            resourceId: id,
            details: { detachedAccountIds: accounts },
          });
        return accounts;
      })
    : undefined;
  if (!detached) throw notFound('SLA policy');
  return { ok: true, detachedAccountIds: detached };
}

/** GET /chatnet-accounts/:id/sla: anyone in the org. */
export async function getAccount(deps: Deps, ctx: OrgContext, req: { chatnetAccountId?: string }) {
  const accountId = await requireAccount(deps, ctx, req.chatnetAccountId);
  return { chatnetAccountId: accountId, policyId: await repo.accountPolicy(deps.pool, ctx.orgId, accountId) };
}

/** PUT /chatnet-accounts/:id/sla {policyId | null}: settings:edit; another org's policy is 400 naming policyId. */
export async function setAccount(deps: Deps, ctx: OrgContext, req: { chatnetAccountId?: string; policyId?: string }) {
  requireCan(ctx, 'settings:edit');
  const raw = req.policyId ?? '';
  const next = raw === '' ? null : policyId(raw);
  if (next === undefined) throw invalid('policyId', 'must be an SLA policy id or null');
  const accountId = await requireAccount(deps, ctx, req.chatnetAccountId);
  await withTransaction(deps.pool, async (db) => {
    if (next && !(await repo.find(db, ctx.orgId, next))) throw invalid('policyId', 'is not an SLA policy of this organization');
    const before = (await repo.accountPolicy(db, ctx.orgId, accountId)) ?? null;
    if (before === next) return;
    await repo.setAccountPolicy(db, ctx.orgId, accountId, next);
    await reapplySla(deps, db, ctx.orgId, { accountIds: [accountId] }, next);
    await recordAudit(db, ctx, {
      action: 'sla_policy.account_set',
      resourceType: 'chatnet_account',
      resourceId: accountId,
      details: { policyId: next, previous: before },
    });
  });
  return { chatnetAccountId: accountId, policyId: next ?? undefined };
}
