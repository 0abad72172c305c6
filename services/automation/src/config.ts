import { brokerUserEnv, fields, grpcClientEnv, grpcTlsEnv, internalAuthEnv, parseEnv, smtpEnv, z } from '@crm/config';
import { allowListEnv } from '@crm/net-guard';

/** "5s,30s,2m" → milliseconds; the retry schedule of failed actions. */
const durationList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((raw, ctx) => {
      const out: number[] = [];
      for (const part of raw
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        const m = /^(\d+)(ms|s|m|h)$/.exec(part);
        if (!m) {
          ctx.addIssue({ code: 'custom', message: `"${part}" is not a duration like 500ms, 5s, 2m or 1h` });
          return z.NEVER;
        }
        out.push(Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h']);
      }
      if (out.length === 0) {
        ctx.addIssue({ code: 'custom', message: 'needs at least one duration' });
        return z.NEVER;
      }
      return out;
    });

const Env = z.object({
  ...internalAuthEnv,
  ...grpcTlsEnv,
  ...grpcClientEnv,
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** This service's own database; created at start when missing. */
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_automation'),
  /**
   * This database reached directly, for when DATABASE_URL goes through PgBouncer in transaction pooling: what holds a
   * session (LISTEN connections, migrations) connects here. Unset: DATABASE_URL (README: connection budget).
   */
  DATABASE_DIRECT_URL: fields.databaseDirectUrl(),
  /** Connections in this service's pool (the same setting in every service; README: connection budget). */
  DATABASE_POOL_SIZE: fields.databasePoolSize(10),
  /** RabbitMQ: triggers and system events come in, notification.created goes out. */
  AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672'),
  ...brokerUserEnv,
  /** Topic exchange of the deployment; this service's queue is `<EVENTS_EXCHANGE>.automation.triggers`. */
  EVENTS_EXCHANGE: z.string().min(1).default('crm.events'),
  /** gRPC bind address; keep it on loopback or a private network (callers also need a signed internal credential). */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: fields.port(50055),
  /** identity (user ids in assign_user / send_notification are checked there). */
  IDENTITY_ADDR: z.string().default('127.0.0.1:50051'),
  /** crm (contact lookups for templates and conditions; PatchContact for assign_user and add_tag). */
  CRM_ADDR: z.string().default('127.0.0.1:50052'),
  /** messaging (send_message goes through its one send pipeline). */
  MESSAGING_ADDR: z.string().default('127.0.0.1:50053'),
  /** chatnet-connector (a broadcast's own chat-network account is checked to be the org's). */
  CONNECTOR_ADDR: z.string().default('127.0.0.1:50054'),
  /** Deadline of every call to another service, in milliseconds. */
  GRPC_DEADLINE_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** Runs executed at once by one instance. */
  RUN_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Waits before retrying an action that failed for a passing reason (service down, account offline). */
  RUN_RETRY_SCHEDULE: durationList('5s,30s,2m,10m,30m,2h'),
  /** Finished runs stay in a rule's run history this many days (then the timer facility sweeps them away). */
  RUN_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * IPs/CIDRs a rule's http_request step may reach although private, loopback or link-local (a system on the internal
   * network); empty: only public addresses. Its own list, as webhooks have theirs (WEBHOOK_ALLOWED_PRIVATE_ADDRESSES).
   */
  AUTOMATION_ALLOWED_PRIVATE_ADDRESSES: allowListEnv(),
  /** Delays between redeliveries of an event whose handling failed (e.g. the database was unreachable). */
  EVENT_RETRY_SCHEDULE: durationList('1s,5s,30s,2m'),
  /**
   * Campaign sends per minute, per campaign. The default stays under messaging's default campaign budget
   * per chat-network account (3 per 10 s), so the governor rarely has to push back; its 429s (with
   * Retry-After) are honoured anyway. Raise it only for accounts the network tolerates bulk sends from.
   */
  CAMPAIGN_SEND_PER_MINUTE: z.coerce.number().min(0.1).max(60_000).default(15),
  /**
   * How long the trigger consumer trusts an org's active rules held in memory without hearing of a change (rule
   * writes announce themselves at commit; this bounds how stale a replica can be should an announcement be lost).
   */
  RULE_CACHE_MAX_AGE_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /** How often due campaigns are looked for; activation, resume and rescheduling wake the sender at once. */
  CAMPAIGN_POLL_MS: z.coerce.number().int().min(20).max(60_000).default(1_000),
  /** Campaigns one instance sends at the same time (each one paced on its own). */
  CAMPAIGN_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Waits before retrying one recipient whose send failed for a passing reason (account offline, ...). */
  CAMPAIGN_RETRY_SCHEDULE: durationList('30s,2m,10m,30m'),
  /** A message from a recipient counts as a reply to a campaign message sent at most this many hours before. */
  CAMPAIGN_REPLY_WINDOW_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(72),
  /**
   * Alert emails about new inbound messages to users who opted in (SMTP_URL, MAIL_FROM, SMTP_TIMEOUT_MS).
   * Without SMTP_URL no email is sent; in-app notifications are unaffected either way.
   */
  ...smtpEnv,
  /**
   * The address alert emails link to (the web app), and the base of the unsubscribe links and open-tracking
   * pixels in campaign emails (the gateway serves `/u/<token>` and `/o/<token>.gif` there).
   */
  PUBLIC_URL: fields.url('http://localhost:8080'),
  /**
   * 32-byte key (base64 or hex) that encrypts organizations' SMTP passwords at rest; the key that signs the
   * unsubscribe and open-tracking links of campaign emails is derived from it. ENCRYPTION_KEYS_OLD ("1:key,2:key")
   * decrypts values written under former keys.
   */
  ENCRYPTION_KEY: fields.secret(32),
  ENCRYPTION_KEYS_OLD: z.string().default(''),
  /**
   * IPs/CIDRs an organization's SMTP host may resolve to although private, loopback or link-local (e.g. a mail
   * relay on the internal network); empty: only public addresses. SMTP_URL, the operator's own, is not checked.
   */
  EMAIL_ALLOWED_PRIVATE_ADDRESSES: allowListEnv(),
  /**
   * Ports an organization's SMTP server may be on (comma-separated): the SMTP ports (25, 465, 587 and 2525) by default,
   * so the channel and its test cannot be aimed at any other service on a public host.
   */
  SMTP_ALLOWED_PORTS: z
    .string()
    .default('25,465,587,2525')
    .transform((v, ctx) => {
      const ports = v
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
        .map(Number);
      if (!ports.length || ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65_535)) {
        ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of ports (1-65535)' });
        return z.NEVER;
      }
      return ports;
    }),
  /** At most one alert email per user and conversation within this window (ms); older throttle rows are pruned. */
  EMAIL_ALERT_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(24 * 3600_000)
    .default(15 * 60_000),
  /** A contact whose lead score reaches this value raises one high_value_lead notification. */
  HIGH_VALUE_LEAD_SCORE: z.coerce.number().int().min(1).default(80),
  /** Prometheus `GET /metrics` listener, bound to GRPC_HOST (a private address); 0 picks a free port (tests). */
  METRICS_PORT: fields.port(9469),
  LOG_LEVEL: fields.logLevel(),
  /** OTLP/HTTP endpoint for traces; spans are exported only when set (trace context always propagates). */
  OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
});

export type AutomationConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): AutomationConfig {
  return parseEnv(Env, env);
}
