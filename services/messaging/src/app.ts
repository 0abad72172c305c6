import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { directDatabaseUrl } from '@crm/config';
import { createPool, databaseAnswers, prepareDatabase } from '@crm/db';
import { brokerConnected, installEventTables, OutboxRelay } from '@crm/events';
import { GrantKeeper, GrpcServer, grpcTransportFromEnv, internalAuthFromEnv, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { createLogger, Logger } from '@crm/logger';
import { Metrics, type RunningService as StartedService, withMetricsServer } from '@crm/metrics';
import { closeRedisClient, createRedisClient, redisAnswers } from '@crm/redis';
import { RemoteClients } from './clients';
import type { MessagingConfig } from './config';
import type { Deps } from './deps';
import { requests } from './send';
import { startAttachmentSweeper } from './attachments';
import { SendGovernor } from './governor';
import { SenderContacts } from './sender-contacts';
import { publishOwnersSnapshotOnce, ReplyTimer } from './assignment';
import { startSnoozeWaker } from './status';
import { createConsumers } from './events';
import { messagingHandlers } from './grpc';
import { ScheduledSender } from './scheduled';
import { serviceLevelsFeature, SlaBreachTimer } from './service-levels';
import { AutoCloser } from './auto-close-worker';
import { AutoMessageSender } from './auto-messages';
import { AutoReplyWorker } from './ai-auto-reply';
import { AutoReplyAccounts } from './auto-reply-settings';
import { KnownThreads } from './known-threads';
import { csatQuestionSent } from './csat';
import { viewsFeature } from './views';
import { startHttpServer } from './http';

export { loadConfig } from './config';

export { sweepOrphanAttachments } from './attachments';
/** One run of the snooze wake-up job (tests run several at once, as several instances would). */
export { wakeSnoozed } from './status';

/** What start() answers: the shared RunningService and what this service adds. */
export interface RunningService extends StartedService {
  /** Port of the attachments HTTP server (uploads and downloads stream there). */
  httpPort: number;
}

/**
 * Create the database if needed, migrate, start the outbox relay and the consumers, serve gRPC and the
 * attachments HTTP endpoint, sweep orphan and expired attachments, wake snoozed conversations and send scheduled messages at their time.
 * Used by main.ts and by tests in-process.
 */
export async function startMessaging(config: MessagingConfig, log: Logger = createLogger('messaging', config.LOG_LEVEL)): Promise<RunningService> {
  // This service's internal credential: verifies every incoming call, signs its own calls (bad keys stop start-up).
  const auth = internalAuthFromEnv('messaging', config);
  // How its gRPC server and clients connect: mutual TLS when GRPC_TLS_* is set (bad certificates stop start-up too).
  const transport = grpcTransportFromEnv(config, log);
  // Over the direct connection: a migration run holds its session (an advisory lock across transactions).
  await prepareDatabase(directDatabaseUrl(config), path.join(__dirname, '..', 'migrations'), log);
  // Its planner settings (no parallel query, random_page_cost 1.1) are the database's own: migration 020.
  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  await installEventTables(pool);
  await publishOwnersSnapshotOnce(pool, log);
  await mkdir(config.ATTACHMENTS_DIR, { recursive: true });
  const redis = createRedisClient(config.REDIS_URL, log, 'messaging');
  // Resolves once Redis answers (retrying, and logging, until then): no send is accepted before its governor works.
  await redis.connect();
  // The gateway's grant per org (org_grants): the origin of the calls messaging makes on its own (issue #27).
  const grants = new GrantKeeper(pool, auth, 'messaging');
  const remote = new RemoteClients(config, log, auth, transport, grants);
  const metrics = new Metrics('messaging');
  const deps: Deps = {
    config,
    pool,
    redis,
    log,
    remote,
    grants,
    governor: new SendGovernor(redis, config.REDIS_PREFIX, config.SEND_LIMITS),
    metrics,
    senderContacts: new SenderContacts(),
    autoReplyAccounts: new AutoReplyAccounts({ pool, databaseUrl: directDatabaseUrl(config), log }),
    knownThreads: new KnownThreads(),
  };
  // Loaded before the consumers start: an inbound batch must not miss an account in the list.
  await deps.autoReplyAccounts.start();

  const relay = new OutboxRelay({
    // Each event carries this service's stamp: consumers acting on it pass it on as their calls' origin.
    stamps: auth,
    pool,
    directUrl: directDatabaseUrl(config),
    amqpUrl: config.AMQP_URL,
    exchange: config.EVENTS_EXCHANGE,
    logger: log.child({ component: 'outbox' }),
    metrics,
  });
  await relay.start();
  const consumers = createConsumers(deps, auth);
  for (const c of consumers) await c.start();
  const prune = setInterval(() => {
    requests.prune(pool, config.IDEMPOTENCY_TTL_HOURS).catch((err) => log.warn({ err }, 'pruning idempotency keys failed'));
  }, 15 * 60_000);
  prune.unref();
  const sweeper = await startAttachmentSweeper(deps);
  const snoozes = await startSnoozeWaker(deps);
  const scheduled = new ScheduledSender(deps);
  await scheduled.start();
  const replyTimer = new ReplyTimer(deps);
  await replyTimer.start();
  const slaBreaches = new SlaBreachTimer(deps);
  await slaBreaches.start();
  const autoClose = new AutoCloser(deps);
  await autoClose.start();
  const autoMessages = new AutoMessageSender(deps, { csat: csatQuestionSent });
  await autoMessages.start();
  const autoReplies = new AutoReplyWorker(deps);
  await autoReplies.start();

  const server = new GrpcServer(log, auth, metrics).readiness({
    postgres: () => databaseAnswers(pool),
    rabbitmq: () => brokerConnected([relay, ...consumers]),
    redis: () => redisAnswers(redis),
  });
  server.add(serviceDefinition(loadProto('messaging/v1/messaging.proto'), 'messaging.v1.MessagingService'), messagingHandlers(deps));
  serviceLevelsFeature(deps, server);
  viewsFeature(deps, server);
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT, transport);
  const files = await startHttpServer(deps, auth, transport);
  log.info({ port, httpPort: files.port }, 'messaging listening');
  const stop = async () => {
    clearInterval(prune);
    await files.stop();
    await sweeper.stop();
    await snoozes.stop();
    await scheduled.stop();
    await replyTimer.stop();
    await slaBreaches.stop();
    await autoClose.stop();
    await autoMessages.stop();
    await autoReplies.stop();
    await server.stop();
    for (const c of consumers) await c.stop();
    await relay.stop();
    await deps.autoReplyAccounts.stop();
    remote.close();
    await closeRedisClient(redis);
    await pool.end();
  };
  return withMetricsServer(metrics, { port: config.METRICS_PORT, host: config.GRPC_HOST, log }, { port, httpPort: files.port, stop });
}

/** The conventional entry every service exports, so the test stack and scripts can start any of them. */
export const start = startMessaging;
