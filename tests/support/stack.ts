import { randomBytes } from 'node:crypto';
import type { Logger } from '@crm/logger';
import path from 'node:path';
import { createMigratedDatabase, dropTestDatabases, freePort, infra, internalAuthSeed, TestDatabase, uniqueName } from '@crm/testing';
import { nativeRequire } from './native';

// The services, the gateway and the packages whose state they share (the tracer, the declared queues, the metrics
// default) are loaded by Node's require, once per jest worker, not once per test file (native.ts says why).
const gateway = nativeRequire<typeof import('@crm/gateway')>('@crm/gateway');
const { createLogger } = nativeRequire<typeof import('@crm/logger')>('@crm/logger');
const { startTelemetry } = nativeRequire<typeof import('@crm/telemetry')>('@crm/telemetry');
const { declaredQueues } = nativeRequire<typeof import('@crm/events')>('@crm/events');
const { setProcessMetricsByDefault } = nativeRequire<typeof import('@crm/metrics')>('@crm/metrics');
// The clean-up too: clearing the Redis prefix loads node-redis (~420 modules) and the broker's clean-up amqplib, which
// jest would otherwise load again for every file. (This copy of @crm/testing is used for nothing else: the seed and
// the databases come from the file's own, which tests spy on.)
const { clearRedisPrefix, deleteRabbitPrefix } = nativeRequire<typeof import('@crm/testing')>('@crm/testing');

/**
 * A whole stack for one test file: each requested service started in-process on its own port with a
 * fresh database, one Redis prefix and one RabbitMQ exchange shared by all, and the gateway in front.
 * Everything it creates is removed by stop(), because the shared servers outlive the run.
 *
 * Every service package exports `loadConfig(env)` and `start(config, log) → {port, stop}` from its
 * main module; ports are chosen up front so services that call each other know every address.
 */
export type ServiceName = 'identity' | 'crm' | 'messaging' | 'chatnet-connector' | 'automation' | 'ai' | 'webhooks';

const ADDR_VAR: Record<ServiceName, string> = {
  identity: 'IDENTITY_ADDR',
  crm: 'CRM_ADDR',
  messaging: 'MESSAGING_ADDR',
  'chatnet-connector': 'CONNECTOR_ADDR',
  automation: 'AUTOMATION_ADDR',
  ai: 'AI_ADDR',
  webhooks: 'WEBHOOKS_ADDR',
};

interface ServiceModule {
  loadConfig(env: Record<string, string | undefined>): unknown;
  start(config: unknown, log: Logger): Promise<{ port: number; metricsPort: number; stop(): Promise<void> }>;
}

export interface Stack {
  url: string;
  /** The gateway's routes (`{method, path}`), read from its express router. */
  routes: { method: string; path: string }[];
  /** Environment shared by every service (Redis prefix, exchange, secrets, addresses). */
  env: Record<string, string>;
  /** gRPC address of a started service. */
  addr(name: ServiceName): string;
  /** The test database of a started service (for tests that must reach behind the API, e.g. to back-date rows). */
  databaseUrl(name: ServiceName): string;
  /** The port of a running service's (or the gateway's) Prometheus `/metrics` listener (METRICS_PORT=0: chosen at start). */
  metricsPort(name: ServiceName | 'gateway'): number;
  /**
   * Stop one service (to test restarts) and start it again on the same port and database; `env` adds or
   * overrides variables for this start (a changed setting across a restart).
   */
  restart(name: ServiceName, env?: Record<string, string>): Promise<void>;
  stopService(name: ServiceName): Promise<void>;
  startService(name: ServiceName, env?: Record<string, string>): Promise<void>;
  /** With captureErrors: the error (and fatal) lines logged so far, as JSON text. */
  errorLines(): string[];
  stop(): Promise<void>;
}

const MAX_ERROR_LINES = 200;

/** A pino destination keeping the lines at error level or above, the first MAX_ERROR_LINES of them. */
function errorCapture(lines: string[]) {
  return {
    write(line: string) {
      if (lines.length < MAX_ERROR_LINES && /"level":(5\d|60)\b/.test(line)) lines.push(line.trim());
    },
  };
}

