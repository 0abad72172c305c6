import { z } from 'zod';
import { productionProblems } from './production';

export { z };
export { productionProblems };
export { sizeText } from './sizes';

/** Thrown when the environment does not satisfy a service's schema; the message names every bad variable. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function invalid(lines: Array<[string, string]>): ConfigError {
  return new ConfigError(`Invalid configuration:\n${lines.map(([name, message]) => `  ${name}: ${message}`).join('\n')}`);
}

/**
 * Parse an environment against a zod schema. Bad configuration must stop a service at start with a
 * message that names the variable, never later with a stack trace from deep inside a request.
 * With NODE_ENV=production it also refuses the development defaults (passwordless database, RabbitMQ
 * guest, Redis without a password) and example secrets: see production.ts. Every service's config goes
 * through here, so no service can forget the check.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw invalid(result.error.issues.map((issue) => [issue.path.join('.') || '(environment)', issue.message]));
  }
  if (typeof result.data === 'object' && result.data !== null) {
    // A schema without NODE_ENV still runs in production when the environment says so.
    const problems = productionProblems({ NODE_ENV: env.NODE_ENV, ...result.data });
    if (problems.length > 0) throw invalid(problems);
  }
  return result.data;
}

/** Common field types, so every service spells them the same way. */
export const fields = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  url: (fallback: string) => z.string().url().default(fallback),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * OTLP endpoint spans are exported to (`http://otel-collector:4318`); unset or empty: nothing is exported
   * (trace context still propagates). Empty counts as unset so compose can pass `${VAR:-}` through. Checked here so
   * a typo stops the start with a readable error; the OpenTelemetry SDK reads it, with the other OTEL_* variables,
   * from the environment itself (packages/telemetry).
   */
  otlpEndpoint: () =>
    z
      .union([z.literal(''), z.string().url()])
      .optional()
      .transform((v) => v || undefined),
  /**
   * DATABASE_POOL_SIZE, the one name every service reads for its PostgreSQL pool: the most connections the pool
   * opens (it opens them as work needs them and closes idle ones after 30 s). Each service also holds its LISTEN
   * connections outside the pool: see the README's connection budget.
   */
  databasePoolSize: (fallback: number) => z.coerce.number().int().min(2).max(200).default(fallback),
  /**
   * DATABASE_DIRECT_URL: the same database as DATABASE_URL reached without a transaction pooler (PgBouncer) in between,
   * for what holds a session: LISTEN connections, the outbox relay, migrations and creating the database at start.
   * Unset or empty: DATABASE_URL (no pooler). Read it through `directDatabaseUrl(config)`.
   */
  databaseDirectUrl: () =>
    z
      .union([z.literal(''), z.string().url()])
      .optional()
      .transform((v) => v || undefined),
  /** A secret that production must set explicitly; development may fall back to a generated one. */
  secret: (minLength: number) => z.string().min(minLength, `must be at least ${minLength} characters`),
};

/**
 * Where a service opens the connections that hold a session (LISTEN, the outbox relay, migrations): PgBouncer in
 * transaction pooling hands each transaction to whichever server connection is free, so a LISTEN or a session-level
 * advisory lock made through it lands on a connection the service no longer holds.
 */
export function directDatabaseUrl(config: { DATABASE_URL: string; DATABASE_DIRECT_URL?: string }): string {
  return config.DATABASE_DIRECT_URL ?? config.DATABASE_URL;
}

/** Start-up helper: turn a ConfigError into one readable line on stderr and exit 1. */
export function exitOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  }
  process.exit(1);
}

/** Outgoing mail (@crm/mail), the same variables in every service that sends it. */
export const smtpEnv = {
  /**
   * Mail server, e.g. smtps://user:password@mail.example.com:465 (smtp:// upgrades with STARTTLS when offered).
   * Unset: no mail is sent.
   */
  SMTP_URL: z
    .string()
    .regex(/^(smtps?:\/\/\S+)?$/, 'must be an smtp:// or smtps:// URL')
    .optional()
    .transform((v) => v || undefined),
  /** Sender of the service's mail. */
  MAIL_FROM: z.string().min(3).default('CRM <no-reply@localhost>'),
  /** Connect, greeting and socket timeout towards the mail server (ms): a slow server must not stall the work that sends. */
  SMTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
};

// What a service that consumes events needs to know of the broker's users (@crm/events publishers.ts). A line comment:
// scripts/env-example.mjs takes a doc comment's text as the description of the key below it.
export const brokerUserEnv = {
  /**
   * Put in front of every service's RabbitMQ user name: a service's user is this plus the service name (`crm`,
   * `messaging`, ...), as deploy/rabbitmq/definitions.sh names them. Consumers refuse an event whose publisher is not
   * the user of one of its type's producers. Empty in a deployment; a test sets one to make users of its own.
   */
  AMQP_USER_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]*$/, 'letters, digits, _ . - only')
    .default(''),
};

/** How this process's gRPC clients of other services pick among the addresses a name resolves to. */
export const grpcClientEnv = {
  /**
   * `pick_first` (one connection; after a restart of the callee the next call reconnects at once) or `round_robin`
   * (a connection to every address the name resolves to, calls spread over them: several replicas behind one DNS
   * name, a headless Kubernetes Service; compose and deploy/k8s set it). With round_robin a lone callee that
   * restarts is reconnected on a backoff, so calls in the first second or two after it returns may fail fast.
   */
  GRPC_LB_POLICY: z.enum(['pick_first', 'round_robin']).default('pick_first'),
};

/**
 * The internal credential's variables, read by every process (@crm/grpc-kit internalAuthFromEnv checks them
 * together: production needs the key pair, development and tests may use the seed).
 */
export const internalAuthEnv = {
  /** Development and test only: every process's Ed25519 key is derived from it. `npm start` generates one. */
  INTERNAL_AUTH_SEED: z.string().optional(),
  /** This process's own Ed25519 private key (32-byte seed, base64); production sets it (`npm run keys`). */
  SERVICE_PRIVATE_KEY: z.string().optional(),
  /** Every process's public key: `gateway=<base64>,identity=<base64>,…`. */
  SERVICE_PUBLIC_KEYS: z.string().optional(),
};

/**
 * Mutual TLS between the processes, read by every process (@crm/grpc-kit grpcTransportFromEnv checks them together:
 * all three or none). Each is a PEM file base64-encoded on one line, as `npm run keys` prints them. Unset: internal
 * traffic is plaintext (npm start, tests); production logs a warning.
 */
export const grpcTlsEnv = {
  /** The deployment's CA certificate(s): only peers holding a certificate it issued are talked to. */
  GRPC_TLS_CA: z.string().optional(),
  /** This process's certificate (server and client), issued by GRPC_TLS_CA for the host names it is dialled by. */
  GRPC_TLS_CERT: z.string().optional(),
  /** This process's private key, the one of GRPC_TLS_CERT. */
  GRPC_TLS_KEY: z.string().optional(),
};
