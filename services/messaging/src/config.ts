import path from 'node:path';
import { brokerUserEnv, fields, grpcClientEnv, grpcTlsEnv, internalAuthEnv, parseEnv, z } from '@crm/config';
import { DEFAULT_SEND_LIMITS, GovernorLimits, parseGovernorSpec } from './governor';

const durations = z
  .string()
  .regex(/^\s*\d+\s*(,\s*\d+\s*)*$/, 'must be comma-separated milliseconds, e.g. 1000,5000,30000')
  .transform((v) => v.split(',').map((n) => Number(n.trim())));

const governor = z.string().transform((value, ctx): GovernorLimits => {
  try {
    return parseGovernorSpec(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

const Env = z.object({
  ...internalAuthEnv,
  ...grpcTlsEnv,
  ...grpcClientEnv,
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** This service's own database; created at start when missing. */
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_messaging'),
  /**
   * This database reached directly, for when DATABASE_URL goes through PgBouncer in transaction pooling: what holds a
   * session (LISTEN connections, migrations) connects here. Unset: DATABASE_URL (README: connection budget).
   */
  DATABASE_DIRECT_URL: fields.databaseDirectUrl(),
  /** Connections in this service's pool; the inbound consumer (one per INBOUND_CONCURRENCY lane) and gRPC handlers share it. */
  DATABASE_POOL_SIZE: fields.databasePoolSize(24),
  /** Redis holds the send governor's windows. */
  REDIS_URL: fields.url('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key of this deployment (tests use a unique one). */
  REDIS_PREFIX: z.string().default('crm:'),
  AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672'),
  ...brokerUserEnv,
  /** Topic exchange of the event bus; queue names start with it so deployments never share a queue. */
  EVENTS_EXCHANGE: z.string().min(1).default('crm.events'),
  /** gRPC bind address; keep it on loopback or a private network (callers also need a signed internal credential). */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: fields.port(50053),
  /**
   * HTTP for attachment uploads and downloads, which stream instead of travelling in one gRPC message.
   * Port = gRPC port + 10 (the 5006x range mirrors 5005x); bind it like gRPC, on loopback or a private network.
   */
  HTTP_HOST: z.string().default('127.0.0.1'),
  HTTP_PORT: fields.port(50063),
  /** Services this one calls. */
  IDENTITY_ADDR: z.string().default('127.0.0.1:50051'),
  CRM_ADDR: z.string().default('127.0.0.1:50052'),
  CONNECTOR_ADDR: z.string().default('127.0.0.1:50054'),
  /** ai: the guarded auto-reply (issue #32) asks it for an answer to a customer's message on an account in its list. */
  AI_ADDR: z.string().default('127.0.0.1:50056'),
  /**
   * Deadline of an auto-reply asked of ai: its providers answer within AI_COMPLETION_TIMEOUT_MS each (fallbacks one
   * after the other); past it the conversation is handed to a person.
   */
  AI_AUTO_REPLY_DEADLINE_MS: z.coerce.number().int().min(100).default(60_000),
  /** Deadline of a contact upsert in crm while storing an inbound message; past it the contact is linked later. */
  CRM_DEADLINE_MS: z.coerce.number().int().min(100).default(2_000),
  /** Deadline of a send through the connector (the network may be slow to acknowledge). */
  CONNECTOR_DEADLINE_MS: z.coerce.number().int().min(100).default(8_000),
  /** Deadline of a send that carries files: the connector streams each one from here and uploads it to the network. */
  CONNECTOR_FILE_DEADLINE_MS: z.coerce.number().int().min(100).default(120_000),
  /** Folder that holds attachment bytes (a mounted volume in production); created at start. */
  ATTACHMENTS_DIR: z
    .string()
    .min(1)
    .default(path.join(process.cwd(), 'data', 'attachments')),
  /** Largest attachment accepted, in bytes; counted while the upload streams, so a larger one stops at this size (413). */
  ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024 * 1024 * 1024)
    .default(25 * 1024 * 1024),
  /**
   * Bytes of files the org's users (and API keys) upload that one organization may keep, in MB; an upload past it is
   * refused (413 storage_quota_exceeded). Files contacts send count against ATTACHMENTS_INBOUND_QUOTA_MB instead.
   */
  ATTACHMENTS_QUOTA_MB: z.coerce.number().int().min(1).default(1024),
  /**
   * Bytes of files that came from the chat network (sent by contacts, or typed on the account's phone) one organization
   * may keep, in MB. Its own quota, so strangers sending files fill only this one and never stop agents uploading; past
   * it a received file is refused (413 storage_quota_exceeded) and its message is kept without it.
   */
  ATTACHMENTS_INBOUND_QUOTA_MB: z.coerce.number().int().min(1).default(1024),
  /** Uploads not sent with any message within this many hours are deleted (file and row). */
  ATTACHMENTS_ORPHAN_HOURS: z.coerce
    .number()
    .min(0)
    .max(24 * 365)
    .default(24),
  /**
   * Days the bytes of any attachment (sent, received or unsent) are kept; then they are deleted and the message lists
   * the file as expired (its download answers 410 attachment_expired). Expired files count against no quota.
   */
  ATTACHMENTS_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
  /**
   * Send governor per chat-network account: `type=<daily>/day,<burst>/<seconds>s` entries separated by `;`.
   * Types: total (every send), ui, public_api, automation, campaign, auto (what the inbox sends by itself: auto-close,
   * out-of-hours and CSAT messages). Unlisted types keep their default.
   */
  SEND_LIMITS: governor.default(parseGovernorSpec(DEFAULT_SEND_LIMITS)),
  /** A send still unfinished after this long (a crash mid-send) may be retried with the same idempotency key. */
  IDEMPOTENCY_PENDING_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(60_000),
  /**
   * How long one "minute" of a service-level window lasts, in ms (issue #29: SLA due times, auto-close, reply timeouts
   * are set in minutes). Only tests shorten it, so a 1-minute window passes in a second; leave it at 60000.
   */
  SERVICE_LEVEL_MINUTE_MS: z.coerce.number().int().min(100).max(60_000).default(60_000),
  /** Idempotency keys are remembered this long. */
  IDEMPOTENCY_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
  /**
   * Inbound batches stored at once: lanes of the batch consumer, each one transaction of up to 100 messages
   * at a time; a conversation always goes to the same lane, so its messages are stored in delivery order.
   * One lane by default: the batch gathers while the one before it is stored, so batches fill with the load instead
   * of splitting it. bench/realtime at 200 msg/s (every service, 2 cores): 4.86 ms of CPU per message and p99 78 ms
   * with one lane, 6.37 ms with two, 6.82 ms and p99 200 ms with four; at 400 msg/s one lane kept the rate too (p99
   * 809 ms, four 1,056 ms). More lanes are for a database that gains from parallel writers; replicas add lanes of
   * their own (bench/RESULTS.md "realtime").
   */
  INBOUND_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  /** Delays between retries of a failed inbound event or contact link, in ms; the last one repeats. */
  EVENT_RETRY_DELAYS_MS: durations.default([1_000, 5_000, 30_000, 120_000, 600_000]),
  /** Attempts per event before it is parked in the dead-letter queue. */
  EVENT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(10),
  /**
   * Searches rank and page the newest this-many messages that match (and the inbox list's search looks at their
   * conversations): a term found in 100,000 messages would otherwise be read and ranked in full on every keystroke.
   */
  MESSAGE_SEARCH_WINDOW: z.coerce.number().int().min(10).max(100_000).default(200),
  /**
   * How long after sending an outbound message may be recalled (the chat network's own window: it refuses a recall
   * of an older message, so a recall after it answers 409 recall_window_passed). Minutes; a day by default.
   */
  RECALL_WINDOW_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(1440),
  /** Prometheus `GET /metrics` listener, bound to GRPC_HOST (a private address); 0 picks a free port (tests). */
  METRICS_PORT: fields.port(9467),
  LOG_LEVEL: fields.logLevel(),
  /** OTLP/HTTP endpoint for traces; spans are exported only when set (trace context always propagates). */
  OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
});

export type MessagingConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): MessagingConfig {
  return parseEnv(Env, env);
}
