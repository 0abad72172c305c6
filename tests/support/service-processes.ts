import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { clearRedisPrefix, createTestDatabase, deleteRabbitPrefix, freePort, infra, internalAuthSeed, TestDatabase, uniqueName } from '@crm/testing';

const root = path.resolve(__dirname, '../..');

/**
 * Services started as their own processes, from their built `dist/main.js`, as `npm start` runs them: for what the
 * in-process stack (stack.ts) cannot show, such as a service's own telemetry set-up. Nothing is exported whatever the
 * environment running the tests says (OTEL_* variables are not passed on) unless `env` sets it.
 */
export class ServiceProcesses {
  private readonly procs: ChildProcess[] = [];

  /**
   * Start `service` and resolve once its output includes `readyText`; `onLine` gets each JSON log line it writes.
   * Rejects when it exits first, with what it wrote.
   */
  launch(service: string, env: Record<string, string>, readyText: string, onLine?: (line: Record<string, unknown>) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
      const p = spawn(process.execPath, [path.join(root, 'services', service, 'dist', 'main.js')], {
        env: { ...inherited, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      this.procs.push(p);
      let out = '';
      let pending = '';
      p.stdout!.on('data', (d) => {
        out += d;
        pending += d;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const l of lines) {
          try {
            onLine?.(JSON.parse(l));
          } catch {
            /* not a log line */
          }
        }
        if (out.includes(readyText)) resolve();
      });
      p.stderr!.on('data', (d) => (out += d));
      p.on('exit', (code) => reject(new Error(`${service} exited ${code}: ${out}`)));
    });
  }

  /** SIGTERM to every process started, and their exit awaited (at most 5 s). */
  async stop(): Promise<void> {
    const running = this.procs.filter((p) => p.exitCode === null && p.signalCode === null);
    await Promise.all(
      running.map(
        (p) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              p.kill('SIGKILL');
              resolve();
            }, 5000);
            p.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            p.kill('SIGTERM');
          }),
      ),
    );
  }
}

/** The services a process stack can run, and the variable that gives each one's address to the others. */
const ADDR_VARS = {
  identity: 'IDENTITY_ADDR',
  crm: 'CRM_ADDR',
  messaging: 'MESSAGING_ADDR',
  'chatnet-connector': 'CONNECTOR_ADDR',
  webhooks: 'WEBHOOKS_ADDR',
  automation: 'AUTOMATION_ADDR',
  ai: 'AI_ADDR',
} as const;
export type ProcessService = keyof typeof ADDR_VARS;

export interface ProcessStack {
  /** The gateway's base URL. */
  url: string;
  /** The test database of a started service. */
  databaseUrl(service: ProcessService): string;
  /** Rows of a query on a started service's database (its outbox, a row written behind the API). */
  query<T extends object>(service: ProcessService, sql: string, params?: unknown[]): Promise<T[]>;
  /** The run's events exchange (EVENTS_EXCHANGE). */
  exchange: string;
  /** Stops the processes and removes what the stack made: databases, Redis keys, the exchange and its queues. */
  stop(): Promise<void>;
}

export interface ProcessStackOptions {
  /** Extra environment for one service. */
  serviceEnv?: Partial<Record<ProcessService, Record<string, string>>>;
  /** Each JSON log line a service writes (at info level and above). */
  onLine?: Partial<Record<ProcessService, (line: Record<string, unknown>) => void>>;
}

/**
 * identity, `services` and the gateway, each its own process started from its dist/main.js (ServiceProcesses), on
 * databases, a Redis prefix and an exchange of their own. The services it does not run get an address nothing listens
 * on (port 9), never their defaults, which are a developer's `npm start` beside the tests.
 */
export async function startProcessStack(services: ProcessService[], opts: ProcessStackOptions = {}): Promise<ProcessStack> {
  const running = [...new Set<ProcessService>(['identity', ...services])];
  const procs = new ServiceProcesses();
  const prefix = `${uniqueName('t')}:`;
  const exchange = uniqueName('t_events');
  const dbs = new Map<ProcessService, TestDatabase>();
  let attachmentsDir: string | undefined;
  const stop = async () => {
    await procs.stop();
    for (const db of dbs.values()) await db.drop();
    if (attachmentsDir) await rm(attachmentsDir, { recursive: true, force: true });
    await clearRedisPrefix(prefix);
    await deleteRabbitPrefix(infra.amqpUrl, exchange);
  };
  try {
    const ports = new Map<ProcessService, number>();
    for (const s of running) {
      dbs.set(s, await createTestDatabase(s.replace('-', '_')));
      ports.set(s, await freePort());
    }
    const messagingHttp = await freePort();
    const gatewayPort = await freePort();
    const common: Record<string, string> = {
      JWT_SECRET: randomBytes(32).toString('hex'),
      INTERNAL_AUTH_SEED: internalAuthSeed,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      REDIS_PREFIX: prefix,
      REDIS_URL: infra.redisUrl,
      AMQP_URL: infra.amqpUrl,
      EVENTS_EXCHANGE: exchange,
      LOG_LEVEL: 'info',
      SIGNUP_ENABLED: 'true',
      METRICS_PORT: '0',
      DATABASE_POOL_SIZE: '5',
      MESSAGING_HTTP_URL: `http://127.0.0.1:${messagingHttp}`,
      ...Object.fromEntries(Object.entries(ADDR_VARS).map(([s, v]) => [v, `127.0.0.1:${ports.get(s as ProcessService) ?? 9}`])),
    };
    if (running.includes('messaging')) attachmentsDir = await mkdtemp(path.join(tmpdir(), 'process-stack-'));
    const own = (s: ProcessService): Record<string, string> =>
      s === 'messaging' ? { HTTP_PORT: String(messagingHttp), ATTACHMENTS_DIR: attachmentsDir! } : {};
    await Promise.all(
      running.map((s) =>
        procs.launch(
          s,
          { ...common, DATABASE_URL: dbs.get(s)!.url, GRPC_PORT: String(ports.get(s)), ...own(s), ...opts.serviceEnv?.[s] },
          `${s} listening`,
          opts.onLine?.[s],
        ),
      ),
    );
    await procs.launch('gateway', { ...common, PORT: String(gatewayPort), SERVICES: running.join(',') }, 'gateway listening');
    return {
      url: `http://127.0.0.1:${gatewayPort}`,
      exchange,
      databaseUrl: (s) => dbs.get(s)!.url,
      async query<T extends object>(s: ProcessService, sql: string, params: unknown[] = []) {
        const db = new PgClient({ connectionString: dbs.get(s)!.url });
        await db.connect();
        try {
          return (await db.query<T>(sql, params)).rows;
        } finally {
          await db.end();
        }
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** W3C trace context for a test: a new trace id and the `traceparent` header that continues it. */
export function newTrace(): { traceId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
}

/** The trace id of a `traceparent` (version 00), undefined for anything else. */
export function traceIdOf(traceparent: string | null | undefined): string | undefined {
  return /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/.exec(traceparent ?? '')?.[1];
}