export interface StackOptions {
  /** Services besides identity (always started). */
  services?: ServiceName[];
  /** Extra environment for every service and the gateway (e.g. SIGNUP_ENABLED). */
  env?: Record<string, string>;
  /** Extra environment for one service only. */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Extra environment for the gateway only. */
  gatewayEnv?: Record<string, string>;
  /**
   * Keep the error lines every service and the gateway log (in memory, at most 200), for a test to show when
   * it sees a 5xx: an errorId in a response then leads to its cause. The level stays TEST_LOG_LEVEL otherwise.
   */
  captureErrors?: boolean;
  /** The URL each service is given for its database (e.g. through a proxy in front of PostgreSQL); as created by default. */
  databaseUrl?: (url: string) => string;
  /**
   * DATABASE_DIRECT_URL for each service, from its database's URL: set, DATABASE_URL plays the transaction pooler and
   * this the server behind it (what holds a session connects here). Unset: not given, services use DATABASE_URL.
   */
  directDatabaseUrl?: (url: string) => string;
}

/**
 * The queues a test file declared with its own copy of @crm/events (jest's, loaded when the file imports it: an
 * EventConsumer standing for an earlier version, say), which the services' shared copy does not know of.
 */
function queuesTheFileDeclared(prefix: string): string[] {
  const loaded = require.cache[require.resolve('@crm/events')];
  return loaded ? (loaded.exports as typeof import('@crm/events')).declaredQueues(prefix) : [];
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  // As runService does in every process: trace context propagates (nothing is exported). Installed by the worker's
  // first stack (the services' copy of @crm/telemetry is shared); later calls find it installed.
  startTelemetry('test', undefined);
  // prom-client's process series keep hooks enabled for ever (a GC observer, an event-loop histogram): eight services
  // a file, file after file in one jest worker, ran on every GC and kept each file's module graph alive (metrics.ts).
  setProcessMetricsByDefault(false);
  const errorLines: string[] = [];
  const level = process.env.TEST_LOG_LEVEL ?? 'silent';
  // Captured lines go to memory only; a chosen TEST_LOG_LEVEL still writes everything to stdout as before.
  const log = opts.captureErrors && level === 'silent' ? createLogger('test', 'error', errorCapture(errorLines)) : createLogger('test', level);
  const names: ServiceName[] = ['identity', ...(opts.services ?? []).filter((n) => n !== 'identity')];
  const prefix = `${uniqueName('t')}:`;
  const ports = new Map<ServiceName, number>();
  for (const n of names) ports.set(n, await freePort());
  // messaging also serves attachment streams over HTTP; its port is fixed up front like the gRPC ones (restarts keep it).
  const messagingHttpPort = names.includes('messaging') ? await freePort() : undefined;
  const shared: Record<string, string> = {
    NODE_ENV: 'test',
    REDIS_URL: infra.redisUrl,
    AMQP_URL: infra.amqpUrl,
    REDIS_PREFIX: prefix,
    EVENTS_EXCHANGE: uniqueName('t_events'),
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    INTERNAL_AUTH_SEED: internalAuthSeed,
    GRPC_HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Each service's metrics listener on a free port: parallel stacks (and services of one stack) never collide.
    METRICS_PORT: '0',
    SIGNUP_ENABLED: 'true',
    // Three jest workers' stacks share the server with each other and with a developer's `npm start` (124 connections
    // at full load by itself): at the services' defaults (crm 30, messaging 24, webhooks 20…) the server's 100 filled
    // up beside `npm start` (98 seen). Ten each is room enough for any one test; a test about pool sizes sets its own.
    DATABASE_POOL_SIZE: '10',
    // A service this stack does not run points at a port nothing listens on (9, discard), never at its default: that is
    // where `npm start` runs it on the same machine, and a stack talking to another deployment's service fails strangely.
    ...Object.fromEntries(
      (Object.keys(ADDR_VAR) as ServiceName[]).map((n) => [ADDR_VAR[n], names.includes(n) ? `127.0.0.1:${ports.get(n)}` : '127.0.0.1:9']),
    ),
    // HTTPS when the stack runs with mutual TLS (GRPC_TLS_CA in `env`): the attachments port then refuses plain HTTP.
    MESSAGING_HTTP_URL: `${opts.env?.GRPC_TLS_CA ? 'https' : 'http'}://127.0.0.1:${messagingHttpPort ?? 9}`,
    ...opts.env,
  };
  const databases = new Map<ServiceName, TestDatabase>();
  const migratedDatabase = (name: ServiceName) =>
    createMigratedDatabase(name.replace(/-/g, '_'), path.join(__dirname, '..', '..', 'services', name, 'migrations'));
  const running = new Map<ServiceName, { metricsPort: number; stop(): Promise<void> }>();

  const startService = async (name: ServiceName, extraEnv?: Record<string, string>) => {
    if (!databases.has(name)) databases.set(name, await migratedDatabase(name));
    const mod = nativeRequire<ServiceModule>(`@crm/${name}`);
    const env = {
      ...shared,
      ...(name === 'messaging' ? { HTTP_PORT: String(messagingHttpPort) } : {}),
      ...opts.serviceEnv?.[name],
      ...extraEnv,
      DATABASE_URL: opts.databaseUrl ? opts.databaseUrl(databases.get(name)!.url) : databases.get(name)!.url,
      ...(opts.directDatabaseUrl ? { DATABASE_DIRECT_URL: opts.directDatabaseUrl(databases.get(name)!.url) } : {}),
      GRPC_PORT: String(ports.get(name)),
    };
    running.set(name, await mod.start(mod.loadConfig(env), log.child({ service: name })));
  };
  const stopService = async (name: ServiceName) => {
    await running.get(name)?.stop();
    running.delete(name);
  };

  /** Everything the stack made, removed: what stop() does, and what a start that fails half-way must do too. */
  const removeAll = async (gw?: { stop(): Promise<void> }) => {
    await gw?.stop().catch(() => undefined);
    for (const n of [...running.keys()].reverse()) await stopService(n).catch(() => undefined);
    await dropTestDatabases([...databases.values()]).catch(() => undefined);
    await clearRedisPrefix(prefix).catch(() => undefined);
    // Every service ran in this process: the queues they declared are known, the broker need not be asked (none known
    // would mean another copy of @crm/events declared them, e.g. after jest.resetModules: then the broker lists them).
    // Those the test file declared itself on the stack's exchange (an earlier version's queue, say) too.
    const queues = [...new Set([...declaredQueues(shared.EVENTS_EXCHANGE), ...queuesTheFileDeclared(shared.EVENTS_EXCHANGE)])];
    await deleteRabbitPrefix(infra.amqpUrl, shared.EVENTS_EXCHANGE, shared.EVENTS_EXCHANGE, queues.length > 0 ? queues : undefined).catch(
      () => undefined,
    );
  };

  let gw: Awaited<ReturnType<typeof gateway.startGateway>>;
  try {
    // The databases at once, each a copy of its service's schema (migrated once per run), then the services in order.
    // allSettled: a database still being made when another fails is dropped with the rest, not left behind.
    const made = await Promise.allSettled(names.map(async (n) => databases.set(n, await migratedDatabase(n))));
    const failed = made.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    for (const n of names) await startService(n);
    gw = await gateway.startGateway(
      gateway.loadConfig({ ...shared, HOST: '127.0.0.1', PORT: '0', SERVICES: names.join(','), ...opts.gatewayEnv }),
      log,
    );
  } catch (err) {
    // A start that fails half-way (PostgreSQL out of connections, say) must not leave the services it started running:
    // the test file's afterAll has no stack to stop, and their timers would go on in the jest worker that runs the next
    // files, failing against a torn-down environment in a loop.
    await removeAll();
    throw err;
  }

  return {
    url: gw.url,
    routes: gw.routes,
    env: shared,
    addr: (name) => `127.0.0.1:${ports.get(name)}`,
    databaseUrl: (name) => databases.get(name)!.url,
    metricsPort: (name) => {
      const port = name === 'gateway' ? gw.metricsPort : running.get(name)?.metricsPort;
      if (port === undefined) throw new Error(`${name} is not running`);
      return port;
    },
    startService,
    stopService,
    errorLines: () => [...errorLines],
    async restart(name, env) {
      await stopService(name);
      await startService(name, env);
    },
    stop: () => removeAll(gw),
  };
}
