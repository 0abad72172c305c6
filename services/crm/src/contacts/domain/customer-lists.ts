import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { offsetOf, pagination, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import type { crm } from '@crm/proto-types';
import type { ContactsDeps } from '../deps';
import { toContact } from '../db/contacts.repo';
import * as repo from '../db/customer-lists.repo';
import { validateCriteria } from './list-criteria';
import { viewerOf } from './visibility';
import { isUuid, optionalText, requireText, rules } from '../../shared';

/**
 * Customer lists: saved criteria over the org's contacts, evaluated live (count and members always reflect
 * the contacts as they are now). Created as draft; draft → active ⇄ paused. Reading needs only a
 * signed-in user of the org; writing needs `campaigns:manage` (team_lead and above).
 */

/** ResolveListMembers page size: default and most a caller may ask for at once. */
const RESOLVE_DEFAULT = 100;
const RESOLVE_MAX = 1000;

function parseCriteria(deps: ContactsDeps, criteriaJson: string | undefined) {
  if (criteriaJson === undefined || criteriaJson === '') return validateCriteria(undefined, deps.config.PHONE_DEFAULT_COUNTRY);
  let raw: unknown;
  try {
    raw = JSON.parse(criteriaJson);
  } catch {
    throw invalid('criteria', 'is not valid JSON');
  }
  return validateCriteria(raw, deps.config.PHONE_DEFAULT_COUNTRY);
}

async function load(deps: ContactsDeps, orgId: string, id: string) {
  const row = isUuid(id) ? await repo.findList(deps.pool, orgId, id) : undefined;
  if (!row) throw notFound('Customer list');
  return row;
}

export async function list(deps: ContactsDeps, ctx: OrgContext) {
  const { orgId } = ctx;
  const rows = await repo.listLists(deps.pool, orgId);
  const data = [];
  for (const r of rows) data.push(repo.toCustomerList(r, await repo.countMembers(deps.pool, orgId, r.criteria)));
  return { data };
}

export async function get(deps: ContactsDeps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const row = await load(deps, orgId, id);
  return repo.toCustomerList(row, await repo.countMembers(deps.pool, orgId, row.criteria));
}

export async function create(deps: ContactsDeps, ctx: OrgContext, req: crm.CustomerListInput__Output) {
  requireCan(ctx, 'campaigns:manage');
  const { orgId } = ctx;
  const l = {
    id: randomUUID(),
    orgId,
    name: requireText(req.name, 'name', rules.CUSTOMER_LIST_TEXT_MAX.name),
    description: optionalText(req.description, 'description', rules.CUSTOMER_LIST_TEXT_MAX.description),
    criteria: parseCriteria(deps, req.criteriaJson),
  };
  const row = await repo.insertList(deps.pool, l);
  return repo.toCustomerList(row, await repo.countMembers(deps.pool, orgId, row.criteria));
}

/** Only sent fields change; the status moves only through activate. */
export async function update(deps: ContactsDeps, ctx: OrgContext, req: crm.CustomerListInput__Output) {
  requireCan(ctx, 'campaigns:manage');
  const { orgId } = ctx;
  await load(deps, orgId, req.id);
  const patch = {
    name: req.name === undefined ? undefined : requireText(req.name, 'name', rules.CUSTOMER_LIST_TEXT_MAX.name),
    description: req.description === undefined ? undefined : optionalText(req.description, 'description', rules.CUSTOMER_LIST_TEXT_MAX.description),
    criteria: req.criteriaJson === undefined ? undefined : parseCriteria(deps, req.criteriaJson),
  };
  if (!(await repo.updateList(deps.pool, orgId, req.id, patch))) throw notFound('Customer list');
  return get(deps, ctx, req.id);
}

export async function remove(deps: ContactsDeps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'campaigns:manage');
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Customer list');
  await withTransaction(deps.pool, async (tx) => {
    const name = await repo.deleteList(tx, orgId, id);
    if (name === undefined) throw notFound('Customer list');
    await recordAudit(tx, ctx, { action: 'customer_list.deleted', resourceType: 'customer_list', resourceId: id, details: { name } });
  });
  return { ok: true, message: 'Customer list deleted' };
}

/** Status moves: activate (draft or paused → active) and pause (active → paused); others are 422 invalid_transition. */
const MOVES: Record<'active' | 'paused', readonly string[]> = { active: ['draft', 'paused'], paused: ['active'] };

async function move(deps: ContactsDeps, ctx: OrgContext, id: string, to: 'active' | 'paused') {
  requireCan(ctx, 'campaigns:manage');
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Customer list');
  await withTransaction(deps.pool, async (tx) => {
    const row = await repo.findList(tx, orgId, id, true);
    if (!row) throw notFound('Customer list');
    if (!MOVES[to].includes(row.status)) {
      throw new AppError('failed_precondition', `A ${row.status} customer list cannot become ${to}`, {
        code: 'invalid_transition',
        details: [{ field: 'status', message: `cannot change from ${row.status} to ${to}` }],
      });
    }
    await repo.updateList(tx, orgId, id, { status: to });
  });
  return get(deps, ctx, id);
}

export const activate = (deps: ContactsDeps, ctx: OrgContext, id: string) => move(deps, ctx, id, 'active');
export const pause = (deps: ContactsDeps, ctx: OrgContext, id: string) => move(deps, ctx, id, 'paused');

/**
 * The HTTP members listing: page/limit over the matching contacts, most recent activity first. Inbox visibility
 * applies as in the contact list: an agent under `assigned` sees only the members they may see.
 */
export async function members(deps: ContactsDeps, ctx: OrgContext, req: crm.ListCustomerListMembersRequest__Output) {
  const { orgId } = ctx;
  const row = await load(deps, orgId, req.id);
  const page = { page: Math.max(1, req.page || 1), limit: Math.min(100, Math.max(1, req.limit || 50)) };
  const viewer = viewerOf(ctx);
  const [rows, total] = await Promise.all([
    repo.memberPageByOffset(deps.pool, orgId, row.criteria, page.limit, offsetOf(page), viewer),
    repo.countMembers(deps.pool, orgId, row.criteria, viewer),
  ]);
  return { data: rows.map((r) => toContact(r)), pagination: pagination(page, total) };
}

/**
 * For campaigns: members after `afterContactId` in contact-id order (keyset, so a contact added or removed
 * meanwhile never shifts the pages). `nextAfter` is '' when this page is the last.
 */
export async function resolveMembers(deps: ContactsDeps, ctx: OrgContext, req: crm.ResolveListMembersRequest__Output) {
  const { orgId } = ctx;
  const row = await load(deps, orgId, req.listId);
  const after = req.afterContactId || undefined;
  if (after !== undefined && !isUuid(after)) throw invalid('afterContactId', 'must be a contact id (UUID) or empty');
  const limit = Math.min(RESOLVE_MAX, Math.max(1, req.limit || RESOLVE_DEFAULT));
  // One extra row tells whether another page follows.
  const [rows, total] = await Promise.all([
    repo.memberPageAfter(deps.pool, orgId, row.criteria, after?.toLowerCase(), limit + 1),
    repo.countMembers(deps.pool, orgId, row.criteria),
  ]);
  const page = rows.slice(0, limit);
  return {
    members: page.map((r) => ({
      id: r.id,
      name: r.name,
      phone: r.phone,
      email: r.email,
      chatnetUid: r.chatnet_uid ?? '',
      status: r.status,
      tags: r.tags,
      assignedUserId: r.assigned_user_id ?? '',
    })),
    nextAfter: rows.length > limit ? page[page.length - 1].id : '',
    total,
  };
}
