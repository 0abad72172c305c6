import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Pool, PoolClient, types } from 'pg';

export { Pool, PoolClient };
import { PatientPool } from './patient-pool';
import { withTransactionOn } from './transaction';
export { PatientPool };

// COUNT(*) and BIGINT come back as strings by default; every count we keep fits in a JS number.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));
// NUMERIC as a number: we store money and rates, not arbitrary-precision values.
types.setTypeParser(types.builtins.NUMERIC, (v) => Number(v));

export interface Migration {
  name: string;
  sql: string;
}

/** Minimal logger shape so this package does not depend on pino. */
interface Log {
  info(obj: object, msg?: string): void;
}

/** PostgreSQL's "too many clients already" (and a role's connection limit): the server is full for now. */
const TOO_MANY_CLIENTS = '53300';
/** How long a service's start waits for room on a full server (connectAdmin's wait, and the migrations' pool). */
const STARTUP_ROOM_WAIT_MS = 30_000;

/**
 * A one-off admin connection (create or drop a database), made when the server has room: a server full for a moment
 * (tests beside `npm start`, two test stacks starting at once) is waited for with backoff, as the pools wait
 * (patient-pool.ts), for up to `waitMs`; any other error is thrown at once. A backend terminated between its queries
 * fails the next query, not the process.
 */
export async function connectAdmin(connectionString: string, waitMs = STARTUP_ROOM_WAIT_MS): Promise<Client> {
  const deadline = Date.now() + waitMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    const client = new Client({ connectionString });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => undefined);
      if ((err as { code?: string }).code !== TOO_MANY_CLIENTS || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** Create the database named in `url` when it does not exist yet (each service owns its own database). */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const client = await connectAdmin(maintenanceUrl(url));
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } catch (err) {
        // Two instances starting together may race to create it; the loser sees duplicate_database.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  await dropDatabases([url]);
}

/**
 * Drop the databases the URLs name (on one server: the first's), through one connection to its maintenance database
 * (a connection costs the server more CPU than the statement: ~18 ms on the 2-core machine), each even when another
 * failed; the first failure is thrown at the end.
 */
export async function dropDatabases(urls: string[]): Promise<void> {
  if (urls.length === 0) return;
  const client = await connectAdmin(maintenanceUrl(urls[0]));
  let failure: unknown;
  try {
    for (const url of urls) {
      try {
        await client.query(`DROP DATABASE IF EXISTS "${databaseName(url)}" WITH (FORCE)`);
      } catch (err) {
        failure ??= err;
      }
    }
  } finally {
    await client.end();
  }
  if (failure) throw failure;
}

/** The database `url` names, checked to be letters, digits and _ (it goes into DDL). */
function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`Database name "${name}" must be letters, digits and _`);
  return name;
}

/** The maintenance database (`postgres`) of `url`'s server, for creating and dropping databases. */
function maintenanceUrl(url: string): string {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  return admin.toString();
}

/**
 * A service's pool. It may go through a transaction pooler (PgBouncer, pool_mode=transaction), so nothing that
 * outlives a transaction is sent through it: no start-up `options` (a pooler refuses or drops them; per-database
 * settings are `ALTER DATABASE ... SET` in a migration), no session-level SET, LISTEN or advisory lock (those use
 * DATABASE_DIRECT_URL: prepareDatabase, NotifyListener, the outbox relay).
 */
