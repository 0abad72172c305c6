import { fields, grpcClientEnv, grpcTlsEnv, internalAuthEnv, parseEnv, z } from '@crm/config';
import { allowListEnv } from '@crm/net-guard';

/** An optional vendor key from the environment: empty means unset (compose files pass `KEY=`). */
const optionalKey = z
  .string()
  .optional()
  .transform((v) => (v && v.trim() ? v.trim() : undefined));
const optionalUrl = z
  .string()
  .optional()
  .transform((v) => (v && v.trim() ? v.trim() : undefined))
  .pipe(
    z
      .string()
      .regex(/^https?:\/\/[^\s/]+/i, 'must be an http(s) URL')
      .optional(),
  );

const Env = z.object({
  ...internalAuthEnv,
  ...grpcTlsEnv,
  ...grpcClientEnv,
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** This service's own database; created at start when missing. */
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_ai'),
  /**
   * This database reached directly, for when DATABASE_URL goes through PgBouncer in transaction pooling: what holds a
   * session (LISTEN connections, migrations) connects here. Unset: DATABASE_URL (README: connection budget).
   */
  DATABASE_DIRECT_URL: fields.databaseDirectUrl(),
  /** Connections in this service's pool (the same setting in every service; README: connection budget). */
  DATABASE_POOL_SIZE: fields.databasePoolSize(10),
  /** Redis for the per-organization daily call counters. */
  REDIS_URL: fields.url('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key of this deployment (tests use a unique one). */
  REDIS_PREFIX: z.string().default('crm:'),
  /** RabbitMQ: the outbox relay publishes audit entries (provider and assistant settings changes) here. */
  AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672'),
  /** Topic exchange shared by every service. */
  EVENTS_EXCHANGE: z.string().min(1).default('crm.events'),
  /** gRPC bind address; keep it on loopback or a private network (callers also need a signed internal credential). */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: fields.port(50056),
  /** 32-byte key (base64 or hex) that encrypts the organizations' provider keys at rest. */
  ENCRYPTION_KEY: fields.secret(32),
  /** Former keys still needed to read old values, as "1:key,2:key" (rotation). */
  ENCRYPTION_KEYS_OLD: z.string().default(''),
  /** messaging's gRPC address: conversations and messages for drafts and summaries. */
  MESSAGING_ADDR: z.string().default('127.0.0.1:50053'),
  /** Deadline of each call to messaging, in milliseconds. */
  MESSAGING_DEADLINE_MS: z.coerce.number().int().min(100).default(3000),
  /** How long a provider may take to list its models (the gateway waits 15 s for the whole call). */
  AI_MODELS_TIMEOUT_MS: z.coerce.number().int().min(50).default(8000),
  /** How long a provider may take to answer a draft, summary or sentiment request before the local engine answers instead. */
  AI_COMPLETION_TIMEOUT_MS: z.coerce.number().int().min(50).default(25_000),
  /** Calls per organization per UTC day until an admin sets its own quota. */
  AI_DEFAULT_DAILY_QUOTA: z.coerce.number().int().min(1).max(1_000_000).default(500),
  /**
   * The most calls per UTC day an organization's admin may set (each call can spend the deployment's
   * vendor money); a stored quota above it (the cap was lowered) counts as the cap.
   */
  AI_DAILY_QUOTA_MAX: z.coerce.number().int().min(1).max(1_000_000).default(2000),
  /**
   * Vendor tokens (prompt and answer, as the vendor counts them) per organization per UTC day; past it the local
   * engine answers until midnight UTC. Calls are capped by the quota above, tokens by this: one long prompt costs
   * what many short ones do.
   */
  AI_DAILY_TOKENS_MAX: z.coerce.number().int().min(1).max(1_000_000_000).default(1_000_000),
  /**
   * Replace phone numbers, email addresses and ID numbers by placeholders before a prompt leaves for an outside
   * provider, and put them back into its answer (issue #32 item 6). The offline engine never needs it.
   */
  AI_REDACT_PII: fields.bool(true),
  /** Model lists (GET /ai/providers/:id/models, a vendor call each) per organization per minute. */
  AI_MODELS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
  /**
   * IPs/CIDRs an organization's own base URL may reach although private, loopback or link-local
   * (comma-separated, e.g. `10.0.0.5,192.168.0.0/16` for a self-hosted model server). Empty by default:
   * an organization's base URL must be a public address. The *_BASE_URL variables below are not checked.
   */
  AI_ALLOWED_PRIVATE_ADDRESSES: allowListEnv(),
  /** How many of a conversation's most recent messages go into drafts and summaries. */
  AI_CONTEXT_MESSAGES: z.coerce.number().int().min(1).max(200).default(40),
  /**
   * Deployment-wide vendor keys and base URLs. An organization's own key or base URL (set with
   * PUT /api/v1/ai/providers/:id) takes precedence; removing it makes these apply again. A deployment key
   * is only ever sent to these base URLs (or the vendor's default), never to an organization's own.
   */
  ANTHROPIC_API_KEY: optionalKey,
  ANTHROPIC_BASE_URL: optionalUrl,
  GEMINI_API_KEY: optionalKey,
  GEMINI_BASE_URL: optionalUrl,
  OPENAI_API_KEY: optionalKey,
  OPENAI_BASE_URL: optionalUrl,
  QWEN_API_KEY: optionalKey,
  QWEN_BASE_URL: optionalUrl,
  KIMI_API_KEY: optionalKey,
  KIMI_BASE_URL: optionalUrl,
  /** Prometheus `GET /metrics` listener, bound to GRPC_HOST (a private address); 0 picks a free port (tests). */
  METRICS_PORT: fields.port(9470),
  LOG_LEVEL: fields.logLevel(),
  /** OTLP/HTTP endpoint for traces; spans are exported only when set (trace context always propagates). */
  OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
});

// The default applies to every organization that has not chosen, so it must be one an admin could choose.
const Checked = Env.superRefine((c, ctx) => {
  if (c.AI_DEFAULT_DAILY_QUOTA > c.AI_DAILY_QUOTA_MAX) {
    ctx.addIssue({ code: 'custom', path: ['AI_DEFAULT_DAILY_QUOTA'], message: `must be at most AI_DAILY_QUOTA_MAX (${c.AI_DAILY_QUOTA_MAX})` });
  }
});

export type AiServiceConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): AiServiceConfig {
  return parseEnv(Checked, env);
}
