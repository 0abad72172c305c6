import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import type { crm } from '@crm/proto-types';
import type { ContactsDeps } from '../deps';
import * as repo from '../db/statuses.repo';
import { isUuid, requireText, rules } from '../../shared';

function nameTaken(): AppError {
  return new AppError('already_exists', 'A contact status with this name already exists', {
    code: 'status_name_taken',
    details: [{ field: 'name', message: 'is already used by another status' }],
  });
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

export async function list(deps: ContactsDeps, ctx: OrgContext) {
  const { orgId } = ctx;
  return { data: (await repo.listStatuses(deps.pool, orgId)).map(repo.toStatus) };
}

async function get(deps: ContactsDeps, orgId: string, id: string) {
  const row = isUuid(id) ? await repo.findStatus(deps.pool, orgId, id) : undefined;
  if (!row) throw notFound('Contact status');
  return repo.toStatus(row);
}

/** One of the org's statuses, with its own contact count (GetContactStatus). */
export async function detail(deps: ContactsDeps, ctx: OrgContext, id: string) {
  if (!id) throw invalid('id', 'is required');
  return get(deps, ctx.orgId, id);
}

export async function create(deps: ContactsDeps, ctx: OrgContext, req: crm.ContactStatusInput__Output) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const s = {
    id: randomUUID(),
    orgId,
    name: requireText(req.name, 'name', rules.STATUS_NAME_MAX),
    color: rules.statusColor(req.color),
    position: rules.position(req.position),
  };
  try {
    return repo.toStatus(await repo.insertStatus(deps.pool, s));
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken();
    throw err;
  }
}

export async function update(deps: ContactsDeps, ctx: OrgContext, req: crm.ContactStatusInput__Output) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  await get(deps, orgId, req.id);
  const patch = {
    name: req.name === undefined ? undefined : requireText(req.name, 'name', rules.STATUS_NAME_MAX),
    color: req.color === undefined ? undefined : rules.statusColor(req.color),
    position: req.position === undefined ? undefined : rules.position(req.position),
  };
  try {
    await repo.updateStatus(deps.pool, orgId, req.id, patch);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken();
    throw err;
  }
  return get(deps, orgId, req.id);
}

/** Contacts that had the status lose it, and each gets a contact.updated event saying so. */
export async function remove(deps: ContactsDeps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Contact status');
  await withTransaction(deps.pool, async (tx) => {
    await deps.contactWriter.inTrace(ctx.traceparent).clearStatus(tx, orgId, id);
    if (!(await repo.deleteStatus(tx, orgId, id))) throw notFound('Contact status');
  });
  return { ok: true, message: 'Contact status deleted' };
}
