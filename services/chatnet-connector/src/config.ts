import { fields, grpcClientEnv, grpcTlsEnv, internalAuthEnv, parseEnv, z } from '@crm/config';
import { allowListEnv } from '@crm/net-guard';
import { parseMediaHosts } from './media-hosts';

const ms = (fallback: number, min = 100) => z.coerce.number().int().min(min).default(fallback);

/**
 * Where the network serves photos and files. zca-js names no media host: 2.2.0's sources in node_modules/zca-js/dist
 * hard-code only its API hosts (*.zalo.me) and Zalo's static host stc-zlogin.zdn.vn (apis/loginQR.js); a message's file
 * is a URL in its content (`href` of TAttachmentContent, models/Message.d.ts). Hence, beside zdn.vn, the hosts public
 * projects built on zca-js download inbound media from (their code and tests):
 * - zdn.vn: photos at f<n>-zpg-r.zdn.vn, uploaded files at f<n>-zpc.zdn.vn;
 * - zadn.vn: avatars (s120-ava-talk.zadn.vn) and photos;
 * - dlfl.vn, flchat.vn, dlmd.me: a file message's link file-stal-<n>.dlfl.vn redirects to the delivery host
 *   file-stal-<n>[-<edge>].flchat.vn and on to the CDN file-stal-<n>-aka-jpt.dlmd.me.
 * An operator who sees files refused from another host of the network adds it to CHATNET_MEDIA_HOSTS.
 */
const DEFAULT_MEDIA_HOSTS = 'zdn.vn,zadn.vn,dlfl.vn,flchat.vn,dlmd.me';

