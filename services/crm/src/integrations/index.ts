import { ConfigError, directDatabaseUrl } from '@crm/config';
import { SecretBox } from '@crm/crypto';
import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { CrmConfig } from '../config';
import type { Deps } from '../deps';
import type { IntegrationDeps } from './deps';
import { integrationsHandlers } from './integrations.handler';
import type { SocialnetDriver } from './socialnet/driver';
import { GraphSocialnet } from './socialnet/graph.driver';
import { SandboxSocialnet } from './socialnet/sandbox.driver';
import { SocialnetSyncWorker } from './socialnet/sync-worker';

function graphDriver(config: CrmConfig): SocialnetDriver {
  if (!config.SOCIALNET_GRAPH_URL) throw new ConfigError('Invalid configuration:\n  SOCIALNET_GRAPH_URL: is required when SOCIALNET_DRIVER=graph');
  return new GraphSocialnet({ baseUrl: config.SOCIALNET_GRAPH_URL, timeoutMs: config.SOCIALNET_HTTP_TIMEOUT_MS });
}

/**
 * The integrations feature as app.ts wires it: serves crm.v1.IntegrationsService on `server` and runs the
 * lead-sync worker (start once the outbox relay runs, stop before the pool closes).
 */
export function integrationsFeature(deps: Deps, server: GrpcServer) {
  const { config } = deps;
  const box = SecretBox.fromEnv(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_OLD);
  const sandbox = config.SOCIALNET_DRIVER === 'sandbox' ? new SandboxSocialnet(deps.pool) : undefined;
  const driver: SocialnetDriver = sandbox ?? graphDriver(config);
  const d: IntegrationDeps = { config, pool: deps.pool, log: deps.log, driver, box, sandbox };
  const worker = new SocialnetSyncWorker({
    pool: deps.pool,
    databaseUrl: directDatabaseUrl(config),
    log: deps.log,
    driver,
    box,
    phoneCountry: config.PHONE_DEFAULT_COUNTRY,
    // A sync is worked by the worker's claim loop, not in the call that asked for it: a trace of its own.
    contacts: deps.contactWriter.inTrace(undefined),
    pageSize: config.SOCIALNET_PAGE_SIZE,
    concurrency: config.SOCIALNET_SYNC_CONCURRENCY,
    pollMs: config.SOCIALNET_POLL_MS,
    leaseMs: config.SOCIALNET_LEASE_MS,
    retryBaseMs: config.SOCIALNET_RETRY_BASE_MS,
    retryMaxMs: config.SOCIALNET_RETRY_MAX_MS,
    maxAttempts: config.SOCIALNET_SYNC_MAX_ATTEMPTS,
  });
  server.add(serviceDefinition(loadProto('crm/v1/integrations.proto'), 'crm.v1.IntegrationsService'), integrationsHandlers(d));
  return {
    start: () => worker.start(),
    stop: () => worker.stop(),
  };
}
export { INTEGRATION_SECRETS } from './secrets';
