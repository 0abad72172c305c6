import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from 'pg';
import { connectAdmin, createPool, dropDatabases, migrate } from '@crm/db';
import { markRecyclable } from './recycled-databases';

/**
 * Migrated template databases, one per migration set and test run: a test file's services find their schema in
 * place in a copy instead of migrating at start (0.1-0.5 s of PostgreSQL work per service and file, the schema's
 * DDL done again in every one). Named after the run (TEST_RUN_ID, set by globalSetup and inherited by the workers),
 * so concurrent runs on the shared server never share one, and dropped by globalTeardown.
 */
const TEMPLATE_PREFIX = 't_tpl_';

/** The run's id, set once by globalSetup: letters and digits only, it goes into database names. */
export function newTestRunId(now = Date.now()): string {
  return `${now.toString(36).padStart(9, '0')}${Math.random().toString(36).slice(2, 6).padEnd(4, '0')}`;
}

/** When the run named `runId` started (its first nine characters), or undefined for a name not made by newTestRunId. */
export function runStartedAt(runId: string): number | undefined {
  const at = /^[0-9a-z]{13}$/.test(runId) ? parseInt(runId.slice(0, 9), 36) : NaN;
  return Number.isFinite(at) ? at : undefined;
}

/** Identifies a set of migrations by their names and contents: a changed file makes another template. */
function migrationsHash(dir: string): string {
  const hash = createHash('sha1');
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort())
    hash.update(file).update(readFileSync(path.join(dir, file)));
  return hash.digest('hex').slice(0, 10);
}

const made = new Map<string, Promise<void>>();

/** A connection to the maintenance database, made when the server has room (a full server is waited for). */
export function adminClient(databaseUrl: string): Promise<Client> {
  return connectAdmin(databaseUrlNamed(databaseUrl, 'postgres'));
}

/**
 * The template of `migrationsDir` for this run, made if no worker has made it yet (an advisory lock on the server
 * lets one worker make it while the others wait), through `admin`: the caller's connection to the maintenance
 * database, which then copies it (a connection costs the server more CPU than the statements of a copy: ~18 ms on
 * the 2-core machine). Closed to connections once migrated, so that nothing holds it while it is copied.
 */
export function migratedTemplate(admin: Client, databaseUrl: string, runId: string, label: string, migrationsDir: string): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${runId}_${label}_${migrationsHash(migrationsDir)}`;
  if (!made.has(name)) {
    const making = makeTemplate(admin, databaseUrl, name, migrationsDir);
    made.set(name, making);
    making.catch(() => made.delete(name));
  }
  return made.get(name)!.then(() => name);
}

async function makeTemplate(admin: Client, databaseUrl: string, name: string, migrationsDir: string): Promise<void> {
  await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return;
    await admin.query(`CREATE DATABASE "${name}"`);
    const pool = createPool(databaseUrlNamed(databaseUrl, name), 1);
    try {
      await migrate(pool, migrationsDir);
      await markRecyclable(admin, pool, name);
    } finally {
      await pool.end();
    }
    await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
  } finally {
    await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch(() => undefined);
  }
}

/**
 * A new database copied from a template, through `admin` (see migratedTemplate): its schema and rows, and the
 * settings a migration gave the template with `ALTER DATABASE ... SET` (messaging's planner settings), which
 * CREATE DATABASE ... TEMPLATE does not copy.
 */
export async function copyDatabase(admin: Client, template: string, name: string): Promise<void> {
  await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  const { rows } = await admin.query<{ setting: string }>(
    `SELECT unnest(s.setconfig) AS setting FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
     WHERE d.datname = $1 AND s.setrole = 0`,
    [template],
  );
  for (const { setting } of rows) {
    const at = setting.indexOf('=');
    await admin.query(`ALTER DATABASE "${name}" SET "${setting.slice(0, at)}" = '${setting.slice(at + 1).replace(/'/g, "''")}'`);
  }
}

/**
 * Templates of runs that started more than `maxAgeMs` ago (a run killed before its globalTeardown leaves its own on
 * the shared server): dropped by the next run's globalSetup. No run lasts that long, so none is in use.
 */
export function dropStaleTemplates(databaseUrl: string, maxAgeMs: number, now = Date.now()): Promise<string[]> {
  return dropTemplatesOf(databaseUrl, (runId) => {
    const at = runStartedAt(runId);
    return at !== undefined && now - at > maxAgeMs;
  });
}

/** Drop the run's templates (globalTeardown). */
export async function dropTemplates(databaseUrl: string, runId: string): Promise<void> {
  await dropTemplatesOf(databaseUrl, (id) => id === runId);
}

/** Drops the templates whose run id `which` selects; returns their names. */
async function dropTemplatesOf(databaseUrl: string, which: (runId: string) => boolean): Promise<string[]> {
  const admin = await adminClient(databaseUrl);
  let names: string[];
  try {
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [TEMPLATE_PREFIX]);
    names = rows.map((r) => r.datname).filter((name) => which(name.slice(TEMPLATE_PREFIX.length).split('_')[0]));
  } finally {
    await admin.end();
  }
  await dropDatabases(names.map((name) => databaseUrlNamed(databaseUrl, name)));
  return names;
}

/** The same server, another database. */
function databaseUrlNamed(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