/** A comma-separated host list (media-hosts.ts); an entry that is not a host name stops the service, named. */
function mediaHostsEnv(fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((raw, ctx): string[] => {
      try {
        return parseMediaHosts(raw);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });
}

const Env = z.object({
  ...internalAuthEnv,
  ...grpcTlsEnv,
  ...grpcClientEnv,
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** This service's own database; created at start when missing. */
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_chatnet_connector'),
  /**
   * This database reached directly, for when DATABASE_URL goes through PgBouncer in transaction pooling: what holds a
   * session (LISTEN connections, migrations) connects here. Unset: DATABASE_URL (README: connection budget).
   */
  DATABASE_DIRECT_URL: fields.databaseDirectUrl(),
  /** Connections in this service's pool (the same setting in every service; README: connection budget). */
  DATABASE_POOL_SIZE: fields.databasePoolSize(10),
  /** Redis holds the session leases, the instance registry, the latest QR codes and the sandbox network. */
  REDIS_URL: fields.url('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key of this deployment (tests use a unique one). */
  REDIS_PREFIX: z.string().default('crm:'),
  AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672'),
  /** Topic exchange the outbox relay publishes to. */
  EVENTS_EXCHANGE: z.string().min(1).default('crm.events'),
  /** gRPC bind address; keep it on loopback or a private network (callers also need a signed internal credential). */
  GRPC_HOST: z.string().default('127.0.0.1'),
  GRPC_PORT: fields.port(50054),
  /**
   * host:port other connector instances dial to reach this one (calls for a session this instance holds
   * are forwarded here). Default: GRPC_HOST (or the hostname when bound to 0.0.0.0) and the bound port.
   */
  GRPC_ADVERTISE_ADDR: z.string().optional(),
  /** 32-byte key (base64 or hex) for session data and proxy URLs at rest; ENCRYPTION_KEYS_OLD ("1:key,2:key") decrypts older versions. */
  ENCRYPTION_KEY: z.string({ error: 'is required' }).min(32, 'must be a 32-byte key (base64 or 64 hex characters)'),
  ENCRYPTION_KEYS_OLD: z.string().default(''),
  /**
   * messaging's attachments HTTP port: files being sent are streamed from it, files received are stored in it
   * (with this service's signed credential; SERVICE_CALL_POLICY allows exactly those two operations).
   */
  MESSAGING_HTTP_URL: fields.url('http://127.0.0.1:50063'),
  /** The largest file a message may carry either way; keep it equal to messaging's ATTACHMENT_MAX_BYTES. */
  ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(25 * 1024 * 1024),
  /** identity, for the `owner` of each account. */
  IDENTITY_ADDR: z.string().default('127.0.0.1:50051'),
  /**
   * IPs/CIDRs an account's proxy may be on although private, loopback or link-local (comma-separated,
   * e.g. `10.0.0.0/8` for proxies on the deployment's own network). Empty by default: proxies must be public.
   */
  CONNECTOR_ALLOWED_PRIVATE_ADDRESSES: allowListEnv(),
  /** Chat-network accounts one organization may hold (each a live session and a QR login); 409 above. */
  CHATNET_ACCOUNTS_MAX_PER_ORG: z.coerce.number().int().min(1).max(100_000).default(50),
  /**
   * Which network the accounts live on: the built-in simulated network, or the real one through zca-js.
   * The sandbox's control RPCs (scan, inbound, drop…) answer only outside production.
   */
  CHATNET_DRIVER: z.enum(['sandbox', 'zca']).default('sandbox'),
  /**
   * With the sandbox driver: the standalone sandbox network's URL (`node dist/sandbox-network/main.js`, e.g.
   * `http://127.0.0.1:50070`). Sessions then hold a WebSocket to it, as they would to the real network, and the network's
   * inbound traffic arrives there rather than through the gateway. Unset: the network runs inside this process.
   */
  CHATNET_SANDBOX_URL: z
    .union([z.literal(''), z.string().url()])
    .optional()
    .transform((v) => v || undefined),
  /**
   * Hosts the network serves photos and files from (comma-separated; a name takes itself and its subdomains, `zadn.vn`
   * takes `s120-ava-talk.zadn.vn` but not `evilzadn.vn`). The zca driver downloads a message's file, and follows a
   * redirect (at most 3), only over HTTPS to these hosts; anything else is left out of its message with a warning.
   * Empty: no file is downloaded.
   */
  CHATNET_MEDIA_HOSTS: mediaHostsEnv(DEFAULT_MEDIA_HOSTS),
  /** A live session's lease lifetime; another instance takes the account over once it lapses. */
  LEASE_TTL_MS: ms(10_000, 1000),
  /** How often a holder renews its leases (well under LEASE_TTL_MS). */
  HEARTBEAT_MS: ms(3_000),
  /** How often an instance looks for accounts that should be live but that nobody holds. */
  SCAN_INTERVAL_MS: ms(3_000),
  /**
   * How often an instance holding more than its fair share of the live sessions hands one back so an
   * instance under its share (one that just joined) takes it over: 0 turns rebalancing off. Moving N
   * sessions takes about N times this (instances over their share move theirs in parallel).
   */
  REBALANCE_INTERVAL_MS: z.coerce.number().int().min(0).default(5_000),
  /** Wait after a dropped connection before reconnecting from session data (doubles on repeated failures). */
  RECONNECT_DELAY_MS: ms(2_000, 0),
  /** A restore that takes longer counts as failed. */
  RESTORE_TIMEOUT_MS: ms(15_000, 500),
  /** Lifetime of one sandbox QR code, and how many fresh codes a login shows before giving up. */
  QR_TTL_MS: ms(60_000),
  QR_MAX_REFRESHES: z.coerce.number().int().min(0).max(100).default(4),
  /**
   * Read receipts, recalls and reactions (and inbound messages while they cannot be published directly, below) are
   * written to the outbox in batches: at most this many per statement, and none waits longer than INBOUND_BATCH_WAIT_MS
   * for others to join it (0: only what arrived while the previous batch was being written). Inbound messages published
   * directly go at most this many per window of confirms, and the first waits at most INBOUND_BATCH_WAIT_MS for the
   * others: 20 ms, as the event consumers gather theirs for 25 (at 200 msg/s, 0.58 against 0.69 ms of the connector's
   * CPU per message at 5 ms and 0.79 without a wait; RabbitMQ 1.36 against 1.89 and 1.75: bench/RESULTS.md, realtime).
   */
  INBOUND_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  INBOUND_BATCH_WAIT_MS: z.coerce.number().int().min(0).max(1000).default(20),
  /**
   * Inbound messages are published straight to RabbitMQ (publisher confirms, up to INBOUND_BATCH_SIZE awaited together)
   * rather than through the outbox. A batch the broker has not confirmed within this, like one it refuses or cannot take
   * (no connection, a blocked one), goes to the outbox instead, and so does every message after it until the broker
   * confirms again and the outbox has sent what it holds.
   */
  INBOUND_CONFIRM_TIMEOUT_MS: ms(2_000),
  /**
   * Phone and uid lookups (FindUser) one account may make per minute, as the network paces them: above it the
   * caller gets 429 with Retry-After. Answers are cached for a day, and a cached answer costs nothing.
   */
  LOOKUP_PER_ACCOUNT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  /** Seconds an owner looked up in identity is cached in memory. */
  OWNER_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  /** Prometheus `GET /metrics` listener, bound to GRPC_HOST (a private address); 0 picks a free port (tests). */
  METRICS_PORT: fields.port(9468),
  LOG_LEVEL: fields.logLevel(),
  /** OTLP/HTTP endpoint for traces; spans are exported only when set (trace context always propagates). */
  OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
});

// A lease must survive a missed heartbeat or two, or a healthy holder would lose its sessions.
const Checked = Env.superRefine((c, ctx) => {
  if (c.HEARTBEAT_MS * 2 >= c.LEASE_TTL_MS) {
    ctx.addIssue({ code: 'custom', path: ['HEARTBEAT_MS'], message: `must be less than half of LEASE_TTL_MS (${c.LEASE_TTL_MS})` });
  }
});

export type ConnectorConfig = z.infer<typeof Env>;

export function loadConfig(env: Record<string, string | undefined>): ConnectorConfig {
  return parseEnv(Checked, env);
}

/**
 * Whether the sandbox network's control RPCs may be used: only with the sandbox driver and never in
 * production, where they would let an admin fake inbound messages from customers.
 */
export function sandboxControlEnabled(config: Pick<ConnectorConfig, 'CHATNET_DRIVER' | 'NODE_ENV'>): boolean {
  return config.CHATNET_DRIVER === 'sandbox' && config.NODE_ENV !== 'production';
}
