import { notFound, OrgContext } from '@crm/grpc-kit';
import { isUuid } from '@crm/validation';
import type { Deps } from '../deps';
import { viewerOf } from '../visibility';
import * as convs from './conversations.repo';

/** page ≥ 1 and 1 ≤ limit ≤ max (the gateway clamps too; other callers reach this directly). */
export function clampPage(page: number | undefined, limit: number | undefined, def: number, max: number) {
  return { page: Math.max(1, Math.floor(page || 1)), limit: Math.min(max, Math.max(1, Math.floor(limit || def))) };
}

/** The conversation if the caller may see it (their org, and their inbox visibility), else 404. */
export async function load(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const row = isUuid(id) ? await convs.findById(deps.pool, orgId, id, false, viewerOf(ctx)) : undefined;
  if (!row) throw notFound('Conversation');
  return row;
}
