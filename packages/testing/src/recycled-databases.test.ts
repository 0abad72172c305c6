import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createMigratedDatabase, databaseUrlFor, dropTestDatabases, type TestDatabase } from './index';

// Test databases emptied and parked for a later file instead of dropped (recycled-databases.ts): what comes back is
// what a fresh copy of the template is, under the new file's name; a database a test changed, or a template with
// rows, is dropped as before; concurrent takers never share one.
describe('recycled test databases', () => {
  const dirs: string[] = [];
  let admin: Client;

  /** A migrations folder of its own (a template of its own): `sql` plus a marker that makes it unique to this run. */
  const migrations = (sql: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'recycled-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, '001_init.sql'), `-- ${randomBytes(6).toString('hex')}\n${sql}`);
    return dir;
  };
  const SCHEMA = `CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL);
    CREATE TABLE tags (item_id bigint REFERENCES items (id), tag text NOT NULL);
    CREATE TABLE untouched (n int);
    CREATE SEQUENCE free_seq;`;
  /** One at a time: `admin` is one connection. */
  const oidsOf = async (dbs: TestDatabase[]) => {
    const oids: number[] = [];
    for (const d of dbs) oids.push(await oidOf(d.name));
    return oids;
  };
  const oidOf = async (name: string) => (await admin.query('SELECT oid::int AS oid FROM pg_database WHERE datname = $1', [name])).rows[0]?.oid;
  const parkedOf = async (template: string) =>
    (
      await admin.query<{ datname: string; oid: number }>('SELECT datname, oid::int AS oid FROM pg_database WHERE starts_with(datname, $1)', [
        `${template}_p`,
      ])
    ).rows;
  const withDb = async <T>(db: TestDatabase, fn: (c: Client) => Promise<T>) => {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    admin = new Client({ connectionString: databaseUrlFor('postgres') });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('comes back empty, its sequences restarted and its statistics cleared, under the next name', async () => {
    const dir = migrations(SCHEMA);
    const first = await createMigratedDatabase('recycled', dir);
    const oid = await oidOf(first.name);
    await withDb(first, async (c) => {
      await c.query(`INSERT INTO items (name) SELECT 'item ' || g FROM generate_series(1, 50) g`);
      await c.query(`INSERT INTO tags SELECT id, 'hot' FROM items`);
      await c.query(`SELECT nextval('free_seq'), nextval('free_seq')`);
      await c.query('ANALYZE items');
      // As a service's start makes its outbox: a table the template does not have.
      await c.query('CREATE TABLE made_at_start (seq bigserial PRIMARY KEY, data jsonb)');
      await c.query(`INSERT INTO made_at_start (data) VALUES ('{}')`);
    });
    await dropTestDatabases([first]);
    expect(await oidOf(first.name)).toBeUndefined();
    expect((await parkedOf(first.template!)).map((p) => p.oid)).toEqual([oid]);

    const second = await createMigratedDatabase('recycled', dir);
    expect(second.name).not.toBe(first.name);
    expect(await oidOf(second.name)).toBe(oid);
    expect(await parkedOf(first.template!)).toEqual([]);
    const state = await withDb(second, async (c) => ({
      items: (await c.query('SELECT count(*)::int AS n FROM items')).rows[0].n,
      tags: (await c.query('SELECT count(*)::int AS n FROM tags')).rows[0].n,
      nextId: (await c.query(`INSERT INTO items (name) VALUES ('again') RETURNING id::int`)).rows[0].id,
      nextFree: (await c.query(`SELECT nextval('free_seq')::int AS n`)).rows[0].n,
      stats: (await c.query(`SELECT count(*)::int AS n FROM pg_statistic WHERE starelid = 'items'::regclass`)).rows[0].n,
      migrations: (await c.query('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
      madeAtStart: (await c.query(`SELECT to_regclass('made_at_start') AS t`)).rows[0].t,
    }));
    expect(state).toEqual({ items: 0, tags: 0, nextId: 1, nextFree: 1, stats: 0, migrations: ['001_init.sql'], madeAtStart: null });
    await dropTestDatabases([second]);
  });

  it('a database whose schema a test changed, or whose migrations it added to, is dropped, not parked', async () => {
    const dir = migrations(SCHEMA);
    const altered = await createMigratedDatabase('recycled', dir);
    const added = await createMigratedDatabase('recycled', dir);
    const oids = [await oidOf(altered.name), await oidOf(added.name)];
    await withDb(altered, (c) => c.query('ALTER TABLE items ADD COLUMN note text'));
    await withDb(added, (c) => c.query(`INSERT INTO schema_migrations (name) VALUES ('002_more.sql')`));
    await dropTestDatabases([altered, added]);
    const left = await admin.query('SELECT datname FROM pg_database WHERE oid = ANY($1::oid[])', [oids]);
    expect(left.rows).toEqual([]);
    expect(await parkedOf(altered.template!)).toEqual([]);
  });

  it('a session left open on it is ended, and the database still parked', async () => {
    const dir = migrations(SCHEMA);
    const db = await createMigratedDatabase('recycled', dir);
    const oid = await oidOf(db.name);
    const leftOpen = new Client({ connectionString: db.url });
    const ended = new Promise<Error>((resolve) => leftOpen.on('error', resolve));
    await leftOpen.connect();
    await leftOpen.query(`INSERT INTO items (name) VALUES ('x')`);
    await db.drop();
    expect(((await ended) as Error & { code?: string }).code).toBe('57P01');
    await leftOpen.end().catch(() => undefined);
    expect((await parkedOf(db.template!)).map((p) => p.oid)).toEqual([oid]);
    await dropTestDatabases([await createMigratedDatabase('recycled', dir)]);
  });

  it('concurrent takers each get a database of their own; the parked ones are taken once', async () => {
    const dir = migrations(SCHEMA);
    const made = await Promise.all([1, 2].map(() => createMigratedDatabase('recycled', dir)));
    const parkedOids = await oidsOf(made);
    await dropTestDatabases(made);
    expect((await parkedOf(made[0].template!)).map((p) => p.oid).sort()).toEqual([...parkedOids].sort());
    const taken = await Promise.all([1, 2, 3, 4].map(() => createMigratedDatabase('recycled', dir)));
    const oids = await oidsOf(taken);
    expect(new Set(oids).size).toBe(4);
    expect(oids.filter((o) => parkedOids.includes(o)).sort()).toEqual([...parkedOids].sort());
    await dropTestDatabases(taken);
  });

  it('copies of a template that has rows of its own are dropped, not parked', async () => {
    const dir = migrations(`${SCHEMA} INSERT INTO items (name) VALUES ('seeded');`);
    const db = await createMigratedDatabase('recycled', dir);
    const oid = await oidOf(db.name);
    await dropTestDatabases([db]);
    expect(await admin.query('SELECT 1 FROM pg_database WHERE oid = $1', [oid])).toMatchObject({ rowCount: 0 });
    expect(await parkedOf(db.template!)).toEqual([]);
  });
});
