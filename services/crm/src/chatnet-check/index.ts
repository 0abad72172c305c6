import { directDatabaseUrl } from '@crm/config';
import type { GrpcTransport, InternalAuth } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { connectorPhoneDirectory } from './connector.client';
import { PhoneCheckWorker } from './phone-check.worker';

/**
 * hasChatnet's phone check for app.ts: a worker (when CHATNET_PHONE_CHECK is on) that asks the connector about
 * contacts' numbers, started and stopped with the service.
 */
export function chatnetPhoneCheckFeature(deps: Deps, auth: InternalAuth, transport: GrpcTransport) {
  const { config } = deps;
  if (!config.CHATNET_PHONE_CHECK) return { start: async () => undefined, stop: async () => undefined };
  const directory = connectorPhoneDirectory(config.CONNECTOR_ADDR, auth, config.CONNECTOR_DEADLINE_MS, config.GRPC_LB_POLICY, transport, deps.grants);
  const worker = new PhoneCheckWorker({
    pool: deps.pool,
    databaseUrl: directDatabaseUrl(config),
    log: deps.log,
    directory,
    pollMs: config.CHATNET_PHONE_CHECK_POLL_MS,
    concurrency: config.CHATNET_PHONE_CHECK_CONCURRENCY,
    batchSize: config.CHATNET_PHONE_CHECK_BATCH_SIZE,
    intervalMs: config.CHATNET_PHONE_CHECK_INTERVAL_MS,
    deadlineMs: config.CONNECTOR_DEADLINE_MS,
    retryBaseMs: config.CHATNET_PHONE_CHECK_RETRY_MS,
    retryMaxMs: config.CHATNET_PHONE_CHECK_RETRY_MAX_MS,
  });
  return {
    start: () => worker.start(),
    stop: async () => {
      await worker.stop();
      directory.close();
    },
  };
}
