import { randomUUID } from 'node:crypto';
import { notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as presets from './presets.repo';
import { isUuid, messagingRules, optionalText, requireText } from '@crm/validation';

const MAX = messagingRules.PRESET_TEXT_MAX;

export async function list(deps: Deps, ctx: OrgContext, req: { category?: string }) {
  const category = req.category?.trim() || undefined;
  return { data: await presets.list(deps.pool, ctx.orgId, category) };
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  const p = isUuid(id) ? await presets.get(deps.pool, ctx.orgId, id) : undefined;
  if (!p) throw notFound('Chat preset');
  return p;
}

export async function create(deps: Deps, ctx: OrgContext, req: { name?: string; content?: string; category?: string }) {
  requireCan(ctx, 'conversations:write');
  return presets.insert(deps.pool, {
    id: randomUUID(),
    orgId: ctx.orgId,
    name: requireText(req.name, 'name', MAX.name),
    content: requireText(req.content, 'content', MAX.content),
    category: optionalText(req.category, 'category', MAX.category),
    createdBy: isUuid(ctx.userId) ? ctx.userId : null,
  });
}

export async function update(deps: Deps, ctx: OrgContext, req: { id: string; name?: string; content?: string; category?: string }) {
  requireCan(ctx, 'conversations:write');
  const patch = {
    name: req.name !== undefined ? requireText(req.name, 'name', MAX.name) : undefined,
    content: req.content !== undefined ? requireText(req.content, 'content', MAX.content) : undefined,
    category: req.category !== undefined ? optionalText(req.category, 'category', MAX.category) : undefined,
  };
  const p = isUuid(req.id) ? await presets.update(deps.pool, ctx.orgId, req.id, patch) : undefined;
  if (!p) throw notFound('Chat preset');
  return p;
}

export async function remove(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  if (!isUuid(id) || !(await presets.remove(deps.pool, ctx.orgId, id))) throw notFound('Chat preset');
  return { ok: true, message: 'Chat preset deleted' };
}
