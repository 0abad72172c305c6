import { withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { AppError, invalid, notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import type { AddressGuard } from '@crm/net-guard';
import { aiRules } from '@crm/validation';
import type { Deps } from '../deps';
import * as repo from '../db/provider-settings.repo';
import { isProviderId, PROVIDER_IDS, PROVIDERS, ProviderId, ProviderInfo } from '../providers/catalog';
import type { Connection } from '../providers/http';

export type KeySource = 'organization' | 'environment' | 'none';

/** What an organization gets for one provider once its own settings and the environment are combined. */
export interface ResolvedProvider {
  info: ProviderInfo;
  baseUrl: string;
  baseUrlSource: 'organization' | 'environment' | 'default';
  keySource: KeySource;
  keyMask: string;
  /** Present only when resolved for use (never for listing). */
  apiKey?: string;
  /** Set when the base URL is the organization's own: every connection to it is judged by the SSRF guard. */
  guard?: AddressGuard;
}

/** Keys are shown as `••••` + their last four characters; keys shorter than 12 characters not even that. */
export function maskKey(key: string): string {
  return `••••${lastFour(key)}`;
}
const lastFour = (key: string) => (key.length >= 12 ? key.slice(-4) : '');

export const aad = (orgId: string, provider: string) => `ai-provider:${orgId}:${provider}`;

function envKey(deps: Deps, info: ProviderInfo): string | undefined {
  return deps.config[info.envKey] as string | undefined;
}

/**
 * An organization's own base URL goes only with the organization's own key: the deployment's key from the
 * environment is sent only to the environment's base URL or the vendor's default, never to an address an
 * organization chose (or it could collect the key, or spend it on a server of its own).
 */
function combine(deps: Deps, info: ProviderInfo, row: repo.ProviderSettingsRow | undefined): ResolvedProvider {
  const env = envKey(deps, info);
  if (row?.base_url) {
    const own = { info, baseUrl: row.base_url, baseUrlSource: 'organization' as const };
    return row.api_key_enc
      ? { ...own, keySource: 'organization', keyMask: `••••${row.key_last4 ?? ''}` }
      : { ...own, keySource: 'none', keyMask: '' };
  }
  const envUrl = deps.config[info.envBaseUrl] as string | undefined;
  const baseUrl = envUrl ?? info.defaultBaseUrl;
  const baseUrlSource = envUrl ? 'environment' : 'default';
  if (row?.api_key_enc) return { info, baseUrl, baseUrlSource, keySource: 'organization', keyMask: `••••${row.key_last4 ?? ''}` };
  if (env) return { info, baseUrl, baseUrlSource, keySource: 'environment', keyMask: maskKey(env) };
  return { info, baseUrl, baseUrlSource, keySource: 'none', keyMask: '' };
}

function view(p: ResolvedProvider) {
  return {
    id: p.info.id,
    name: p.info.name,
    baseUrl: p.baseUrl,
    defaultBaseUrl: p.info.defaultBaseUrl,
    hasKey: p.keySource !== 'none',
    keyMask: p.keyMask,
    keySource: p.keySource,
    baseUrlSource: p.baseUrlSource,
    defaultModel: p.info.defaultModel,
  };
}

export async function list(deps: Deps, ctx: OrgContext) {
  const { orgId } = ctx;
  const rows = new Map((await repo.listForOrg(deps.pool, orgId)).map((r) => [r.provider, r]));
  return { providers: PROVIDER_IDS.map((id) => view(combine(deps, PROVIDERS[id], rows.get(id)))) };
}

/**
 * The provider ready to call: the organization's key (decrypted here, only for this call) or the
 * environment's. A stored key that no longer decrypts (its encryption key was retired) counts as absent
 * and is logged, so the environment key (with the environment's base URL only) or the local engine takes
 * over instead of failing every call.
 */
export async function resolveForUse(deps: Deps, ctx: { orgId: string; traceparent?: string }, id: ProviderId): Promise<ResolvedProvider> {
  const { orgId } = ctx;
  const info = PROVIDERS[id];
  let row = await repo.findOne(deps.pool, orgId, id);
  let orgKey: string | undefined;
  if (row?.api_key_enc) {
    try {
      orgKey = deps.box.decrypt(row.api_key_enc, aad(orgId, id));
    } catch {
      deps.log.warn({ orgId, provider: id, ...traceFields(ctx) }, 'stored provider key cannot be decrypted; ignoring it');
      row = { ...row, api_key_enc: null, key_last4: null };
    }
  }
  const resolved = combine(deps, info, row);
  const guard = resolved.baseUrlSource === 'organization' ? deps.guard : undefined;
  if (resolved.keySource === 'organization') return { ...resolved, apiKey: orgKey, guard };
  if (resolved.keySource === 'environment') return { ...resolved, apiKey: envKey(deps, info) };
  return resolved;
}

export function connectionOf(p: ResolvedProvider): Connection | undefined {
  return p.apiKey ? { provider: p.info, baseUrl: p.baseUrl, apiKey: p.apiKey, guard: p.guard } : undefined;
}

/** How long saving a base URL waits for its host to resolve. */
const RESOLVE_TIMEOUT_MS = 3_000;

/**
 * An organization's base URL must point at a public address (or one the operator allowed): checked here
 * when it is saved, and again on every connection (the address dialled, see providers/http.ts). A host
 * that does not resolve now is accepted: DNS may not be set up yet.
 */
async function checkBaseUrlHost(deps: Deps, ctx: OrgContext, baseUrl: string): Promise<void> {
  const host = new URL(baseUrl).hostname;
  const check = await deps.guard.checkOnSave(host, RESOLVE_TIMEOUT_MS);
  if ('refused' in check) throw invalid('baseUrl', check.refused);
  if ('unresolved' in check) deps.log.info({ host, err: check.unresolved, ...traceFields(ctx) }, 'AI base URL host does not resolve now; accepted');
}

export async function update(deps: Deps, ctx: OrgContext, req: { id: string; apiKey?: string; baseUrl?: string }) {
  requireCan(ctx, 'settings:edit');
  if (!isProviderId(req.id)) throw notFound('AI provider');
  const orgId = ctx.orgId;
  let key: { enc: string; last4: string } | null | undefined;
  if (req.apiKey !== undefined) {
    const apiKey = aiRules.apiKey(req.apiKey);
    key = apiKey === '' ? null : { enc: deps.box.encrypt(apiKey, aad(orgId, req.id)), last4: lastFour(apiKey) };
  }
  let baseUrl: string | null | undefined;
  if (req.baseUrl !== undefined) baseUrl = aiRules.baseUrl(req.baseUrl) || null;
  if (baseUrl) await checkBaseUrlHost(deps, ctx, baseUrl);
  if (key === undefined && baseUrl === undefined)
    throw new AppError('invalid_argument', 'Send apiKey, baseUrl or both', {
      details: [{ field: 'apiKey', message: 'apiKey or baseUrl is required' }],
    });
  await withTransaction(deps.pool, async (db) => {
    await repo.upsert(db, { orgId, provider: req.id, userId: ctx.userId || null, key, baseUrl });
    // The key's last four characters at most (as the settings page shows them), never the key.
    await recordAudit(db, ctx, {
      action: 'ai_provider.updated',
      resourceType: 'ai_provider',
      resourceId: req.id,
      details: {
        apiKey: key === undefined ? 'unchanged' : key === null ? 'removed' : 'set',
        ...(key ? { keyMask: `••••${key.last4}` } : {}),
        baseUrl: baseUrl === undefined ? 'unchanged' : baseUrl === null ? 'reset' : baseUrl,
      },
    });
  });
  deps.log.info(
    {
      orgId,
      provider: req.id,
      key: key === undefined ? 'unchanged' : key === null ? 'removed' : 'set',
      baseUrl: baseUrl === undefined ? 'unchanged' : baseUrl === null ? 'reset' : 'set',
      ...traceFields(ctx),
    },
    'AI provider settings changed',
  );
  return { ok: true, message: 'Saved' };
}
