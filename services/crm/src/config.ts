import { fields, parseEnv, z } from '@crm/config';

const Env = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** This service's own database; created at start when missing. */
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_crm'),
  /** Connections in the PostgreSQL pool. */
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** RabbitMQ: the outbox relay publishes here and the consumers read message and friend-list events. */
  AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672'),
  /** Topic exchange shared by every service; also the prefix of this service's queue names. */
  EVENTS_EXCHANGE: z.string().min(1).default('crm.events'),
  /** gRPC bind address; keep it on loopback or a private network: callers are trusted by metadata. */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: fields.port(50052),
  /** identity's gRPC address: assignedUserId is checked with GetUser. */
  IDENTITY_ADDR: z.string().default('127.0.0.1:50051'),
  /** messaging's gRPC address: the contact detail lists its conversations. */
  MESSAGING_ADDR: z.string().default('127.0.0.1:50053'),
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
  LOG_LEVEL: fields.logLevel(),
  /** OTLP/HTTP endpoint for traces; tracing is off when unset. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
});

export type CrmConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): CrmConfig {
  return parseEnv(Env, env);
}
