import { brokerUserEnv, fields, grpcTlsEnv, internalAuthEnv, parseEnv, z } from '@crm/config';
import { SecretBox } from '@crm/crypto';
import { allowListEnv } from '@crm/net-guard';
import { parseDuration, parseSchedule } from './domain/durations';

/** A zod field that parses with `fn` and reports its error message against the variable. */
const parsed = <T>(fallback: string, fn: (raw: string) => T) =>
  z
    .string()
    .default(fallback)
    .transform((raw, ctx) => {
      try {
        return fn(raw);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });

const Env = z.object({
  ...internalAuthEnv,
  ...grpcTlsEnv,
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** This service's own database (settings, the delivery queue, the attempt log); created at start when missing. */
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_webhooks'),
  /**
   * This database reached directly, for when DATABASE_URL goes through PgBouncer in transaction pooling: what holds a
   * session (LISTEN connections, migrations) connects here. Unset: DATABASE_URL (README: connection budget).
   */
  DATABASE_DIRECT_URL: fields.databaseDirectUrl(),
  /** Connections in this service's pool (the same setting in every service; README: connection budget). */
  DATABASE_POOL_SIZE: fields.databasePoolSize(20),
  AMQP_URL: z.string().default('amqp://guest:guest@127.0.0.1:5672'),
  ...brokerUserEnv,
  /** Topic exchange every service publishes its events to. */
  EVENTS_EXCHANGE: z.string().min(1).default('crm.events'),
  /** gRPC bind address; keep it on loopback or a private network (callers also need a signed internal credential). */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: fields.port(50057),
  /** 32-byte key (base64 or hex) that encrypts webhook secrets at rest. */
  ENCRYPTION_KEY: fields.secret(32).refine(
    (k) => {
      try {
        SecretBox.fromEnv(k);
        return true;
      } catch {
        return false;
      }
    },
    { message: 'must be 32 bytes as base64 or 64 hex characters' },
  ),
  /** Former keys still able to decrypt (`1:key,2:key`), for rotation. */
  ENCRYPTION_KEYS_OLD: z.string().default(''),
  /**
   * IPs/CIDRs that may be delivered to although private, loopback or link-local (comma-separated, e.g.
   * `127.0.0.1,10.0.0.0/8`). Empty by default: every non-public address is refused.
   */
  WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: allowListEnv(),
  /** Waits between attempts after the first, which is immediate. */
  WEBHOOK_RETRY_SCHEDULE: parsed('5s,5m,30m,2h,5h,10h', parseSchedule),
  /** Whole-attempt deadline (connect, send, response head and the logged part of the body), ms. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** An endpoint failing without a single success for this long is disabled (and `webhook.disabled` emitted). */
  WEBHOOK_DISABLE_AFTER: parsed('5d', parseDuration),
  /** Attempts in flight at once per instance. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(50),
  /**
   * Attempts in flight at once to one endpoint per instance: a slow receiver holds this many slots, not all
   * of them, and a receiver is not flooded by one instance.
   */
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(8),
  /**
   * Look at the queue for due retries and as the safety net for a missed notification (new deliveries are
   * announced by NOTIFY and sent at once), ms.
   */
  WEBHOOK_POLL_MS: z.coerce.number().int().min(50).default(1_000),
  /** Bytes of a receiver's response body kept in the attempt log. */
  WEBHOOK_RESPONSE_BODY_LIMIT: z.coerce.number().int().min(0).max(65_536).default(2_048),
  /** Webhook settings one organization may have. */
  WEBHOOK_MAX_PER_ORG: z.coerce.number().int().min(1).default(20),
  /** Finished deliveries and their attempts are deleted after this long. */
  WEBHOOK_LOG_RETENTION: parsed('30d', parseDuration),
  /**
   * Days each public event is kept in the event feed (GET /api/public/events) and can be replayed to an endpoint; a
   * cursor older than this answers 410 cursor_expired. Fractions are allowed (tests: seconds).
   */
  EVENT_FEED_RETENTION_DAYS: z.coerce.number().positive().max(3650).default(7),
  /** Replayed deliveries made due per second per replay, at most (live deliveries are never held back by a replay). */
  WEBHOOK_REPLAY_PER_SECOND: z.coerce.number().positive().max(1000).default(10),
  /**
   * Replayed deliveries of one endpoint pending at once across every instance, at most: a replay holds at most this
   * many of the endpoint's WEBHOOK_ENDPOINT_CONCURRENCY slots, so live deliveries keep the others.
   */
  WEBHOOK_REPLAY_IN_FLIGHT: z.coerce.number().int().min(1).max(100).default(2),
  /** Prometheus `GET /metrics` listener, bound to GRPC_HOST (a private address); 0 picks a free port (tests). */
  METRICS_PORT: fields.port(9471),
  LOG_LEVEL: fields.logLevel(),
  /** OTLP/HTTP endpoint for traces; spans are exported only when set (trace context always propagates). */
  OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
});

export type WebhooksConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): WebhooksConfig {
  return parseEnv(Env, env);
}
