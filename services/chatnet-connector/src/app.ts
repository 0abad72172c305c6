import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { SecretBox } from '@crm/crypto';
import { directDatabaseUrl } from '@crm/config';
import { createPool, databaseAnswers, prepareDatabase } from '@crm/db';
import { brokerConnected, DirectPublisher, installEventTables, OutboxRelay } from '@crm/events';
import { createServiceClient, GrantKeeper, GrpcServer, grpcTransportFromEnv, internalAuthFromEnv, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { createLogger, Logger } from '@crm/logger';
import { Metrics, type RunningService as StartedService, withMetricsServer } from '@crm/metrics';
import { AddressGuard, parseAllowList } from '@crm/net-guard';
import { type ConnectorConfig, sandboxControlEnabled } from './config';
import type { Deps } from './deps';
import { type ChatnetDriver, dialThrough, MediaDownloads, RemoteSandboxDriver, RemoteSandboxLive, SandboxDriver, SandboxNetwork } from './drivers';
import { NewsPublisher, OutboxBatcher } from './events';
import { MessagingFiles } from './files';
import { recordAccepted } from './friend-requests';
import { connectorHandlers, peerHandlers } from './grpc';
import { OwnerDirectory } from './owners';
import { Leases, Peers, SessionPool, sessionMetrics } from './pool';
import { connectRedis } from './redis';

export { loadConfig } from './config';

/** What start() answers: the shared RunningService and what this service adds. */
export interface RunningService extends StartedService {
  instanceId: string;
}

/**
 * Create the database if needed, migrate, serve gRPC, start the outbox relay and the session pool.
 * Used by main.ts and by tests in-process.
 */
export async function startConnector(
  config: ConnectorConfig,
  log: Logger = createLogger('chatnet-connector', config.LOG_LEVEL),
): Promise<RunningService> {
  // Fail at start, not at the first login, when the key is unusable.
  const box = SecretBox.fromEnv(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_OLD);
  // This service's internal credential: verifies every incoming call, signs its own calls (bad keys stop start-up).
  const auth = internalAuthFromEnv('connector', config);
  // How its gRPC server and clients connect: mutual TLS when GRPC_TLS_* is set (bad certificates stop start-up too).
  const transport = grpcTransportFromEnv(config, log);
  // messaging's attachments port is HTTPS with client certificates under the same TLS: an http:// URL stops start-up here.
  const filesAgent = transport.httpAgent(new URL(config.MESSAGING_HTTP_URL), 'MESSAGING_HTTP_URL');
  // Over the direct connection: a migration run holds its session (an advisory lock across transactions).
  await prepareDatabase(directDatabaseUrl(config), path.join(__dirname, '..', 'migrations'), log);
  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  await installEventTables(pool);
  const redis = await connectRedis(config.REDIS_URL, log);
  const instanceId = randomUUID();
  const leases = new Leases(redis, config.REDIS_PREFIX, instanceId, config.LEASE_TTL_MS);
  const guard = new AddressGuard({ allow: config.CONNECTOR_ALLOWED_PRIVATE_ADDRESSES, purpose: 'proxy connections' });
  let sandbox: Deps['sandbox'];
  let driver: ChatnetDriver;
  let media: MediaDownloads | undefined;
  let remoteLive: RemoteSandboxLive | undefined;
  if (config.CHATNET_DRIVER === 'sandbox' && config.CHATNET_SANDBOX_URL) {
    // The network in its own process: sessions reach it over WebSocket; the control routes push through its HTTP port
    // and read what it stores in Redis (same prefix).
    const remote = new RemoteSandboxDriver(config.CHATNET_SANDBOX_URL, config.QR_TTL_MS, config.QR_MAX_REFRESHES);
    remoteLive = new RemoteSandboxLive(config.CHATNET_SANDBOX_URL, (accountId) => remote.cutOf(accountId));
    sandbox = { network: new SandboxNetwork(redis, config.REDIS_PREFIX), live: remoteLive };
    driver = remote;
  } else if (config.CHATNET_DRIVER === 'sandbox') {
    const network = new SandboxNetwork(redis, config.REDIS_PREFIX);
    sandbox = { network, live: network };
    driver = new SandboxDriver(network, config.QR_TTL_MS, config.QR_MAX_REFRESHES);
  } else {
    // Loaded only for the real network: zca-js and its dependencies are a sixth of what every service loads, paid by
    // each start (and each test's stack) on the sandbox driver for nothing.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ZcaDriver } = require('./zca') as typeof import('./zca');
    // The network's media hosts are public: no private address is allowed for downloads, whatever proxies may use.
    const mediaGuard = new AddressGuard({ allow: parseAllowList(''), purpose: 'inbound file downloads' });
    media = new MediaDownloads({ hosts: config.CHATNET_MEDIA_HOSTS, guard: mediaGuard, maxBytes: config.ATTACHMENT_MAX_BYTES });
    driver = new ZcaDriver({ qrMaxRefreshes: config.QR_MAX_REFRESHES, log, proxy: (proxyUrl) => dialThrough(proxyUrl, guard), media });
  }
  const identity = createServiceClient(
    serviceDefinition(loadProto('identity/v1/identity.proto'), 'identity.v1.IdentityService'),
    config.IDENTITY_ADDR,
    auth,
    3000,
    config.GRPC_LB_POLICY,
    transport,
  );
  const metrics = new Metrics('chatnet-connector');
  // Inbound messages go straight to the broker with publisher confirms; the other network news (read receipts, recalls,
  // reactions), and messages while the broker does not confirm, reach the outbox in batches (one statement for what
  // arrives within a few ms).
  const direct = new DirectPublisher({
    stamps: auth,
    amqpUrl: config.AMQP_URL,
    exchange: config.EVENTS_EXCHANGE,
    logger: log,
    confirmTimeoutMs: config.INBOUND_CONFIRM_TIMEOUT_MS,
  });
  const news = new NewsPublisher({
    direct,
    outbox: new OutboxBatcher({ pool, log, maxEvents: config.INBOUND_BATCH_SIZE, maxWaitMs: config.INBOUND_BATCH_WAIT_MS }),
    pool,
    log,
    maxEvents: config.INBOUND_BATCH_SIZE,
    maxWaitMs: config.INBOUND_BATCH_WAIT_MS,
    drainWaitMs: config.INBOUND_CONFIRM_TIMEOUT_MS,
    metrics,
  });
  // The gateway's grant per org (org_grants): the origin of the received files the connector stores (issue #27).
  const grants = new GrantKeeper(pool, auth, 'connector');
  const files = new MessagingFiles(config.MESSAGING_HTTP_URL, auth, filesAgent, grants);
  const onFriendAccepted = async (orgId: string, accountId: string, uid: string, traceparent: string | undefined) => {
    await recordAccepted(pool, orgId, accountId, uid, traceparent);
  };
  const sessions = new SessionPool({ config, pool, redis, log, box, driver, leases, news, files, onFriendAccepted });
  // Peers are dialled at a pod address or container id no certificate names: each must hold a connector certificate.
  const peers = new Peers(leases, auth, transport.expecting('chatnet-connector'));
  const deps: Deps = {
    config,
    pool,
    redis,
    log,
    box,
    driver,
    // The driver keeps its simulated network either way; only the control RPCs depend on this.
    sandbox: sandboxControlEnabled(config) ? sandbox : undefined,
    leases,
    peers,
    sessions,
    owners: new OwnerDirectory(identity, config.OWNER_CACHE_SECONDS, log),
    files,
    guard,
    grants,
  };

  sessionMetrics(metrics, sessions);
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
  await relay.start();
  // Before the sessions start; a broker that cannot be reached only means the outbox takes the messages meanwhile.
  await direct.start();

  const server = new GrpcServer(log, auth, metrics).readiness({
    postgres: () => databaseAnswers(pool),
    rabbitmq: () => brokerConnected([relay]),
    // Not connected fails at once: a queued PING would only wait for the reconnect.
    redis: async () => {
      if (!redis.isReady) throw new Error('Redis is not connected');
      await redis.ping();
    },
  });
  const proto = loadProto('connector/v1/connector.proto');
  server.add(serviceDefinition(proto, 'connector.v1.ConnectorService'), connectorHandlers(deps));
  server.add(serviceDefinition(proto, 'connector.v1.ConnectorPeerService'), peerHandlers(deps));
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT, transport);
  const host = config.GRPC_HOST === '0.0.0.0' || config.GRPC_HOST === '::' ? os.hostname() : config.GRPC_HOST;
  const address = config.GRPC_ADVERTISE_ADDR ?? `${host}:${port}`;
  await sessions.start(address);
  log.info({ port, instanceId, driver: driver.name, address }, 'chatnet-connector listening');

  const stop = async () => {
    // Sessions first: their leases are handed back so another instance takes them over at once.
    await sessions.stop();
    await server.stop();
    // What the sessions handed over before closing is published or written before the broker links and the pool go.
    await news.close();
    await direct.stop();
    await relay.stop();
    await driver.close();
    media?.close();
    remoteLive?.close();
    peers.close();
    files.close();
    identity.close();
    await redis.close();
    await pool.end();
  };
  return withMetricsServer(metrics, { port: config.METRICS_PORT, host: config.GRPC_HOST, log }, { port, instanceId, stop });
}

/** The conventional entry every service exports, so the test stack and scripts can start any of them. */
export const start = startConnector;
