import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createPool, ensureDatabase, migrate } from './index';

// Forward-only migrations, each in its own transaction (withTransactionOn on the connection that holds the advisory
// lock): a failing file leaves nothing of itself, the files before it stay applied, and the lock is let go.
describe('migrate', () => {
  const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `migrate_${randomBytes(4).toString('hex')}`;
  const url = Object.assign(new URL(baseUrl), { pathname: `/${name}` }).toString();
  const admin = new Client({ connectionString: baseUrl });
  let dir: string;

  beforeAll(async () => {
    await admin.connect();
    await ensureDatabase(url);
    dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  });

  it('a failing file is rolled back whole and named; the ones before it stay; a later run applies the fixed one', async () => {
    await writeFile(path.join(dir, '001_first.sql'), 'CREATE TABLE first (id int)');
    await writeFile(path.join(dir, '002_second.sql'), 'CREATE TABLE second (id int); SELECT no_such_function()');
    const pool = createPool(url, 2);
    try {
      await expect(migrate(pool, dir)).rejects.toThrow(/^Migration 002_second\.sql failed: function no_such_function\(\) does not exist/);
      const tables = async () =>
        (await pool.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).rows.map((r) => r.t);
      expect(await tables()).toEqual(['first', 'schema_migrations']);
      // The advisory lock was let go: another session takes it at once.
      const other = new Client({ connectionString: url });
      await other.connect();
      try {
        expect((await other.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(72707369) AS ok')).rows[0].ok).toBe(true);
      } finally {
        await other.end();
      }
      await writeFile(path.join(dir, '002_second.sql'), 'CREATE TABLE second (id int)');
      expect(await migrate(pool, dir)).toEqual(['002_second.sql']);
      expect(await tables()).toEqual(['first', 'schema_migrations', 'second']);
      expect(await migrate(pool, dir)).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
