import path from 'node:path';
import { directDatabaseUrl } from '@crm/config';
import { createPool, databaseAnswers, prepareDatabase } from '@crm/db';
import { brokerConnected, EventConsumer, installEventTables, OutboxRelay } from '@crm/events';
import { GrantKeeper, GrpcServer, grpcTransportFromEnv, internalAuthFromEnv, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { createLogger, Logger } from '@crm/logger';
import { Metrics, type RunningService, withMetricsServer } from '@crm/metrics';
import { identityChannel, identityDirectory, messagingBusinessHours, messagingConversations } from './clients';
import type { CrmConfig } from './config';
import type { Deps } from './deps';
import {
  chatnetFriendsHandler,
  compactContactCounts,
  ContactWriter,
  crmHandlers,
  INBOX_VISIBILITY_BINDINGS,
  inboxVisibilityHandler,
  TotalCache,
} from './contacts';
import { contactFamilyConsumer, messageFamilyConsumer } from './events';
import { messageActivity } from './activity';
import { contactFieldsFeature } from './custom-fields';
import { contactTransferFeature } from './contact-transfer';
import { integrationsFeature } from './integrations';
import { reportsFeature } from './reports';
import { scoringFeature } from './scoring';
import { analyticsFeature } from './analytics';
import { contactMergesFeature } from './merges';
import { chatnetPhoneCheckFeature } from './chatnet-check';
import { tasksFeature } from './tasks';

export { loadConfig } from './config';

const COUNT_COMPACT_EVERY_MS = 30_000;

export type { RunningService };

/** Create the database if needed, migrate, start the outbox relay and consumers, and serve gRPC. */
export async function startCrm(config: CrmConfig, log: Logger = createLogger('crm', config.LOG_LEVEL)): Promise<RunningService> {
  // This service's internal credential: verifies every incoming call, signs its own calls (bad keys stop start-up).
  const auth = internalAuthFromEnv('crm', config);
  // How its gRPC server and clients connect: mutual TLS when GRPC_TLS_* is set (bad certificates stop start-up too).
  const transport = grpcTransportFromEnv(config, log);
  // Over the direct connection: a migration run holds its session (an advisory lock across transactions).
  await prepareDatabase(directDatabaseUrl(config), path.join(__dirname, '..', 'migrations'), log);
  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  await installEventTables(pool);

  // The gateway's grant per org (org_grants): the origin of the calls crm makes on its own (issue #27).
  const grants = new GrantKeeper(pool, auth, 'crm');
  const identity = identityChannel(config.IDENTITY_ADDR, auth, config.IDENTITY_DEADLINE_MS, config.GRPC_LB_POLICY, transport, grants);
  const metrics = new Metrics('crm');
  // Scoring first: the contact writer records scoring facts in the transaction of each contact change.
  const scoring = scoringFeature({ config, pool, log });
  const deps: Deps = {
    config,
    pool,
    log,
    identity,
    grants,
    users: identityDirectory(identity),
    conversations: messagingConversations(config.MESSAGING_ADDR, auth, config.MESSAGING_DEADLINE_MS, log, config.GRPC_LB_POLICY, transport),
    businessHours: messagingBusinessHours(config.MESSAGING_ADDR, auth, config.MESSAGING_DEADLINE_MS, log, config.GRPC_LB_POLICY, transport),
    totals: new TotalCache(config.LIST_TOTAL_CACHE_MS, config.LIST_TOTAL_CACHE_MIN),
    contactWriter: new ContactWriter(scoring.recordFacts, scoring.newContacts),
    metrics,
  };

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
  const server = new GrpcServer(log, auth, metrics);
  server.add(serviceDefinition(loadProto('crm/v1/crm.proto'), 'crm.v1.CrmService'), crmHandlers(deps));
  contactFieldsFeature(deps, server);
  contactTransferFeature(deps, server);
  // Each feature adds its gRPC service now and owns its workers; started after the consumers, stopped before
  // the relay so whatever they enqueue on the way out is still published.
  scoring.serve(deps, server);
  const analytics = analyticsFeature(deps, server);
  const features = [
    integrationsFeature(deps, server),
    reportsFeature(deps, server),
    scoring,
    contactMergesFeature(deps, server),
    chatnetPhoneCheckFeature(deps, auth, transport),
    tasksFeature(deps, server),
  ];
  // One consumer per event family: the modules that react to an event apply it in one transaction. Separate
  // queues for friend lists (a large sync never holds up messages) and inbox visibility. Of crm's own events only
  // analytics reads contact changes back (a read model); scoring gets them from the contact writer.
  const consumers = [
    messageFamilyConsumer(deps, { activity: messageActivity(log), scoring: scoring.recordFacts, analytics: analytics.applyEvents }),
    contactFamilyConsumer(deps, { analytics: analytics.applyEvents }),
    new EventConsumer({
      amqpUrl: config.AMQP_URL,
      amqpUserPrefix: config.AMQP_USER_PREFIX,
      exchange: config.EVENTS_EXCHANGE,
      queue: `${config.EVENTS_EXCHANGE}.crm.inbox-visibility`,
      bindings: INBOX_VISIBILITY_BINDINGS,
      // Batches, one commit each (issue #28 item 2), in delivery order (one lane).
      batchHandler: inboxVisibilityHandler(log),
      parseData: true,
      logger: log,
      pool,
      metrics,
    }),
    new EventConsumer({
      amqpUrl: config.AMQP_URL,
      amqpUserPrefix: config.AMQP_USER_PREFIX,
      exchange: config.EVENTS_EXCHANGE,
      queue: `${config.EVENTS_EXCHANGE}.crm.chatnet-friends`,
      bindings: ['chatnet_account.friends'],
      handler: chatnetFriendsHandler(log, deps.contactWriter),
      parseData: true,
      logger: log,
      pool,
      prefetch: 10,
      metrics,
    }),
  ];

  try {
    await relay.start();
    for (const c of consumers) await c.start();
    for (const f of features) await f.start();
  } catch (err) {
    await Promise.all(consumers.map((c) => c.stop().catch(() => undefined)));
    for (const f of features) await f.stop().catch(() => undefined);
    await relay.stop().catch(() => undefined);
    await pool.end();
    throw err;
  }
  server.readiness({ postgres: () => databaseAnswers(pool), rabbitmq: () => brokerConnected([relay, ...consumers]) });
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT, transport);
  log.info({ port }, 'crm listening');
  // Keeps the per-org contact counter a handful of rows however many contacts are created.
  let compacting: Promise<unknown> | undefined;
  const compactor = setInterval(() => {
    compacting ??= compactContactCounts(pool)
      .catch((err) => log.warn({ err }, 'compacting contact counts failed'))
      .finally(() => (compacting = undefined));
  }, COUNT_COMPACT_EVERY_MS);
  compactor.unref();
  const stop = async () => {
    clearInterval(compactor);
    await server.stop();
    await compacting;
    for (const c of consumers) await c.stop();
    for (const f of features) await f.stop();
    await relay.stop();
    identity.close();
    deps.conversations.close();
    deps.businessHours.close();
    await pool.end();
  };
  return withMetricsServer(metrics, { port: config.METRICS_PORT, host: config.GRPC_HOST, log }, { port, stop });
}

/** The conventional entry every service exports, so the test stack and scripts can start any of them. */
export const start = startCrm;
