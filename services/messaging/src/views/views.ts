import { randomUUID } from 'node:crypto';
import { forbidden, invalid, notFound, roleRank, OrgContext } from '@crm/grpc-kit';
import { Queryable, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { isUuid, requireText } from '@crm/validation';
import type { Deps } from '../deps';
import { clampPage } from '../conversations';
import * as repo from './repo';

/**
 * Saved views (issue #29 item 8): the org's shared ones, which everyone sees and team leads and above write, and each
 * user's personal ones, which nobody else sees (404, as another org's). A view only names list parameters; applying
 * it goes through the list itself, with the list's own permissions, so no extra permission is asked here.
 */

export const VIEW_RESOURCES: readonly repo.ViewResource[] = ['conversations', 'contacts'];
const NAME_MAX = 100;
/** Bounds what a view may hold: the lists take far fewer parameters than this. */
const FILTERS_MAX = 50;
const FILTER_VALUE_MAX = 500;

export interface ViewInput {
  id?: string;
  name?: string;
  resource?: string;
  shared?: boolean;
  filters?: Record<string, string>;
  filtersSet?: boolean;
}

/** The signed-in user, or null for a caller without one (an API key), which owns no personal views. */
function userOf(ctx: OrgContext): string | null {
  return isUuid(ctx.userId) ? ctx.userId!.toLowerCase() : null;
}

/** A shared view changes what the whole team's lists show: team leads and above. */
function checkMayWriteShared(ctx: OrgContext): void {
  if (roleRank(ctx.role) < roleRank('team_lead')) throw forbidden('Only team leads, admins and owners create, change or delete shared views');
}

function resourceOf(value: string | undefined, required: boolean): repo.ViewResource | undefined {
  if (!value) {
    if (required) throw invalid('resource', `is required (${VIEW_RESOURCES.join(' or ')})`);
    return undefined;
  }
  if (!(VIEW_RESOURCES as readonly string[]).includes(value)) throw invalid('resource', `must be ${VIEW_RESOURCES.join(' or ')}`);
  return value as repo.ViewResource;
}

/** The shape only (the gateway checks each parameter against the list's schema): text keys and values, bounded. */
function checkFilters(filters: Record<string, string> | undefined): Record<string, string> {
  const out = filters ?? {};
  const keys = Object.keys(out);
  if (keys.length > FILTERS_MAX) throw invalid('filters', `must hold at most ${FILTERS_MAX} parameters`);
  for (const k of keys) {
    if (!k.trim()) throw invalid('filters', 'parameter names must not be empty');
    if (out[k].length > FILTER_VALUE_MAX) throw invalid(`filters.${k}`, `must be at most ${FILTER_VALUE_MAX} characters`);
  }
  return out;
}

/**
 * A shared view changes what the whole team's lists show, so who wrote it is audited (`view.created`, `view.updated`,
 * `view.deleted`), in the transaction of the change; a personal one concerns its owner alone.
 */
function auditShared(
  db: Queryable,
  ctx: OrgContext,
  verb: 'created' | 'updated' | 'deleted',
  row: repo.ViewRow,
  extra: Record<string, unknown> = {},
) {
  return recordAudit(db, ctx, {
    action: `view.${verb}`,
    resourceType: 'view',
    resourceId: row.id,
    details: { name: row.name, resource: row.resource, shared: row.shared, ...extra },
  });
}

async function findVisible(
  deps: Pick<Deps, 'pool'>,
  ctx: OrgContext,
  id: string,
  db: Parameters<typeof repo.findVisible>[0] = deps.pool,
  lock = false,
) {
  const row = isUuid(id) ? await repo.findVisible(db, ctx.orgId, userOf(ctx), id.toLowerCase(), lock) : undefined;
  if (!row) throw notFound('View');
  return row;
}

export async function list(deps: Deps, ctx: OrgContext, req: { page?: number; limit?: number; resource?: string }) {
  const p = clampPage(req.page, req.limit, 50, 100);
  const out = await repo.page(deps.pool, ctx.orgId, userOf(ctx), { ...p, resource: resourceOf(req.resource, false) });
  return { data: out.data.map(repo.toView), pagination: out.pagination };
}

export async function get(deps: Deps, ctx: OrgContext, req: { id?: string }) {
  return repo.toView(await findVisible(deps, ctx, req.id ?? ''));
}

export async function create(deps: Deps, ctx: OrgContext, req: ViewInput) {
  const name = requireText(req.name, 'name', NAME_MAX);
  const resource = resourceOf(req.resource, true)!;
  if (req.shared === undefined) throw invalid('shared', 'is required (true or false)');
  const filters = checkFilters(req.filters);
  const owner = userOf(ctx);
  if (req.shared) checkMayWriteShared(ctx);
  else if (!owner) throw invalid('shared', 'must be true without a signed-in user (a personal view needs an owner)');
  const row = await withTransaction(deps.pool, async (db) => {
    const made = await repo.insert(db, { id: randomUUID(), orgId: ctx.orgId, name, resource, shared: req.shared!, ownerId: owner, filters });
    if (made.shared) await auditShared(db, ctx, 'created', made, { filters: made.filters });
    return made;
  });
  return repo.toView(row);
}

/** PUT /views/:id: only the fields sent change; a shared view made personal becomes whoever did it's own. */
export async function update(deps: Deps, ctx: OrgContext, req: ViewInput) {
  const name = req.name !== undefined ? requireText(req.name, 'name', NAME_MAX) : undefined;
  const filters = req.filtersSet ? checkFilters(req.filters) : undefined;
  const row = await withTransaction(deps.pool, async (db) => {
    const current = await findVisible(deps, ctx, req.id ?? '', db, true);
    const shared = req.shared ?? current.shared;
    if (current.shared || shared) checkMayWriteShared(ctx);
    const owner = userOf(ctx);
    if (!shared && current.shared && !owner) throw invalid('shared', 'must be true without a signed-in user (a personal view needs an owner)');
    const updated = await repo.update(db, ctx.orgId, current.id, {
      name: name ?? current.name,
      shared,
      ownerId: !shared && current.shared ? owner : current.owner_id,
      filters: filters ?? current.filters,
    });
    if (current.shared || shared) {
      await auditShared(db, ctx, 'updated', updated, {
        ...(name !== undefined && name !== current.name ? { renamedFrom: current.name } : {}),
        ...(shared !== current.shared ? { sharedFrom: current.shared } : {}),
        ...(filters ? { filters } : {}),
      });
    }
    return updated;
  });
  return repo.toView(row);
}

export async function remove(deps: Deps, ctx: OrgContext, req: { id?: string }) {
  await withTransaction(deps.pool, async (db) => {
    const current = await findVisible(deps, ctx, req.id ?? '', db, true);
    if (current.shared) checkMayWriteShared(ctx);
    await repo.remove(db, ctx.orgId, current.id);
    if (current.shared) await auditShared(db, ctx, 'deleted', current);
  });
  return { ok: true, message: 'View deleted' };
}