export function createPool(url: string, max = 10, opts: { roomWaitMs?: number; idleTimeoutMillis?: number } = {}): Pool {
  // min 1: a pool keeps one connection when idle, so a caller refused by a full server (another deployment, tests
  // beside `npm start`) waits in its pool's line for a connection of its own (LINE_WAIT_MS) instead of asking the
  // server for its first one and answering 503 after ROOM_WAIT_MS (patient-pool.ts).
  const pool = new PatientPool({
    connectionString: url,
    max,
    min: 1,
    idleTimeoutMillis: opts.idleTimeoutMillis ?? 30_000,
    roomWaitMs: opts.roomWaitMs,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // pg-pool listens for 'error' only on idle clients: a checked-out client (a consumer's batch transaction, a
  // claim loop between two statements) whose backend is terminated (a failover, pg_terminate_backend) emits
  // 'error' with nobody listening, and Node ends the process. Its holder learns of the loss from its next query
  // (it rejects), and release() discards a client that is no longer queryable, so the listener only keeps the
  // process alive.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Readiness of a service's database: one `SELECT 1` through its pool (the caller bounds the wait). A pool
 * whose every connection is busy answers late, which is the truth about whether the service can take work.
 */
export async function databaseAnswers(pool: Pool): Promise<void> {
  await pool.query('SELECT 1');
}

/** PostgreSQL's invalid_catalog_name: the database named in the connection does not exist. */
const NO_SUCH_DATABASE = '3D000';

/**
 * Start-up: create the service's database when missing and apply its migrations, over the direct connection
 * (DATABASE_DIRECT_URL), never through a transaction pooler: migrate() holds a session-level advisory lock across
 * its transactions, and ensureDatabase connects to the `postgres` maintenance database. The database is created
 * only when connecting to it says it does not exist: every later start (a restart, each replica) then makes one
 * connection, not a second one to the maintenance database as well (a connection costs the server more CPU than
 * the statements of a start that finds nothing to migrate: ~18 ms on the 2-core machine). Its one connection is
 * closed when done.
 */
export async function prepareDatabase(directUrl: string, migrationsDir: string, log?: Log): Promise<string[]> {
  // Starting is no request with a deadline: a server full for now (tests beside `npm start`, a deployment scaling
  // out) is waited for as long as ensureDatabase waits, rather than the start failing after ROOM_WAIT_MS.
  const pool = createPool(directUrl, 1, { roomWaitMs: STARTUP_ROOM_WAIT_MS });
  try {
    try {
      return await migrate(pool, migrationsDir, log);
    } catch (err) {
      if ((err as { code?: string }).code !== NO_SUCH_DATABASE) throw err;
      await ensureDatabase(directUrl);
      return await migrate(pool, migrationsDir, log);
    }
  } finally {
    await pool.end();
  }
}

export async function loadMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  return Promise.all(files.map(async (name) => ({ name, sql: await readFile(path.join(dir, name), 'utf8') })));
}

/**
 * Forward-only migrations: each file runs once, in order, in its own transaction. An advisory lock
 * keeps two instances starting at the same time from applying the same file twice; it is held by the session
 * across the transactions, so `pool` must reach PostgreSQL directly (services call prepareDatabase).
 */
export async function migrate(pool: Pool, dir: string, log?: Log): Promise<string[]> {
  const migrations = await loadMigrations(dir);
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock(72707369)');
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      try {
        await withTransactionOn(client, async (tx) => {
          await tx.query(m.sql);
          await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [m.name]);
        });
      } catch (err) {
        throw new Error(`Migration ${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.name);
      log?.info({ migration: m.name }, 'migration applied');
    }
  } finally {
    // A connection that cannot say it let go of the lock (broken, or stuck mid-transaction) may still hold it: it is
    // destroyed rather than handed back to the pool, where it would keep every other migrator waiting.
    let broken: Error | undefined;
    await client.query('SELECT pg_advisory_unlock(72707369)').catch((err: Error) => {
      broken = err;
    });
    client.release(broken);
  }
  return applied;
}

/** Queries that can run on a pool or inside a transaction take this. */
export type Queryable = Pool | PoolClient;

/** Page/limit to SQL LIMIT/OFFSET with the totals every internal list returns. */
export interface PageRequest {
  page: number;
  limit: number;
}
export function pagination(req: PageRequest, total: number) {
  return { total, page: req.page, limit: req.limit, pages: req.limit > 0 ? Math.ceil(total / req.limit) : 0 };
}
export function offsetOf(req: PageRequest): number {
  return (req.page - 1) * req.limit;
}

/** Timestamps leave the service as ISO 8601 UTC strings with milliseconds. */
export function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
/** For nullable columns: proto `optional` fields stay absent rather than becoming "". */
export function isoOrUndefined(value: Date | string | null | undefined): string | undefined {
  return value === null || value === undefined ? undefined : iso(value);
}
export { ClaimLoop } from './claim-loop';
export { NotifyListener, type NotifyListenerOptions } from './notify-listener';
export type { ClaimBatch, ClaimLoopOptions } from './claim-loop';
export { afterSql, isKeysetPosition, keysetPage, keyTimeSql, readKeyset } from './keyset';
export type { Keyset, KeysetPosition, KeysetRequest } from './keyset';
export { escapeLike } from './like';
export { isRetryableConflict, withRetriedTransaction, withTransaction, withTransactionOn, type TransactionTrips } from './transaction';
export { isUuid } from './uuid';
export { coalescedReads, isPool, type CoalescedReadsOptions } from './coalesced-reads';
export { rotateSecrets } from './secret-rotation';
export type { EncryptedColumn, RotatingBox, RotationResult } from './secret-rotation';
