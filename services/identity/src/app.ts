import path from 'node:path';
import { authKeys, createTokenSigner } from '@crm/auth';
import { directDatabaseUrl } from '@crm/config';
import { createPool, databaseAnswers, prepareDatabase } from '@crm/db';
import { AUDIT_RECORDED, brokerConnected, eachEvent, EventConsumer, installEventTables, OutboxRelay } from '@crm/events';
import { GrpcServer, grpcTransportFromEnv, internalAuthFromEnv, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { createLogger, Logger } from '@crm/logger';
import { Metrics, type RunningService, withMetricsServer } from '@crm/metrics';
import { closeRedisClient, createRedisClient, redisAnswers } from '@crm/redis';
import { OfflineTimer } from './availability';
import type { IdentityConfig } from './config';
import type { Deps } from './deps';
import { sweep as sweepAuditLog } from './domain/audit';
import { LoginThrottle } from './domain/login-throttle';
import { auditRecordedHandler } from './events/audit-recorded.consumer';
import { identityHandlers } from './grpc/identity.handler';
import { createMailer } from './mail/mailer';

export { loadConfig } from './config';

export type { RunningService };

/** Create the database if needed, migrate, and serve gRPC. Used by main.ts and by tests in-process. */
export async function startIdentity(config: IdentityConfig, log: Logger = createLogger('identity', config.LOG_LEVEL)): Promise<RunningService> {
  // This service's internal credential: verifies every incoming call, signs its own calls (bad keys stop start-up).
  const auth = internalAuthFromEnv('identity', config);
  // How its gRPC server and clients connect: mutual TLS when GRPC_TLS_* is set (bad certificates stop start-up too).
  const transport = grpcTransportFromEnv(config, log);
  // Over the direct connection: a migration run holds its session (an advisory lock across transactions).
  await prepareDatabase(directDatabaseUrl(config), path.join(__dirname, '..', 'migrations'), log);
  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  // processed_events makes the audit consumer idempotent; the outbox carries user.availability_changed and user.deactivated.
  await installEventTables(pool);
  const redis = createRedisClient(config.REDIS_URL, log, 'identity');
  // Resolves once Redis answers (retrying, and logging, until then): identity does not serve without its login throttle.
  await redis.connect();
  const deps: Deps = {
    config,
    pool,
    redis,
    log,
    keys: authKeys(config.REDIS_PREFIX),
    signAccess: createTokenSigner(config.JWT_SECRET, config.ACCESS_TOKEN_TTL),
    throttle: new LoginThrottle(redis, config.REDIS_PREFIX, config.LOGIN_MAX_FAILURES, config.LOGIN_MAX_FAILURES_PER_DAY),
    mailer: createMailer(config, log),
  };
  const metrics = new Metrics('identity');
  const auditConsumer = new EventConsumer({
    amqpUrl: config.AMQP_URL,
    amqpUserPrefix: config.AMQP_USER_PREFIX,
    exchange: config.EVENTS_EXCHANGE,
    queue: `${config.EVENTS_EXCHANGE}.identity.audit`,
    bindings: [AUDIT_RECORDED],
    // Batches, one commit each (issue #28 item 2); an org's entries in order, orgs side by side.
    batchHandler: eachEvent(auditRecordedHandler(log)),
    batchKey: (e) => e.orgId,
    // An entry whose data does not fit its schema is dead-lettered at once, its fields named in x-crm-error.
    parseData: true,
    logger: log,
    pool,
    concurrency: 4,
    metrics,
  });
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
  const offlineTimer = new OfflineTimer(deps);
  try {
    await relay.start();
    await auditConsumer.start();
    await offlineTimer.start();
  } catch (err) {
    await offlineTimer.stop().catch(() => undefined);
    await auditConsumer.stop().catch(() => undefined);
    await relay.stop().catch(() => undefined);
    await closeRedisClient(redis);
    await pool.end();
    throw err;
  }
  const server = new GrpcServer(log, auth, metrics).readiness({
    postgres: () => databaseAnswers(pool),
    rabbitmq: () => brokerConnected([relay, auditConsumer]),
    redis: () => redisAnswers(redis),
  });
  server.add(serviceDefinition(loadProto('identity/v1/identity.proto'), 'identity.v1.IdentityService'), identityHandlers(deps));
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT, transport);
  log.info({ port }, 'identity listening');
  const sweeper = startAuditSweeper(deps);
  const stop = async () => {
    await sweeper.stop();
    await server.stop();
    await offlineTimer.stop();
    await auditConsumer.stop();
    // Last: what the timer and the handlers enqueued on the way out is still published.
    await relay.stop();
    deps.mailer.close();
    await closeRedisClient(redis);
    await pool.end();
  };
  return withMetricsServer(metrics, { port: config.METRICS_PORT, host: config.GRPC_HOST, log }, { port, stop });
}

/** Runs the audit-log retention sweep every AUDIT_SWEEP_INTERVAL_MS (first run one interval after start). */
function startAuditSweeper(deps: Deps) {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= sweepAuditLog(deps.pool, deps.config.AUDIT_RETENTION_DAYS)
      .then((deleted) => deleted && deps.log.info({ deleted }, 'audit log: expired entries deleted'))
      .catch((err) => deps.log.warn({ err }, 'audit log: retention sweep failed'))
      .finally(() => (running = undefined));
  }, deps.config.AUDIT_SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** The conventional entry every service exports, so the test stack and scripts can start any of them. */
export const start = startIdentity;
