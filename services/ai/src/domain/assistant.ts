import { withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { invalid, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import { aiRules } from '@crm/validation';
import type { Deps } from '../deps';
import * as repo from '../db/assistant-settings.repo';
import { isProviderId, LOCAL_ENGINE, PROVIDERS } from '../providers/catalog';
import { nextUtcMidnight } from './quota';
import { resolveForUse } from './providers';
import { guardSettingsOf, nextGuardSettings, saveGuardSettings, type GuardSettings, type GuardUpdate } from '../guardrails/guard-settings';

export interface AssistantSettings {
  provider: string;
  model: string;
  dailyQuota: number;
  enabled: boolean;
  updatedAt?: string;
}

export const LOCAL_MODELS = { draft: 'local-templates-v1', summary: 'local-extractive-v1', sentiment: 'local-lexicon-v1' } as const;

/**
 * The organization's settings as they apply now. A stored quota above AI_DAILY_QUOTA_MAX (saved before
 * the operator lowered the cap) counts as the cap: the cap is the server's, whatever an admin once set.
 */
export async function settingsOf(deps: Deps, orgId: string): Promise<AssistantSettings> {
  const row = await repo.find(deps.pool, orgId);
  if (!row) return { provider: LOCAL_ENGINE, model: '', dailyQuota: deps.config.AI_DEFAULT_DAILY_QUOTA, enabled: true };
  const dailyQuota = Math.min(row.daily_quota, deps.config.AI_DAILY_QUOTA_MAX);
  return { provider: row.provider, model: row.model, dailyQuota, enabled: row.enabled, updatedAt: row.updated_at.toISOString() };
}

/** The configuration with what it means right now: which engine answers, and how much of today's quota is left. */
async function describe(deps: Deps, ctx: OrgContext, s: AssistantSettings, guard?: GuardSettings) {
  const { orgId } = ctx;
  const used = await deps.quota.used(orgId);
  const { fallbackProviders, autoReply } = guard ?? (await guardSettingsOf(deps, orgId));
  const remaining = Math.max(0, s.dailyQuota - used);
  let status: string;
  let statusMessage: string;
  let engine = LOCAL_ENGINE;
  let effectiveModel = '';
  let ownBaseUrl = false;
  if (isProviderId(s.provider)) {
    const p = await resolveForUse(deps, ctx, s.provider);
    ownBaseUrl = p.baseUrlSource === 'organization';
    if (p.apiKey) {
      engine = s.provider;
      effectiveModel = s.model || PROVIDERS[s.provider].defaultModel;
    }
  }
  if (!s.enabled) {
    status = 'disabled';
    statusMessage = 'The AI assistant is turned off for this organization';
  } else if (remaining === 0) {
    status = 'quota_exhausted';
    statusMessage = `Today's ${s.dailyQuota} AI calls are used up; the quota resets at 00:00 UTC`;
  } else if (s.provider === LOCAL_ENGINE) {
    status = 'local';
    statusMessage = 'The built-in local engine answers (offline: templates, extractive summaries, lexicon sentiment)';
  } else if (engine === LOCAL_ENGINE) {
    status = 'missing_key';
    const name = PROVIDERS[s.provider as keyof typeof PROVIDERS].name;
    statusMessage = ownBaseUrl
      ? `${name} has no API key of this organization's own, which its own base URL needs; the local engine answers until one is set`
      : `${name} has no API key; the local engine answers until one is set`;
  } else {
    status = 'active';
    statusMessage = `${PROVIDERS[s.provider as keyof typeof PROVIDERS].name} answers with model ${effectiveModel}; the local engine steps in if it fails`;
  }
  return {
    provider: s.provider,
    model: s.model,
    dailyQuota: s.dailyQuota,
    enabled: s.enabled,
    status,
    statusMessage,
    engine,
    effectiveModel: engine === LOCAL_ENGINE ? 'local' : effectiveModel,
    usedToday: Math.min(used, s.dailyQuota),
    remainingToday: remaining,
    quotaResetsAt: nextUtcMidnight(new Date()).toISOString(),
    updatedAt: s.updatedAt,
    fallbackProviders,
    autoReply,
  };
}

export async function getConfig(deps: Deps, ctx: OrgContext) {
  const { orgId } = ctx;
  return describe(deps, ctx, await settingsOf(deps, orgId));
}

export async function updateConfig(
  deps: Deps,
  ctx: OrgContext,
  req: { provider?: string; model?: string; dailyQuota?: number; enabled?: boolean } & GuardUpdate,
) {
  requireCan(ctx, 'settings:edit');
  const orgId = ctx.orgId;
  const current = await settingsOf(deps, orgId);
  const next = { ...current };
  if (req.provider !== undefined) {
    if (req.provider !== LOCAL_ENGINE && !isProviderId(req.provider)) {
      throw invalid('provider', aiRules.ENGINE_MESSAGE);
    }
    // A different provider's model name means nothing to the new one.
    if (req.provider !== current.provider && req.model === undefined) next.model = '';
    next.provider = req.provider;
  }
  if (req.model !== undefined) {
    next.model = aiRules.aiModel(req.model);
  }
  if (req.dailyQuota !== undefined) {
    next.dailyQuota = aiRules.dailyQuota(req.dailyQuota, deps.config.AI_DAILY_QUOTA_MAX);
  }
  if (req.enabled !== undefined) next.enabled = req.enabled;
  const guardBefore = await guardSettingsOf(deps, orgId);
  const guard = nextGuardSettings(guardBefore, req);
  const row = await withTransaction(deps.pool, async (db) => {
    const saved = await repo.save(db, { orgId, ...next, userId: ctx.userId || null });
    const changes = {
      ...settingsChanges(current, next),
      ...(await saveGuardSettings(db, orgId, ctx.userId || null, guardBefore, guard, ctx.traceparent)),
    };
    if (Object.keys(changes).length > 0)
      await recordAudit(db, ctx, { action: 'ai_settings.updated', resourceType: 'ai_settings', resourceId: null, details: changes });
    return saved;
  });
  deps.log.info(
    { orgId, provider: row.provider, model: row.model, dailyQuota: row.daily_quota, enabled: row.enabled, ...traceFields(ctx) },
    'AI assistant settings changed',
  );
  return describe(deps, ctx, { ...next, updatedAt: row.updated_at.toISOString() }, guard);
}

/** Each assistant setting that changed, from/to. */
function settingsChanges(before: AssistantSettings, after: AssistantSettings) {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of ['provider', 'model', 'dailyQuota', 'enabled'] as const) {
    if (before[field] !== after[field]) changes[field] = { from: before[field], to: after[field] };
  }
  return changes;
}
