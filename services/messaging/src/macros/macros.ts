import { randomUUID } from 'node:crypto';
import { forbidden, invalid, notFound, requireCan, roleRank, traceFields, OrgContext } from '@crm/grpc-kit';
import { Queryable, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { isUuid, messagingRules as rules, requireText } from '@crm/validation';
import type { Deps } from '../deps';
import { clampPage } from '../conversations';
import * as repo from './repo';

/**
 * Macros (issue #29): the org's shared ones, which every user sees and runs and team leads and above write, and each
 * user's personal ones, which nobody else sees (another user's personal macro answers 404, as another org's does).
 */

export interface MacroInput {
  id?: string;
  name?: string;
  shared?: boolean;
  actions?: rules.MacroActionInput[];
  actionsSet?: boolean;
}

/** The signed-in user, or null for a caller without one (an API key), which owns no personal macros. */
export function userOf(ctx: OrgContext): string | null {
  return isUuid(ctx.userId) ? ctx.userId!.toLowerCase() : null;
}

/** Writing a shared macro changes what the whole team runs: team leads and above. */
function checkMayWriteShared(ctx: OrgContext): void {
  if (roleRank(ctx.role) < roleRank('team_lead')) throw forbidden('Only team leads, admins and owners create, change or delete shared macros');
}

/** A macro the caller may see, else 404 (unknown, malformed, another org's, or another user's personal one). */
export async function findVisible(
  deps: Pick<Deps, 'pool'>,
  ctx: OrgContext,
  id: string,
  db: Parameters<typeof repo.findVisible>[0] = deps.pool,
  lock = false,
) {
  const row = isUuid(id) ? await repo.findVisible(db, ctx.orgId, userOf(ctx), id.toLowerCase(), lock) : undefined;
  if (!row) throw notFound('Macro');
  return row;
}

/**
 * A shared macro acts for the whole team, so who wrote it is audited (`macro.created`, `macro.updated`,
 * `macro.deleted`), in the transaction of the change; a personal one concerns its owner alone.
 */
function auditShared(
  db: Queryable,
  ctx: OrgContext,
  verb: 'created' | 'updated' | 'deleted',
  row: repo.MacroRow,
  extra: Record<string, unknown> = {},
) {
  return recordAudit(db, ctx, {
    action: `macro.${verb}`,
    resourceType: 'macro',
    resourceId: row.id,
    details: { name: row.name, shared: row.shared, ...extra },
  });
}

export async function list(deps: Deps, ctx: OrgContext, req: { page?: number; limit?: number; shared?: boolean }) {
  const p = clampPage(req.page, req.limit, 50, 100);
  const out = await repo.page(deps.pool, ctx.orgId, userOf(ctx), { ...p, shared: req.shared });
  return { data: out.data.map(repo.toMacro), pagination: out.pagination };
}

export async function create(deps: Deps, ctx: OrgContext, req: MacroInput) {
  requireCan(ctx, 'conversations:write');
  const name = requireText(req.name, 'name', rules.MACRO_NAME_MAX);
  if (req.shared === undefined) throw invalid('shared', 'is required (true or false)');
  const actions = rules.macroActions(req.actions);
  const owner = userOf(ctx);
  if (req.shared) checkMayWriteShared(ctx);
  else if (!owner) throw invalid('shared', 'must be true without a signed-in user (a personal macro needs an owner)');
  const row = await withTransaction(deps.pool, async (db) => {
    const made = await repo.insert(db, { id: randomUUID(), orgId: ctx.orgId, name, shared: req.shared!, ownerId: owner, actions });
    if (made.shared) await auditShared(db, ctx, 'created', made, { actions: made.actions.map((a) => a.type) });
    return made;
  });
  deps.log.debug({ macroId: row.id, shared: row.shared, ...traceFields(ctx) }, 'macro created');
  return repo.toMacro(row);
}

/**
 * PUT /macros/:id: only the fields sent change (`actions` replaced as a whole). A shared macro, or making one shared,
 * needs a team lead or above; a shared macro made personal becomes the personal macro of whoever did it.
 */
export async function update(deps: Deps, ctx: OrgContext, req: MacroInput) {
  requireCan(ctx, 'conversations:write');
  const name = req.name !== undefined ? requireText(req.name, 'name', rules.MACRO_NAME_MAX) : undefined;
  const actions = req.actionsSet ? rules.macroActions(req.actions) : undefined;
  const row = await withTransaction(deps.pool, async (db) => {
    const current = await findVisible(deps, ctx, req.id ?? '', db, true);
    const shared = req.shared ?? current.shared;
    if (current.shared || shared) checkMayWriteShared(ctx);
    const owner = userOf(ctx);
    if (!shared && current.shared && !owner) throw invalid('shared', 'must be true without a signed-in user (a personal macro needs an owner)');
    const updated = await repo.update(db, ctx.orgId, current.id, {
      name: name ?? current.name,
      shared,
      ownerId: !shared && current.shared ? owner! : current.owner_id,
      actions: actions ?? current.actions,
    });
    if (current.shared || shared) {
      await auditShared(db, ctx, 'updated', updated, {
        ...(name !== undefined && name !== current.name ? { renamedFrom: current.name } : {}),
        ...(shared !== current.shared ? { sharedFrom: current.shared } : {}),
        ...(actions ? { actions: actions.map((a) => a.type) } : {}),
      });
    }
    return updated;
  });
  return repo.toMacro(row);
}

export async function remove(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  await withTransaction(deps.pool, async (db) => {
    const current = await findVisible(deps, ctx, id, db, true);
    if (current.shared) checkMayWriteShared(ctx);
    await repo.remove(db, ctx.orgId, current.id);
    if (current.shared) await auditShared(db, ctx, 'deleted', current);
  });
  return { ok: true, message: 'Macro deleted' };
}
