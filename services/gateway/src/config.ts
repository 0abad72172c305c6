import { isIP } from 'node:net';
import { brokerUserEnv, ConfigError, fields, grpcClientEnv, grpcTlsEnv, internalAuthEnv, parseEnv, z } from '@crm/config';

const address = (fallback: string) => z.string().default(fallback);
/** A DNS name: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

const Env = z.object({
  ...internalAuthEnv,
  ...grpcTlsEnv,
  ...grpcClientEnv,
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** HTTP bind address and port: the single URL clients use. */
  HOST: z.string().default('0.0.0.0'),
  PORT: fields.port(8080),
  /** gRPC addresses of the services behind the gateway (host:port). */
  IDENTITY_ADDR: address('127.0.0.1:50051'),
  CRM_ADDR: address('127.0.0.1:50052'),
  MESSAGING_ADDR: address('127.0.0.1:50053'),
  CONNECTOR_ADDR: address('127.0.0.1:50054'),
  AUTOMATION_ADDR: address('127.0.0.1:50055'),
  AI_ADDR: address('127.0.0.1:50056'),
  WEBHOOKS_ADDR: address('127.0.0.1:50057'),
  /** The chat-network driver the connector runs (same variable, same default): sandbox control routes exist only with `sandbox`. */
  CHATNET_DRIVER: z.enum(['sandbox', 'zca']).default('sandbox'),
  /** messaging's HTTP endpoint: attachment uploads and downloads are proxied there as streams. */
  MESSAGING_HTTP_URL: z.string().url().default('http://127.0.0.1:50063'),
  /** Comma-separated names of the services this deployment runs; /readyz waits for all of them. */
  SERVICES: z.string().default('identity'),
  REDIS_URL: fields.url('redis://127.0.0.1:6379'),
  /** RabbitMQ: the gateway consumes events to push them to socket.io clients. */
  AMQP_URL: z.string().default('amqp://guest:guest@127.0.0.1:5672'),
  ...brokerUserEnv,
  EVENTS_EXCHANGE: z.string().default('crm.events'),
  /**
   * Origins allowed to open socket.io connections from a browser, comma-separated, or * for any. Empty (the default):
   * only pages served by the gateway itself; clients that send no Origin (servers, scripts) are not browsers and may.
   */
  CORS_ORIGINS: z.string().default(''),
  /** Live socket.io connections one user may hold at once, across every gateway instance. */
  SOCKETS_PER_USER: z.coerce.number().int().min(1).max(1000).default(10),
  /** `join` requests one socket may make within 10 seconds. */
  SOCKET_JOINS_PER_10S: z.coerce.number().int().min(1).max(1000).default(20),
  REDIS_PREFIX: z.string().default('crm:'),
  /** Verifies access tokens signed by identity (HS256). */
  JWT_SECRET: fields.secret(32),
  /** Requests per minute: per API key on /api/public, per signed-in user on /api/v1, per IP on sign-in routes. */
  RATE_LIMIT_PUBLIC_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  RATE_LIMIT_USER_PER_MINUTE: z.coerce.number().int().min(1).default(3000),
  RATE_LIMIT_AUTH_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /**
   * Requests per minute per IP to the links in campaign emails (unsubscribe pages, open pixels): their own bucket, so
   * a mail scanner fetching every link of a campaign never uses up sign-in's, and a flood of link requests signs
   * nobody out of signing in.
   */
  RATE_LIMIT_LINKS_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  /**
   * How often the per-user and per-key request counts go to Redis, in milliseconds (they are counted in process and
   * decided without a round trip). The bound on overshoot across N gateways grows with it: see http/rate-limiter.ts.
   */
  RATE_LIMIT_FLUSH_MS: z.coerce.number().int().min(10).max(1000).default(100),
  /**
   * How often the in-memory revocations and API-key cache check Redis for a change they missed (one GET when
   * nothing changed), in milliseconds: the bound on how long a missed logout or key rotation message goes unnoticed.
   */
  REVOCATION_RESYNC_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /** Seconds an API key's grant (org, user, role, scopes) is cached in process (identity's setting of the same name: in Redis). */
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  /** Most API keys (valid or refused) held in each gateway's in-process cache; the least recently used go first. */
  API_KEY_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).default(10_000),
  /** Seconds a key identity refused is remembered as invalid in process, so repeats of it never reach identity. */
  API_KEY_INVALID_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** Failed API-key checks per client address per minute; beyond it the address gets 429 without identity being asked. */
  API_KEY_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(100),
  /** Largest JSON body accepted (attachment uploads are streamed to messaging and not bound by it). */
  BODY_LIMIT: z.string().default('1mb'),
  /**
   * Largest body of a sandbox inbound push (its files travel as base64), read only after the bearer check. The
   * connector takes gRPC messages of up to 32 MB, so a push carries about 22 MB of files at most.
   */
  SANDBOX_BODY_LIMIT: z.string().default('30mb'),
  /** Most data rows one contacts CSV import takes (POST /contacts/import); the rows after it are counted as failed, not imported. */
  CONTACTS_IMPORT_MAX_ROWS: z.coerce.number().int().min(1).default(50_000),
  /** Largest contacts CSV read, in bytes; reading stops there, the rows before it stay imported (64 MB: far above 50,000 rows). */
  CONTACTS_IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024 * 1024 * 1024)
    .default(64 * 1024 * 1024),
  /**
   * Trust X-Forwarded-For from this many proxy hops (0 = the socket address is the client). Behind a load balancer or
   * Ingress left at 0, every client shares the proxy's address: one attacker then spends everybody's sign-in limit.
   * Production must set it explicitly (deploy/k8s: 1, the Ingress controller; compose: 0, the gateway is published).
   */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).default(0),
  /**
   * The address clients reach the gateway at: the `servers` entry of the OpenAPI documents. Never taken from the
   * request's Host header, which any client sets (a document pointing integrators at another host).
   */
  PUBLIC_URL: fields.url('http://localhost:8080'),
  /**
   * How often each gateway re-checks its live sockets' tokens against the revocation keys, in milliseconds: the
   * bound on how long a socket outlives its access when the pub/sub revocation message was missed.
   */
  SOCKET_SESSION_RESYNC_MS: z.coerce.number().int().min(100).max(300_000).default(5000),
  /**
   * How long an org's inbox visibility and account user lists stay cached for socket routing. Changes drop the
   * entry at once through events; this bounds staleness only when such an event was missed.
   */
  SOCKET_AUDIENCE_CACHE_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /**
   * Where the other gateway instances reach this one (a host name or IP, no port: the port is PORT's), e.g. the pod's IP
   * in Kubernetes. Set wherever several instances share one address: a socket.io request that a balancer sent to
   * another instance than the one holding its session is passed on to it (realtime/session-peers.ts). Empty (the
   * default, one instance): never passed on.
   */
  GATEWAY_PEER_HOST: z
    .string()
    .trim()
    .refine((h) => h === '' || isIP(h) !== 0 || HOST_NAME.test(h), 'a host name or an IP address, without scheme or port')
    .default(''),
  /** Deadline of each gRPC call, in milliseconds. */
  GRPC_DEADLINE_MS: z.coerce.number().int().min(100).default(10_000),
  /** Deadline of a send that carries files (they are streamed to the chat network before the send answers). */
  GRPC_FILE_SEND_DEADLINE_MS: z.coerce.number().int().min(100).default(130_000),
  /**
   * On SIGTERM, how long /readyz answers 503 while requests are still accepted, in milliseconds: time for a load
   * balancer or Kubernetes endpoints to stop routing here before the listener closes (deploy/k8s sets 5000).
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  /** Then how long requests in flight get to finish before their connections are cut, in milliseconds. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(300_000).default(10_000),
  /** Prometheus `GET /metrics` listener (its own port, never the public one); 0 picks a free port (tests). */
  METRICS_PORT: fields.port(9464),
  /** Where that listener binds: loopback by default, because HOST faces clients; compose sets 0.0.0.0 on its private network. */
  METRICS_HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: fields.logLevel(),
  /**
   * Check each declared route's success body against its documented schema (http/response-contract.ts): `strict`
   * answers 500 on a mismatch; `auto` is strict under NODE_ENV=test and off otherwise (a parse per response).
   */
  RESPONSE_CONTRACT: z.enum(['auto', 'off', 'strict']).default('auto'),
  /** OTLP/HTTP endpoint for traces; spans are exported only when set (trace context always propagates). */
  OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
});

