import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { grpcTransportFromEnv, internalAuthFromEnv } from '@crm/grpc-kit';
import { createLogger, Logger } from '@crm/logger';
import { Metrics, startMetricsServer } from '@crm/metrics';
import { createClients } from './clients';
import type { GatewayConfig } from './config';
import { ApiKeyCache } from './http/api-key-cache';
import { ApiKeyUses } from './http/api-key-uses';
import { HttpDrain } from './http/drain';
import { authMiddleware, ipRateLimit } from './http/auth';
import { GrantRenewals } from './http/grant-renewals';
import { startAuthSync } from './http/auth-sync';
import { errorHandler, sendError } from './http/errors';
import { expressServer } from './http/express-server';
import { methodNotAllowed } from './http/method-not-allowed';
import { requestId } from './http/request-id';
import { RateLimiter, rateLimitRejections } from './http/rate-limiter';
import { requestMetrics } from './http/request-metrics';
import { routeTable } from './http/route-table';
import { inSequence } from './http/in-sequence';
import { whenRouted } from './http/router-guard';
import { securityHeaders } from './http/security-headers';
import { rejectUnsafeText } from './http/text-guard';
import { resumeTrace, traceRequests } from './http/tracing';
import { TokenRevocations } from './http/token-revocations';
import { closeRedis, createRedis } from './redis';
import type { RouteDeps } from './routes/deps';
import { healthRoutes } from './routes/health.routes';
import { docsRoutes } from './routes/docs.routes';
import { identityRoutes } from './routes/identity.routes';
import { pageRoutes } from './routes/pages.routes';
import { publicRoutes } from './routes/public.routes';
import { startRealtime } from './realtime/socket';
import { serviceRoutes } from './routes/services';

export { loadConfig } from './config';

export interface RunningGateway {
  port: number;
  url: string;
  server: http.Server;
  /** Every route the gateway serves (`{method, path}`), read from its router: what tests enumerate. */
  routes: { method: string; path: string }[];
  /** Port of the Prometheus `/metrics` listener. */
  metricsPort: number;
  stop(): Promise<void>;
}

export function buildApp(deps: RouteDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Express would hash every response body (SHA-1) for an ETag; API JSON is not revalidated by clients, so it is
  // waste on the hot path. Static pages keep theirs (express.static sets its own from the file's stat).
  app.set('etag', false);
  app.set('trust proxy', deps.config.TRUST_PROXY_HOPS);
  // First, so every response is timed, including the ones refused before routing (405, 401, 429). Every request
  // passes these, so they are one router layer (http/in-sequence.ts).
  app.use(inSequence(requestMetrics(app, deps.metrics), requestId, traceRequests, securityHeaders(), methodNotAllowed(app)));
  const services = serviceRoutes(deps);
  // Streamed routes first: their bodies must reach the proxy untouched, so no body parser may run before them.
  // Routers are mounted through whenRouted, those of one mount point together: a request skips, without entering
  // them, the routers that have no route for its path (http/router-guard.ts).
  const routersOf = (key: 'stream' | 'internal' | 'public' | 'root') => services.flatMap((m) => (m[key] ? [m[key]] : []));
  app.use('/api/v1', whenRouted(...routersOf('stream')));
  const json = express.json({ limit: deps.config.BODY_LIMIT });
  const ownParsers = services.flatMap((m) => (m.parsesOwnBody ? [m.parsesOwnBody] : []));
  app.use(inSequence((req, res, next) => (ownParsers.some((own) => own(req)) ? next() : json(req, res, next)), resumeTrace, rejectUnsafeText));

  app.use(whenRouted(healthRoutes(deps), pageRoutes(), docsRoutes(deps)));
  app.use('/api/v1', whenRouted(identityRoutes(deps)));
  // Each service's module mounts its internal routes under /api/v1 (bearer) and public ones under /api/public (API key).
  // The bearer check is mounted once, not per module: a request for the sixth module would otherwise be
  // authenticated (and rate-limit counted) six times on its way past the first five.
  app.use('/api/v1', deps.auth.bearer);
  app.use('/api/v1', whenRouted(...routersOf('internal')));
  app.use('/api/public', deps.auth.apiKey, whenRouted(publicRoutes(deps), ...routersOf('public')));
  app.use(whenRouted(...routersOf('root')));

  app.use((req, res) => sendError(res, 404, 'not_found', `No route for ${req.method} ${req.path}`));
  app.use(errorHandler(deps.log));
  return app;
}

