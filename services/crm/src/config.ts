import { brokerUserEnv, fields, grpcClientEnv, grpcTlsEnv, internalAuthEnv, parseEnv, z } from '@crm/config';

const Env = z.object({
  ...internalAuthEnv,
  ...grpcTlsEnv,
  ...grpcClientEnv,
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** This service's own database; created at start when missing. */
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_crm'),
  /**
   * This database reached directly, for when DATABASE_URL goes through PgBouncer in transaction pooling: what holds a
   * session (LISTEN connections, migrations) connects here. Unset: DATABASE_URL (README: connection budget).
   */
  DATABASE_DIRECT_URL: fields.databaseDirectUrl(),
  /**
   * Connections in the PostgreSQL pool: how many transactions (API writes, consumers' batches) run at once. 30, not
   * 10: a contact write is a short transaction of a few round trips, and on a busy machine each round trip waits
   * for a turn on the CPU, so 10 connections capped POST /api/public/contacts at about 190/s with CPU to spare
   * (bench/events: 315/s with 30). Mind PostgreSQL's max_connections across replicas.
   */
  DATABASE_POOL_SIZE: fields.databasePoolSize(30),
  /** RabbitMQ: the outbox relay publishes here and the consumers read message and friend-list events. */
  AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672'),
  ...brokerUserEnv,
  /** Topic exchange shared by every service; also the prefix of this service's queue names. */
  EVENTS_EXCHANGE: z.string().min(1).default('crm.events'),
  /** gRPC bind address; keep it on loopback or a private network (callers also need a signed internal credential). */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: fields.port(50052),
  /** identity's gRPC address: assignedUserId is checked with GetUser. */
  IDENTITY_ADDR: z.string().default('127.0.0.1:50051'),
  /** messaging's gRPC address: the contact detail lists its conversations. */
  MESSAGING_ADDR: z.string().default('127.0.0.1:50053'),
  /** The chat-network connector's gRPC address: contacts' phone numbers are looked up on the network through it (hasChatnet). */
  CONNECTOR_ADDR: z.string().default('127.0.0.1:50054'),
  /** Deadline of one phone lookup (ms); past it the lookup counts as failed and the org's numbers are tried later. */
  CONNECTOR_DEADLINE_MS: z.coerce.number().int().min(50).default(3000),
  /** Look contacts' phone numbers up on the chat network in this instance (off: hasChatnet=unknown stays until an instance with it on runs). */
  CHATNET_PHONE_CHECK: fields.bool(true),
  /** Least time between two phone lookups of one organization (ms): the network limits lookups per account. */
  CHATNET_PHONE_CHECK_INTERVAL_MS: z.coerce.number().int().min(0).default(2000),
  /** Contacts claimed per organization at a time (each claim is held for a batch's worth of lookups). */
  CHATNET_PHONE_CHECK_BATCH_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  /** Organizations whose numbers one instance checks at once. */
  CHATNET_PHONE_CHECK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** How often the phone check looks for due retries and lapsed claims besides NOTIFY wake-ups (ms). */
  CHATNET_PHONE_CHECK_POLL_MS: z.coerce.number().int().min(100).default(10_000),
  /** First wait when the org has no connected account or the lookup failed; doubles per consecutive miss up to the max (ms). */
  CHATNET_PHONE_CHECK_RETRY_MS: z.coerce.number().int().min(10).default(30_000),
  CHATNET_PHONE_CHECK_RETRY_MAX_MS: z.coerce.number().int().min(10).default(600_000),
  /** Deadline of a GetUser call (ms); identity not answering in time is a 503 for the caller. */
  IDENTITY_DEADLINE_MS: z.coerce.number().int().min(50).default(2000),
  /** Deadline of a ContactConversations call (ms); past it the detail shows no conversations and logs a warning. */
  MESSAGING_DEADLINE_MS: z.coerce.number().int().min(50).default(800),
  /** Country assumed for phone numbers written without an international prefix (ISO 3166 alpha-2). */
  PHONE_DEFAULT_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be a two-letter country code such as VN')
    .default('VN'),
  /** How long a large filtered list total may be reused (ms; 0 counts every time). See db/total-cache.ts. */
  LIST_TOTAL_CACHE_MS: z.coerce.number().int().min(0).max(300_000).default(10_000),
  /** Totals below this are always counted exactly. */
  LIST_TOTAL_CACHE_MIN: z.coerce.number().int().min(1).default(1000),
  /** Lead scoring: how often each decaying org's scores are brought up to date (ms). */
  SCORING_SWEEP_MS: z.coerce.number().int().min(1000).default(600_000),
  /** Lead scoring: how often the worker looks for orgs to recompute (changes made through other replicas) or sweep (ms). */
  SCORING_TICK_MS: z.coerce.number().int().min(100).default(5000),
  /** Lead scoring: how long the conditions an org's rules use are cached per org (ms; 0 reads them for every event). A rule change made through another replica is seen within this. */
  SCORING_RULES_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  /** Lead scoring: contacts per transaction in recomputes and sweeps. */
  SCORING_BATCH_SIZE: z.coerce.number().int().min(10).max(10_000).default(1000),
  /** Generate custom reports in this instance (off: reports stay generating until an instance with it on runs). */
  REPORTS_WORKER: fields.bool(true),
  /** Most rows a report's CSV may have; a larger result fails the report, naming the limit. */
  REPORT_MAX_ROWS: z.coerce.number().int().min(1).max(1_000_000).default(100_000),
  /** Reports generated at once by this instance. */
  REPORT_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  /** How often the worker looks for reports besides NOTIFY wake-ups (ms). */
  REPORT_POLL_MS: z.coerce.number().int().min(100).default(5000),
  /** A claimed report's lease (ms): another instance takes it over after this if its worker died. The report's query may run for half of it. */
  REPORT_LEASE_MS: z.coerce.number().int().min(2000).default(120_000),
  /** 32-byte key (base64 or hex) for social-network page tokens at rest; ENCRYPTION_KEYS_OLD ("1:key,2:key") decrypts older versions. */
  ENCRYPTION_KEY: z.string({ error: 'is required' }).min(32, 'must be a 32-byte key (base64 or 64 hex characters)'),
  ENCRYPTION_KEYS_OLD: z.string().default(''),
  /** Which social network integrations talk to: the built-in simulated one (pages, forms, leads in this database) or a Graph-API-style HTTPS network. */
  SOCIALNET_DRIVER: z.enum(['sandbox', 'graph']).default('sandbox'),
  /** Base URL of the graph network's API, e.g. https://graph.example.com/v19.0; required with SOCIALNET_DRIVER=graph. */
  SOCIALNET_GRAPH_URL: z.string().url().optional(),
  /** Per request to the graph network (ms); past it the network counts as unavailable and a sync retries later. */
  SOCIALNET_HTTP_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /** Leads fetched per page of a lead sync, each page imported in one transaction (the unit a restart resumes from). */
  SOCIALNET_PAGE_SIZE: z.coerce.number().int().min(1).max(500).default(100),
  /** Lead syncs one instance works on at once. */
  SOCIALNET_SYNC_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  /** How often the sync worker looks for due retries and lapsed claims besides NOTIFY wake-ups (ms). */
  SOCIALNET_POLL_MS: z.coerce.number().int().min(100).default(5000),
  /** A claimed sync's lease (ms): another instance resumes it after this if its worker died mid-sync. */
  SOCIALNET_LEASE_MS: z.coerce.number().int().min(2000).default(60_000),
  /** First wait after a failed attempt (network unavailable, rate limited); doubles per attempt up to the max (ms). */
  SOCIALNET_RETRY_BASE_MS: z.coerce.number().int().min(10).default(2000),
  SOCIALNET_RETRY_MAX_MS: z.coerce.number().int().min(10).default(300_000),
  /** Consecutive failed attempts after which a sync fails. */
  SOCIALNET_SYNC_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(10),
  /** Prometheus `GET /metrics` listener, bound to GRPC_HOST (a private address); 0 picks a free port (tests). */
  METRICS_PORT: fields.port(9466),
  LOG_LEVEL: fields.logLevel(),
  /** OTLP/HTTP endpoint for traces; spans are exported only when set (trace context always propagates). */
  OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
});

export type CrmConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): CrmConfig {
  return parseEnv(Env, env);
}
