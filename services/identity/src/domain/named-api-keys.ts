import { randomUUID } from 'node:crypto';
import { isApiKeyScope, type ApiKeyScope } from '@crm/auth';
import { withTransaction } from '@crm/db';
import { AppError, can, invalid, notFound, OrgContext, requireCan, requireUser, roleRank } from '@crm/grpc-kit';
import { isoTimestamp, isUuid, requireText } from '@crm/validation';
import type { Deps } from '../deps';
import * as keys from '../db/api-keys.repo';
import * as users from '../db/users.repo';
import { apiKeyMask, newApiKey } from './api-key-format';
import { announceRevoked } from './api-keys';
import { record as recordAudit } from './audit';

// Named API keys (issue #31 item 3): any number per organization, each with scopes, optionally bound to a user
// whose role and visibility it then acts with. Owners and admins (settings:edit) manage them all; any other user
// sees and revokes only the keys bound to themselves, and creates one (bound to themselves) only while the
// organization allows it (PUT /settings/api {agentKeys}).

const NAME_MAX = 100;
const LIST_MAX = 100;

const manages = (ctx: OrgContext) => can(ctx.role, 'settings:edit');

function toNamedKey(row: keys.ApiKeyRow, key?: string) {
  return {
    id: row.id,
    name: row.name ?? '',
    scopes: row.scopes ?? [],
    userId: row.user_id ?? undefined,
    prefix: apiKeyMask(row.last4),
    key,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString(),
  };
}

function requireScopes(values: string[]): ApiKeyScope[] {
  if (!values.length) throw invalid('scopes', 'must name at least one scope');
  const unknown = values.find((s) => !isApiKeyScope(s));
  if (unknown !== undefined) throw invalid('scopes', `unknown scope ${JSON.stringify(unknown.slice(0, 50))}`);
  return [...new Set(values as ApiKeyScope[])];
}

function requireFuture(value: string): Date | null {
  if (!value) return null;
  const at = isoTimestamp(value, 'expiresAt');
  if (at.getTime() <= Date.now()) throw invalid('expiresAt', 'must be in the future');
  return at;
}

export async function create(deps: Deps, ctx: OrgContext, req: { name: string; scopes: string[]; userId: string; expiresAt: string }) {
  const actor = requireUser(ctx);
  const name = requireText(req.name, 'name', NAME_MAX);
  const scopes = requireScopes(req.scopes);
  const expiresAt = requireFuture(req.expiresAt);
  if (req.userId && !isUuid(req.userId)) throw invalid('userId', 'must be a user id');
  let userId: string | null = req.userId || null;
  if (!manages(ctx)) {
    if (!(await keys.agentKeysAllowed(deps.pool, actor.orgId)))
      throw new AppError('permission_denied', 'This organization does not let agents create API keys', { code: 'forbidden' });
    if (userId && userId !== actor.userId)
      throw new AppError('permission_denied', 'An agent creates keys bound to themselves only', { code: 'forbidden' });
    userId = actor.userId;
  } else if (userId) {
    const user = await users.findInOrg(deps.pool, actor.orgId, userId);
    if (!user || user.status !== 'active') throw invalid('userId', 'must be an active user of the organization');
    // A key acts with its user's role: nobody mints one stronger than themselves.
    if (roleRank(user.role) > roleRank(actor.role))
      throw new AppError('permission_denied', 'A key cannot be bound to a user with a higher role than yours', { code: 'forbidden' });
  }
  const { apiKey, keyHash, last4 } = newApiKey();
  const row = await withTransaction(deps.pool, async (db) => {
    const inserted = await keys.insertNamedKey(db, {
      id: randomUUID(),
      orgId: actor.orgId,
      keyHash,
      last4,
      name,
      scopes,
      userId,
      createdBy: actor.userId,
      expiresAt: expiresAt?.toISOString() ?? null,
    });
    // The mask only: the key itself is shown once to its creator and stored nowhere else.
    await recordAudit(db, ctx, {
      action: 'api_key.created',
      resourceType: 'api_key',
      resourceId: inserted.id,
      details: { name, scopes, userId, keyMask: apiKeyMask(last4), expiresAt: inserted.expires_at?.toISOString() ?? null },
    });
    return inserted;
  });
  return toNamedKey(row, apiKey);
}

export async function list(deps: Deps, ctx: OrgContext, req: { page: number; limit: number }) {
  const actor = requireUser(ctx);
  const page = Math.max(1, req.page || 1);
  const limit = Math.min(LIST_MAX, Math.max(1, req.limit || 20));
  const { rows, total } = await keys.listNamedKeys(deps.pool, actor.orgId, { userId: manages(ctx) ? undefined : actor.userId, page, limit });
  return { data: rows.map((r) => toNamedKey(r)), pagination: { total, page, limit, pages: Math.ceil(total / limit) } };
}

/** Revoked at once on every gateway (announceRevoked). Another org's key, or for an agent another user's, is 404. */
export async function revoke(deps: Deps, ctx: OrgContext, id: string) {
  const actor = requireUser(ctx);
  const row = isUuid(id) ? await keys.findLiveNamedKey(deps.pool, actor.orgId, id) : undefined;
  if (!row || (!manages(ctx) && row.user_id !== actor.userId)) throw notFound('API key');
  const hash = await withTransaction(deps.pool, async (db) => {
    const revoked = await keys.revokeNamedKey(db, actor.orgId, row.id);
    if (!revoked) throw notFound('API key');
    await recordAudit(db, ctx, {
      action: 'api_key.revoked',
      resourceType: 'api_key',
      resourceId: row.id,
      details: { name: row.name, keyMask: apiKeyMask(row.last4), userId: row.user_id },
    });
    return revoked;
  });
  await announceRevoked(deps, hash);
  return { ok: true, message: 'API key revoked' };
}

export async function getSettings(deps: Deps, ctx: OrgContext) {
  const { orgId } = requireUser(ctx);
  return { agentKeys: await keys.agentKeysAllowed(deps.pool, orgId) };
}

export async function setSettings(deps: Deps, ctx: OrgContext, req: { agentKeys: boolean }) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = requireUser(ctx);
  await withTransaction(deps.pool, async (db) => {
    const before = await keys.agentKeysAllowed(db, orgId, true);
    if (before === req.agentKeys) return;
    await keys.setAgentKeysAllowed(db, orgId, req.agentKeys);
    await recordAudit(db, ctx, {
      action: 'api_settings.updated',
      resourceType: 'organization',
      resourceId: orgId,
      details: { agentKeys: { from: before, to: req.agentKeys } },
    });
  });
  return { agentKeys: req.agentKeys };
}

/** The gateway reports a use at most once a minute per key and instance; the row is written at most once a minute. */
export async function recordUse(deps: Deps, ctx: OrgContext, keyId: string) {
  if (isUuid(keyId)) await keys.touchLastUsed(deps.pool, ctx.orgId, keyId);
  return { ok: true, message: '' };
}
