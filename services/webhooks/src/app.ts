import path from 'node:path';
import { SecretBox } from '@crm/crypto';
import { directDatabaseUrl } from '@crm/config';
import { createPool, databaseAnswers, prepareDatabase } from '@crm/db';
import { brokerConnected, installEventTables, OutboxRelay } from '@crm/events';
import { GrpcServer, grpcTransportFromEnv, internalAuthFromEnv, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { createLogger, Logger } from '@crm/logger';
import { Metrics, type RunningService, withMetricsServer } from '@crm/metrics';
import type { WebhooksConfig } from './config';
import type { Deps } from './deps';
import { WebhookSender } from './delivery/sender';
import { replayPump } from './delivery/replay-pump';
import { DeliveryWorker } from './delivery/worker';
import { feedSweeper } from './feed/feed-sweeper';
import { FeedWaiters } from './feed/feed-waiters';
import { publicEventsConsumer } from './events/public-events.consumer';
import { webhooksHandlers } from './grpc/webhooks.handler';

export { loadConfig } from './config';

export type { RunningService };

/**
 * Create the database if needed, migrate, start the outbox relay (for `webhook.disabled`), the delivery
 * worker, the public-event consumer (which also appends to the event feed), the feed's retention sweep and
 * long-poll waiters, the replay pump, and serve gRPC. Used by main.ts and by tests in-process.
 */
export async function startWebhooks(config: WebhooksConfig, log: Logger = createLogger('webhooks', config.LOG_LEVEL)): Promise<RunningService> {
  // This service's internal credential: verifies every incoming call, signs its own calls (bad keys stop start-up).
  const auth = internalAuthFromEnv('webhooks', config);
  // How its gRPC server and clients connect: mutual TLS when GRPC_TLS_* is set (bad certificates stop start-up too).
  const transport = grpcTransportFromEnv(config, log);
  // Over the direct connection: a migration run holds its session (an advisory lock across transactions).
  await prepareDatabase(directDatabaseUrl(config), path.join(__dirname, '..', 'migrations'), log);
  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  await installEventTables(pool);

  const box = SecretBox.fromEnv(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_OLD);
  const sender = new WebhookSender({
    allow: config.WEBHOOK_ALLOWED_PRIVATE_ADDRESSES,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    bodyLimit: config.WEBHOOK_RESPONSE_BODY_LIMIT,
    maxSockets: config.WEBHOOK_CONCURRENCY,
  });
  const metrics = new Metrics('webhooks');
  const relay = new OutboxRelay({
    // Each event carries this service's stamp: consumers acting on it pass it on as their calls' origin.
    stamps: auth,
    pool,
    directUrl: directDatabaseUrl(config),
    amqpUrl: config.AMQP_URL,
    exchange: config.EVENTS_EXCHANGE,
    logger: log,
    metrics,
  });
  const worker = new DeliveryWorker({
    pool,
    databaseUrl: directDatabaseUrl(config),
    log,
    box,
    sender,
    schedule: config.WEBHOOK_RETRY_SCHEDULE,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
    concurrency: config.WEBHOOK_CONCURRENCY,
    endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    pollMs: config.WEBHOOK_POLL_MS,
    leaseMs: config.WEBHOOK_TIMEOUT_MS + 30_000,
    retentionMs: config.WEBHOOK_LOG_RETENTION,
    metrics,
  });
  const consumer = publicEventsConsumer({
    amqpUrl: config.AMQP_URL,
    amqpUserPrefix: config.AMQP_USER_PREFIX,
    exchange: config.EVENTS_EXCHANGE,
    fanOut: (events) => worker.fanOut(events),
    logger: log,
    metrics,
  });
  const feedWaiters = new FeedWaiters(directDatabaseUrl(config), log);
  const sweeper = feedSweeper({ pool, databaseUrl: directDatabaseUrl(config), retentionMs: config.EVENT_FEED_RETENTION_DAYS * 86_400_000, log });
  const pump = replayPump({
    pool,
    databaseUrl: directDatabaseUrl(config),
    log,
    perSecond: config.WEBHOOK_REPLAY_PER_SECOND,
    inFlight: config.WEBHOOK_REPLAY_IN_FLIGHT,
  });
  const deps: Deps = { config, pool, log, box, sender, feedWaiters };

  const server = new GrpcServer(log, auth, metrics).readiness({
    postgres: () => databaseAnswers(pool),
    rabbitmq: () => brokerConnected([relay, consumer]),
  });
  server.add(serviceDefinition(loadProto('webhooks/v1/webhooks.proto'), 'webhooks.v1.WebhooksService'), webhooksHandlers(deps));
  try {
    await relay.start();
    await worker.start();
    await feedWaiters.start();
    await sweeper.start();
    await pump.start();
    await consumer.start();
  } catch (err) {
    await consumer.stop().catch(() => undefined);
    await pump.stop();
    await sweeper.stop();
    await feedWaiters.stop();
    await worker.stop();
    await relay.stop().catch(() => undefined);
    sender.close();
    await pool.end();
    throw err;
  }
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT, transport);
  log.info({ port, allowedPrivate: config.WEBHOOK_ALLOWED_PRIVATE_ADDRESSES.entries }, 'webhooks listening');
  const stop = async () => {
    // New work stops first (calls, then events); attempts in flight finish and are recorded; then the rest. Held
    // feed readers are answered first (an empty page), so the server's stop does not wait out their long polls.
    await feedWaiters.stop();
    await server.stop();
    await consumer.stop();
    await pump.stop();
    await sweeper.stop();
    await worker.stop();
    await relay.stop();
    sender.close();
    await pool.end();
  };
  return withMetricsServer(metrics, { port: config.METRICS_PORT, host: config.GRPC_HOST, log }, { port, stop });
}

/** The conventional entry every service exports, so the test stack and scripts can start any of them. */
export const start = startWebhooks;
