import { brokerUserEnv, fields, grpcTlsEnv, internalAuthEnv, parseEnv, smtpEnv, z } from '@crm/config';

const Env = z.object({
  ...internalAuthEnv,
  ...grpcTlsEnv,
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** This service's own database; created at start when missing. */
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_identity'),
  /**
   * This database reached directly, for when DATABASE_URL goes through PgBouncer in transaction pooling: what holds a
   * session (migrations) connects here. Unset: DATABASE_URL (README: connection budget).
   */
  DATABASE_DIRECT_URL: fields.databaseDirectUrl(),
  /** Connections in this service's pool (the same setting in every service; README: connection budget). */
  DATABASE_POOL_SIZE: fields.databasePoolSize(10),
  /**
   * RabbitMQ: identity consumes audit.recorded from the other services into the audit log, and publishes its outbox
   * (user.availability_changed, user.deactivated).
   */
  AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672'),
  ...brokerUserEnv,
  /** Topic exchange shared by every service; also the prefix of this service's queue names. */
  EVENTS_EXCHANGE: z.string().min(1).default('crm.events'),
  /** Audit-log entries older than this many days are deleted by a periodic sweep. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(180),
  /** How often the audit-log retention sweep runs (ms). */
  AUDIT_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).default(3_600_000),
  /**
   * How long a user may have no socket connected to any gateway before they count as offline, whatever they chose
   * (ms; issue #29 item 4). Tests shorten it.
   */
  AVAILABILITY_OFFLINE_AFTER_MS: z.coerce.number().int().min(100).default(300_000),
  /** Redis for login throttling and the token/API-key revocation keys the gateway reads. */
  REDIS_URL: fields.url('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key of this deployment (tests use a unique one). */
  REDIS_PREFIX: z.string().default('crm:'),
  /** gRPC bind address; keep it on loopback or a private network (callers also need a signed internal credential). */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: fields.port(50051),
  /** HS256 signing key for access tokens, shared with the gateway. */
  JWT_SECRET: fields.secret(32),
  /** Access-token lifetime in seconds. */
  ACCESS_TOKEN_TTL: z.coerce.number().int().min(60).max(86_400).default(900),
  /**
   * How long identity's answer about an API key is cached in Redis for every gateway (identity alone writes those
   * entries): a good key, and a refused one. Keep them in step with the gateway's settings of the same names.
   */
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  API_KEY_INVALID_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** Refresh-token lifetime in days. */
  REFRESH_TOKEN_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  /** Let anyone create more organizations through POST /auth/signup. */
  SIGNUP_ENABLED: fields.bool(false),
  /** Public address used in invitation links. */
  PUBLIC_URL: fields.url('http://localhost:8080'),
  /**
   * Invitation mail (SMTP_URL, MAIL_FROM, SMTP_TIMEOUT_MS). Without SMTP_URL no mail is sent and POST /users
   * answers invitationSent false with the link for the admin to share.
   */
  ...smtpEnv,
  /**
   * Failed logins allowed per email+IP within 15 minutes (consecutive), and per email+IP within a day (the daily
   * lock). Both per account and address: one attacker behind a shared address (an office, a proxy) locks out only
   * what they try, never everyone's sign-in or a victim's account from their own address.
   */
  LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).default(10),
  LOGIN_MAX_FAILURES_PER_DAY: z.coerce.number().int().min(1).default(100),
  /** Prometheus `GET /metrics` listener, bound to GRPC_HOST (a private address); 0 picks a free port (tests). */
  METRICS_PORT: fields.port(9465),
  LOG_LEVEL: fields.logLevel(),
  /** OTLP/HTTP endpoint for traces; spans are exported only when set (trace context always propagates). */
  OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
});

export type IdentityConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): IdentityConfig {
  return parseEnv(Env, env);
}
