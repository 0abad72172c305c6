import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { convs } from '../conversations';
import * as folders from './folders.repo';
import { isUuid, messagingRules as rules, requireText } from '@crm/validation';
import { viewerOf } from '../visibility';

function duplicateName(err: unknown): never {
  if ((err as { code?: string }).code === '23505') {
    throw new AppError('already_exists', 'A chat folder with this name already exists', { code: 'folder_name_taken' });
  }
  throw err;
}

async function get(deps: Deps, orgId: string, id: string) {
  const f = isUuid(id) ? await folders.get(deps.pool, orgId, id) : undefined;
  if (!f) throw notFound('Chat folder');
  return f;
}

export async function list(deps: Deps, ctx: OrgContext) {
  return { data: await folders.list(deps.pool, ctx.orgId) };
}

export async function create(deps: Deps, ctx: OrgContext, req: { name?: string; color?: string }) {
  requireCan(ctx, 'conversations:write');
  const name = requireText(req.name, 'name', rules.FOLDER_NAME_MAX);
  const color = req.color === undefined || req.color === '' ? rules.DEFAULT_FOLDER_COLOR : rules.folderColor(req.color);
  const id = randomUUID();
  await folders.insert(deps.pool, { id, orgId: ctx.orgId, name, color }).catch(duplicateName);
  return get(deps, ctx.orgId, id);
}

export async function update(deps: Deps, ctx: OrgContext, req: { id: string; name?: string; color?: string }) {
  requireCan(ctx, 'conversations:write');
  await get(deps, ctx.orgId, req.id);
  const name = req.name !== undefined ? requireText(req.name, 'name', rules.FOLDER_NAME_MAX) : undefined;
  const color = req.color !== undefined ? rules.folderColor(req.color) : undefined;
  await folders.update(deps.pool, ctx.orgId, req.id, { name, color }).catch(duplicateName);
  return get(deps, ctx.orgId, req.id);
}

/** Deleting a folder never deletes its conversations; they just leave the folder. */
export async function remove(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  if (!isUuid(id) || !(await folders.remove(deps.pool, ctx.orgId, id))) throw notFound('Chat folder');
  return { ok: true, message: 'Chat folder deleted' };
}

/** Put conversations in a folder (a conversation may sit in several folders); repeats are no-ops. */
export async function addConversations(deps: Deps, ctx: OrgContext, req: { folderId: string; conversationIds: string[] }) {
  requireCan(ctx, 'conversations:write');
  await get(deps, ctx.orgId, req.folderId);
  const ids = [...new Set(req.conversationIds ?? [])];
  if (ids.length === 0) throw invalid('conversationIds', rules.FOLDER_CONVERSATIONS_EMPTY);
  if (ids.length > rules.FOLDER_CONVERSATIONS_MAX) throw invalid('conversationIds', rules.FOLDER_CONVERSATIONS_TOO_MANY);
  const bad = ids.find((id) => !isUuid(id));
  // Another org's conversation is as unknown as a missing one: 404, never a hint that it exists.
  const found = bad === undefined ? await convs.existingIds(deps.pool, ctx.orgId, ids, viewerOf(ctx)) : new Set<string>();
  const missing = bad ?? ids.find((id) => !found.has(id));
  if (missing !== undefined) throw new AppError('not_found', `Conversation ${missing} not found`);
  await folders.addConversations(deps.pool, ctx.orgId, req.folderId, ids);
  return get(deps, ctx.orgId, req.folderId);
}

export async function removeConversation(deps: Deps, ctx: OrgContext, req: { folderId: string; conversationId: string }) {
  requireCan(ctx, 'conversations:write');
  await get(deps, ctx.orgId, req.folderId);
  const viewer = viewerOf(ctx);
  // A conversation the agent may not see (inbox visibility) is as unknown here as everywhere else.
  const hidden = viewer && isUuid(req.conversationId) && !(await convs.existingIds(deps.pool, ctx.orgId, [req.conversationId], viewer)).size;
  if (hidden || !isUuid(req.conversationId) || !(await folders.removeConversation(deps.pool, ctx.orgId, req.folderId, req.conversationId))) {
    throw notFound('Conversation in this folder');
  }
  return get(deps, ctx.orgId, req.folderId);
}
