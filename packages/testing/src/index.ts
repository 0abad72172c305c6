import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { createPool, dropDatabase, dropDatabases, ensureDatabase, type Pool } from '@crm/db';
import { devInternalAuth, type InternalAuth, type InternalPrincipal } from '@crm/grpc-kit';
import { park, takeParked } from './recycled-databases';
import { adminClient, copyDatabase, migratedTemplate } from './templates';

/**
 * Real infrastructure for tests. The servers given by DATABASE_URL / AMQP_URL / REDIS_URL (defaults:
 * the local ones every developer and CI machine runs) are shared and outlive a run, so every test gets
 * uniquely named databases, exchanges and Redis key prefixes and removes them afterwards.
 */
export const infra = {
  databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
};

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase();
}

/** URL of the shared server with a different database name. */
export function databaseUrlFor(name: string): string {
  const url = new URL(infra.databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A test's own pool on a database of the shared server: a service's pool (createPool) with no connection yet gives up
 * after ROOM_WAIT_MS (3 s, to answer 503 within an internal call's deadline), but a test checking the services' work
 * while three jest workers' stacks (or `npm start`) fill the server has no deadline to keep: it waits for room up to
 * 30 s, as connectPatiently and the database copies do (CI failed once on a one-connection pool after 3 s).
 */
export function testPool(url: string, max = 4): Pool {
  return createPool(url, max, { roomWaitMs: 30_000 });
}

export interface TestDatabase {
  url: string;
  name: string;
  /** The migrated template it is a copy of: when dropped it is emptied and parked for a later file (recycled-databases.ts). */
  template?: string;
  drop(): Promise<void>;
}

/**
 * A fresh database with `migrationsDir` applied, copied from this run's migrated template of it (templates.ts):
 * the service under test finds nothing to migrate at start. Outside a jest run (no TEST_RUN_ID) an empty one. One
 * connection to the server looks for (or makes) the template and copies it.
 */
export async function createMigratedDatabase(prefix: string, migrationsDir: string): Promise<TestDatabase> {
  const runId = process.env.TEST_RUN_ID;
  if (!runId) return createTestDatabase(prefix);
  const name = uniqueName(`t_${prefix}`);
  const admin = await adminClient(infra.databaseUrl);
  let template: string;
  try {
    template = await migratedTemplate(admin, infra.databaseUrl, runId, prefix, migrationsDir);
    if (!(await takeParked(admin, template, name))) await copyDatabase(admin, template, name);
  } finally {
    await admin.end();
  }
  const database: TestDatabase = { url: databaseUrlFor(name), name, template, drop: () => dropTestDatabases([database]) };
  return database;
}

/**
 * Done with test databases (a stack's, when it stops), through one connection: a copy of a migrated template is
 * emptied and parked for a later file when it may be (recycled-databases.ts), anything else is dropped (@crm/db's
 * dropDatabases). Either way the name is gone.
 */
export async function dropTestDatabases(databases: TestDatabase[]): Promise<void> {
  const toDrop: string[] = [];
  const recyclable = databases.filter((d) => d.template);
  if (recyclable.length > 0) {
    const admin = await adminClient(infra.databaseUrl);
    try {
      for (const d of recyclable) {
        const outcome = await park(admin, databaseUrlFor, d.template!, d.name).catch(() => ({ parked: false as const, nameNow: d.name }));
        if (!outcome.parked) toDrop.push(outcome.nameNow);
      }
    } finally {
      await admin.end();
    }
  }
  toDrop.push(...databases.filter((d) => !d.template).map((d) => d.name));
  await dropDatabases(toDrop.map(databaseUrlFor));
}

/** A fresh, empty database on the shared server; the service under test migrates it at start. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = uniqueName(`t_${prefix}`);
  const url = databaseUrlFor(name);
  await ensureDatabase(url);
  return { url, name, drop: () => dropDatabase(url) };
}

/**
 * Free TCP port on loopback, for servers that need a port before they start. Under jest each worker takes
 * ports from its own range below the OS ephemeral range: a service restarted by a test rebinds its old
 * port, and a port the OS handed to another worker in the meantime made that fail (EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.JEST_WORKER_ID ?? 0);
  if (!worker) return osPort();
  const span = 3000;
  const base = 20_000 + ((worker - 1) % 4) * span;
  nextOffset ??= Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    const port = base + (nextOffset++ % span);
    if (await canBind(port)) return port;
  }
  return osPort();
}

let nextOffset: number | undefined;

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function osPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Delete every Redis key under a test's prefix. */
let newCleanupClient: ReturnType<typeof import('@redis/client/dist/lib/client').default.factory> | undefined;

export async function clearRedisPrefix(prefix: string): Promise<void> {
  // One attempt, no reconnection: a cleanup against an unreachable Redis should fail the run, not hang it. The
  // client class is made once per process (node-redis's createClient builds one per client: see @crm/redis).
  newCleanupClient ??= (await import('@redis/client/dist/lib/client')).default.factory();
  const redis = newCleanupClient({ url: infra.redisUrl, socket: { reconnectStrategy: false } });
  // node-redis throws an unheard 'error' event; the failure reaches us through the awaited calls instead.
  redis.on('error', () => undefined);
  await redis.connect();
  try {
    for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
      if (keys.length) await redis.del(keys);
    }
  } finally {
    redis.destroy();
  }
}

/** Poll until `fn` returns a truthy value or the time runs out (for effects that arrive through events). */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const until = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > until) throw new Error(`eventually: timed out after ${timeoutMs} ms${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
export { deleteRabbitPrefix } from './rabbit';
export { dropStaleTemplates, newTestRunId, runStartedAt } from './templates';

/**
 * The development seed of the internal credential for this test process: random per run, shared by every stack
 * and fake server the process starts, so a fake service verifies what the real ones sign (and the reverse).
 */
export const internalAuthSeed = randomBytes(32).toString('hex');

/** The internal credential of `self` under this process's seed: a test acting as the gateway, or a fake service. */
export function testAuth(self: InternalPrincipal): InternalAuth {
  return devInternalAuth(self, internalAuthSeed);
}
