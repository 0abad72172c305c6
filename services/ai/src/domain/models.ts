import { OrgContext, traceFields } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { ADAPTERS } from '../providers/adapters';
import { isProviderId, PROVIDER_IDS, PROVIDERS } from '../providers/catalog';
import { ProviderError } from '../providers/http';
import { connectionOf, resolveForUse } from './providers';
import { modelsThrottle } from './quota';

/**
 * The provider's own models list, asked with the organization's effective key and base URL. As the
 * spec requires, nothing here fails the HTTP call: a missing key, a rejected key, a timeout, an
 * unreachable host or an unknown provider all answer `{models: [], error}` so the UI can let the user
 * type a model name instead.
 */
export async function listModels(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  if (!isProviderId(id)) {
    return { models: [], error: `Unknown AI provider "${id.slice(0, 40)}"; the providers are ${PROVIDER_IDS.join(', ')}` };
  }
  const info = PROVIDERS[id];
  const wait = await modelsThrottle(deps.redis, deps.config.REDIS_PREFIX, orgId, deps.config.AI_MODELS_PER_MINUTE);
  // As the specification wants of this call: 200 with an error, never an HTTP failure.
  if (wait > 0) return { models: [], error: `Models were listed too often for this organization; try again in ${wait} s` };
  const resolved = await resolveForUse(deps, ctx, id);
  const conn = connectionOf(resolved);
  if (!conn && resolved.baseUrlSource === 'organization') {
    return {
      models: [],
      error: `The API key for ${info.name} is not configured: this organization's own base URL is used only with its own API key; add one in AI settings`,
    };
  }
  if (!conn) {
    return {
      models: [],
      error: `The API key for ${info.name} is not configured: add one in AI settings or set ${String(info.envKey)} on the server`,
    };
  }
  try {
    const models = await ADAPTERS[info.api].listModels(conn, deps.config.AI_MODELS_TIMEOUT_MS);
    return { models };
  } catch (err) {
    if (err instanceof ProviderError) {
      deps.log.warn({ orgId, provider: id, reason: err.reason, status: err.status, requestId: ctx.requestId, ...traceFields(ctx) }, err.message);
      return { models: [], error: err.message };
    }
    // Not a vendor answer we understand: keep the details in the log, never the key.
    deps.log.error(
      { orgId, provider: id, errName: (err as Error)?.name, requestId: ctx.requestId, ...traceFields(ctx) },
      'listing models failed unexpectedly',
    );
    return { models: [], error: `Listing the models of ${info.name} failed unexpectedly` };
  }
}
