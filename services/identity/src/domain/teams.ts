import { randomUUID } from 'node:crypto';
import { invalid, notFound, requireCan, requireUser, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import * as teams from '../db/teams.repo';
import * as users from '../db/users.repo';
import { record as recordAudit } from './audit';
import { rules } from './validation';
import { isUuid, optionalText, requireText } from '@crm/validation';

interface TeamInput {
  id: string;
  name?: string;
  description?: string;
  memberIds: string[];
  setMembers: boolean;
}

/** Members must be users of the same organization; another org's user id is a bad request. */
async function checkMembers(deps: Deps, orgId: string, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const bad = unique.find((id) => !isUuid(id));
  if (bad !== undefined) throw invalid('memberIds', `unknown user id ${bad}`);
  const found = await users.existingUserIds(deps.pool, orgId, unique);
  const missing = unique.find((id) => !found.has(id));
  if (missing) throw invalid('memberIds', `unknown user id ${missing}`);
  return unique;
}

export async function list(deps: Deps, ctx: OrgContext) {
  const { orgId } = requireUser(ctx);
  return { data: await teams.listTeams(deps.pool, orgId) };
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  const team = isUuid(id) ? await teams.getTeam(deps.pool, orgId, id) : undefined;
  if (!team) throw notFound('Team');
  return team;
}

export async function create(deps: Deps, ctx: OrgContext, req: TeamInput) {
  requireCan(ctx, 'teams:manage');
  const name = requireText(req.name, 'name');
  const description = optionalText(req.description, 'description', rules.IDENTITY_TEXT_MAX.teamDescription);
  const members = await checkMembers(deps, ctx.orgId, req.memberIds ?? []);
  const id = randomUUID();
  await withTransaction(deps.pool, async (db) => {
    await teams.insertTeam(db, { id, orgId: ctx.orgId, name, description });
    await teams.setMembers(db, id, members);
    await recordAudit(db, ctx, { action: 'team.created', resourceType: 'team', resourceId: id, details: { name, memberIds: members } });
  });
  return (await teams.getTeam(deps.pool, ctx.orgId, id))!;
}

export async function update(deps: Deps, ctx: OrgContext, req: TeamInput) {
  requireCan(ctx, 'teams:manage');
  const before = await get(deps, ctx, req.id);
  const name = req.name !== undefined ? requireText(req.name, 'name') : undefined;
  const description =
    req.description !== undefined ? optionalText(req.description, 'description', rules.IDENTITY_TEXT_MAX.teamDescription) : undefined;
  const members = req.setMembers ? await checkMembers(deps, ctx.orgId, req.memberIds ?? []) : undefined;
  await withTransaction(deps.pool, async (db) => {
    await teams.updateTeam(db, ctx.orgId, req.id, { name, description });
    if (members) await teams.setMembers(db, req.id, members);
    const details = teamChanges(before, { name, description, members });
    if (Object.keys(details).length > 0)
      await recordAudit(db, ctx, {
        action: 'team.updated',
        resourceType: 'team',
        resourceId: req.id,
        details: { name: name ?? before.name, ...details },
      });
  });
  return (await teams.getTeam(deps.pool, ctx.orgId, req.id))!;
}

export async function remove(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'teams:manage');
  if (!isUuid(id)) throw notFound('Team');
  await withTransaction(deps.pool, async (db) => {
    const name = await teams.deleteTeam(db, ctx.orgId, id);
    if (name === undefined) throw notFound('Team');
    await recordAudit(db, ctx, { action: 'team.deleted', resourceType: 'team', resourceId: id, details: { name } });
  });
  return { ok: true, message: 'Team deleted' };
}

/** What an update changed: the name (from/to), that the description changed, members added and removed. */
function teamChanges(
  before: { name: string; description: string; memberIds: string[] },
  after: { name?: string; description?: string; members?: string[] },
) {
  const details: Record<string, unknown> = {};
  if (after.name !== undefined && after.name !== before.name) details.renamed = { from: before.name, to: after.name };
  if (after.description !== undefined && after.description !== before.description) details.descriptionChanged = true;
  if (after.members) {
    const added = after.members.filter((m) => !before.memberIds.includes(m));
    const removed = before.memberIds.filter((m) => !after.members!.includes(m));
    if (added.length) details.membersAdded = added;
    if (removed.length) details.membersRemoved = removed;
  }
  return details;
}