export type GatewayConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): GatewayConfig {
  // Named beside production's other problems, so one start lists them all.
  const hops =
    env.NODE_ENV === 'production' && !env.TRUST_PROXY_HOPS?.trim()
      ? '  TRUST_PROXY_HOPS: must be set in production: the number of proxies in front of the gateway (0 when clients connect to it directly)'
      : undefined;
  let config: GatewayConfig;
  try {
    config = parseEnv(Env, env);
  } catch (err) {
    if (hops && err instanceof ConfigError) throw new ConfigError(`${err.message}\n${hops}`);
    throw err;
  }
  if (hops) throw new ConfigError(`Invalid configuration:\n${hops}`);
  return config;
}

/**
 * Whether the sandbox control routes (`/sandbox/...`) are mounted: never in production, and the chat
 * network's only with its sandbox driver. The services refuse the calls too; not mounting them keeps a
 * production gateway from even admitting they exist.
 */
export function sandboxRoutesEnabled(config: Pick<GatewayConfig, 'NODE_ENV'>): boolean {
  return config.NODE_ENV !== 'production';
}

export function chatnetSandboxEnabled(config: Pick<GatewayConfig, 'NODE_ENV' | 'CHATNET_DRIVER'>): boolean {
  return sandboxRoutesEnabled(config) && config.CHATNET_DRIVER === 'sandbox';
}