export async function startGateway(config: GatewayConfig, log: Logger = createLogger('gateway', config.LOG_LEVEL)): Promise<RunningGateway> {
  // How it reaches the services: mutual TLS when GRPC_TLS_* is set. Bad certificates, or an http:// MESSAGING_HTTP_URL
  // under TLS, stop start-up before anything is opened.
  const transport = grpcTransportFromEnv(config, log);
  const streamAgent = transport.httpAgent(new URL(config.MESSAGING_HTTP_URL), 'MESSAGING_HTTP_URL');
  const redis = createRedis(config.REDIS_URL, log);
  await redis.connect();
  // The gateway's internal credential: it signs the verified caller into every gRPC call (bad keys stop start-up).
  const internalAuth = internalAuthFromEnv('gateway', config);
  const clients = createClients(config, internalAuth, transport);
  // Auth state in memory, kept current from Redis (see http/auth-sync.ts): loaded and subscribed before serving.
  const tokens = new TokenRevocations(redis, config.REDIS_PREFIX);
  const apiKeys = new ApiKeyCache(
    redis,
    config.REDIS_PREFIX,
    config.API_KEY_CACHE_MAX_ENTRIES,
    config.API_KEY_CACHE_SECONDS * 1000,
    config.API_KEY_INVALID_CACHE_SECONDS * 1000,
  );
  const sync = await startAuthSync({ redis, prefix: config.REDIS_PREFIX, resyncMs: config.REVOCATION_RESYNC_MS, tokens, apiKeys, log });
  const metrics = new Metrics('gateway');
  const rejected = rateLimitRejections(metrics);
  const limiter = new RateLimiter(redis, config.REDIS_PREFIX, config.RATE_LIMIT_FLUSH_MS, log);
  limiter.start();
  const auth = authMiddleware({
    redis,
    prefix: config.REDIS_PREFIX,
    jwtSecret: config.JWT_SECRET,
    identity: clients.identity,
    tokens,
    apiKeys,
    keyUses: new ApiKeyUses(clients.identity, log),
    sync,
    grants: new GrantRenewals(
      internalAuth,
      [
        { service: 'automation', renew: (grant, ctx) => clients.automation.RenewGrant({ grant }, ctx) },
        { service: 'messaging', renew: (grant, ctx) => clients.messaging.RenewGrant({ grant }, ctx) },
        { service: 'crm', renew: (grant, ctx) => clients.crm.RenewGrant({ grant }, ctx) },
        { service: 'connector', renew: (grant, ctx) => clients['chatnet-connector'].RenewGrant({ grant }, ctx) },
      ],
      log,
    ),
    limiter,
    apiKeyFailuresPerMinute: config.API_KEY_FAILURES_PER_MINUTE,
    userRatePerMinute: config.RATE_LIMIT_USER_PER_MINUTE,
    publicRatePerMinute: config.RATE_LIMIT_PUBLIC_PER_MINUTE,
    rejected,
  });
  const deps: RouteDeps = {
    config,
    clients,
    internalAuth,
    redis,
    log,
    auth,
    authLimit: ipRateLimit(redis, config.REDIS_PREFIX, config.RATE_LIMIT_AUTH_PER_MINUTE, rejected),
    linkLimit: ipRateLimit(redis, config.REDIS_PREFIX, config.RATE_LIMIT_LINKS_PER_MINUTE, rejected, 'email_links'),
    streamAgent,
    drain: new HttpDrain(),
    metrics,
  };
  const app = buildApp(deps);
  const server = expressServer(app);
  // Keep-alive longer than typical proxies' idle timeout so they never reuse a socket we just closed.
  server.keepAliveTimeout = 65_000;
  deps.drain.attach(server);
  const realtime = await startRealtime(server, { config, redis, sync, tokens, clients, log, metrics });
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const port = (server.address() as AddressInfo).port;
  // Peers may pass this instance's socket.io sessions on to it from now on (GATEWAY_PEER_HOST; realtime/session-peers.ts).
  await realtime.peers.announce(port);
  const scrapes = await startMetricsServer(metrics, { port: config.METRICS_PORT, host: config.METRICS_HOST, log });
  log.info({ port }, 'gateway listening');
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    server,
    routes: routeTable(app),
    metricsPort: scrapes.port,
    async stop() {
      // /readyz turns 503 first; then no new connections, and requests in flight get SHUTDOWN_TIMEOUT_MS to finish.
      await deps.drain.begin(config.SHUTDOWN_DELAY_MS);
      const drained = deps.drain.close(config.SHUTDOWN_TIMEOUT_MS);
      await scrapes.close();
      // Sockets are told to reconnect (to another gateway) at once: they are not requests that finish.
      await realtime.stop();
      await drained;
      clients.closeAll();
      streamAgent.destroy();
      // The last counts go to Redis before the connection closes.
      await limiter.stop();
      await sync.stop();
      await closeRedis(redis);
    },
  };
}

/** The conventional entry every service exports (see @crm/telemetry runService). */
export const start = startGateway;
