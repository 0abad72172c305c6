import path from 'node:path';
import { SecretBox } from '@crm/crypto';
import { directDatabaseUrl } from '@crm/config';
import { createPool, databaseAnswers, prepareDatabase } from '@crm/db';
import { brokerConnected, installEventTables, OutboxRelay } from '@crm/events';
import { GrpcServer, grpcTransportFromEnv, internalAuthFromEnv, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { createLogger, Logger } from '@crm/logger';
import { Metrics, type RunningService, withMetricsServer } from '@crm/metrics';
import { AddressGuard } from '@crm/net-guard';
import { closeRedisClient, createRedisClient, redisAnswers } from '@crm/redis';
import type { AiServiceConfig } from './config';
import type { Deps } from './deps';
import { MessagingGateway } from './domain/conversations';
import { DailyQuota, DailyTokens } from './domain/quota';
import { aiHandlers } from './grpc/ai.handler';
import { knowledgeHandlers } from './knowledge';

export { loadConfig } from './config';
export type { AiServiceConfig } from './config';

export type { RunningService };

/** Create the database if needed, migrate, and serve gRPC. Used by main.ts and by tests in-process. */
export async function startAi(config: AiServiceConfig, log: Logger = createLogger('ai', config.LOG_LEVEL)): Promise<RunningService> {
  const box = SecretBox.fromEnv(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_OLD);
  // This service's internal credential: verifies every incoming call, signs its own calls (bad keys stop start-up).
  const auth = internalAuthFromEnv('ai', config);
  // How its gRPC server and clients connect: mutual TLS when GRPC_TLS_* is set (bad certificates stop start-up too).
  const transport = grpcTransportFromEnv(config, log);
  // Over the direct connection: a migration run holds its session (an advisory lock across transactions).
  await prepareDatabase(directDatabaseUrl(config), path.join(__dirname, '..', 'migrations'), log);
  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  // The outbox carries audit entries of settings changes to identity, committed with the change.
  await installEventTables(pool);
  const metrics = new Metrics('ai');
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
  try {
    await relay.start();
  } catch (err) {
    await pool.end();
    throw err;
  }
  const redis = createRedisClient(config.REDIS_URL, log, 'ai');
  // Resolves once Redis answers (retrying, and logging, until then): no AI call is served before its quota counts.
  await redis.connect();
  const messaging = new MessagingGateway(config.MESSAGING_ADDR, auth, config.MESSAGING_DEADLINE_MS, log, config.GRPC_LB_POLICY, transport);
  const guard = new AddressGuard({ allow: config.AI_ALLOWED_PRIVATE_ADDRESSES, purpose: 'AI requests' });
  const deps: Deps = {
    config,
    pool,
    redis,
    log,
    box,
    quota: new DailyQuota(redis, config.REDIS_PREFIX),
    tokens: new DailyTokens(redis, config.REDIS_PREFIX, config.AI_DAILY_TOKENS_MAX),
    messaging,
    guard,
  };
  const server = new GrpcServer(log, auth, metrics).readiness({
    postgres: () => databaseAnswers(pool),
    rabbitmq: () => brokerConnected([relay]),
    redis: () => redisAnswers(redis),
  });
  server.add(serviceDefinition(loadProto('ai/v1/ai.proto'), 'ai.v1.AiService'), aiHandlers(deps));
  server.add(serviceDefinition(loadProto('ai/v1/knowledge.proto'), 'ai.v1.KnowledgeService'), knowledgeHandlers(deps));
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT, transport);
  log.info({ port, allowedPrivate: config.AI_ALLOWED_PRIVATE_ADDRESSES.entries }, 'ai listening');
  const stop = async () => {
    await server.stop();
    await relay.stop();
    messaging.close();
    await closeRedisClient(redis);
    await pool.end();
  };
  return withMetricsServer(metrics, { port: config.METRICS_PORT, host: config.GRPC_HOST, log }, { port, stop });
}

/** The conventional entry every service exports, so the test stack and scripts can start any of them. */
export const start = startAi;
