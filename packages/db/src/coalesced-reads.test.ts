import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { coalescedReads, isPool } from './coalesced-reads';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

// Reads by key asked in the same turn share one query; each asker still gets its own row (or nothing), and a failure
// reaches every asker of that query.
describe('coalescedReads', () => {
  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  const table = `t_coalesced_${randomBytes(4).toString('hex')}`;
  const queries: string[] = [];
  const read = coalescedReads<string, { id: string; name: string }>({
    keyOf: (k) => k.toLowerCase(),
    one: async (db, k) => {
      queries.push(`one ${k}`);
      return (await db.query(`SELECT id, name FROM ${table} WHERE id = $1`, [k.toLowerCase()])).rows[0];
    },
    many: async (db, keys) => {
      queries.push(`many ${keys.join(',')}`);
      if (keys.includes('boom')) throw new Error('the batched read failed');
      const { rows } = await db.query<{ id: string; name: string }>(`SELECT id, name FROM ${table} WHERE id = ANY($1)`, [
        keys.map((k) => k.toLowerCase()),
      ]);
      return rows.map((r): [string, { id: string; name: string }] => [r.id, r]);
    },
  });

  beforeAll(async () => {
    await pool.query(`CREATE TABLE ${table} (id text PRIMARY KEY, name text NOT NULL)`);
    await pool.query(`INSERT INTO ${table} VALUES ('a', 'Ann'), ('b', 'Bo'), ('c', 'Cy')`);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });
  beforeEach(() => {
    queries.length = 0;
  });

  it('answers the reads of one turn with one query, each with its own row, a missing one with nothing', async () => {
    const rows = await Promise.all(['a', 'b', 'missing', 'c'].map((k) => read(pool, k)));
    expect(rows.map((r) => r?.name)).toEqual(['Ann', 'Bo', undefined, 'Cy']);
    expect(queries).toEqual(['many a,b,missing,c']);
  });

  it('asks once for a key asked twice (keys compared as keyOf makes them), and answers both', async () => {
    const rows = await Promise.all([read(pool, 'a'), read(pool, 'A'), read(pool, 'b')]);
    expect(rows.map((r) => r?.name)).toEqual(['Ann', 'Ann', 'Bo']);
    expect(queries).toEqual(['many a,b']);
  });

  it('reads a key alone in its turn with the single read, and later turns with queries of their own', async () => {
    expect((await read(pool, 'c'))?.name).toBe('Cy');
    await Promise.all([read(pool, 'a'), read(pool, 'b')]);
    expect(queries).toEqual(['one c', 'many a,b']);
  });

  it("fails every read of a query that failed, and the next turn's reads are not affected", async () => {
    const settled = await Promise.allSettled([read(pool, 'a'), read(pool, 'boom')]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toEqual(new Error('the batched read failed'));
    expect((await Promise.all([read(pool, 'a'), read(pool, 'b')])).map((r) => r?.name)).toEqual(['Ann', 'Bo']);
  });

  it('keeps the reads of different pools apart', async () => {
    const other = new Pool({ connectionString: databaseUrl, max: 1 });
    try {
      const rows = await Promise.all([read(pool, 'a'), read(other, 'b')]);
      expect(rows.map((r) => r?.name)).toEqual(['Ann', 'Bo']);
      expect(queries.sort()).toEqual(['one a', 'one b']);
    } finally {
      await other.end();
    }
  });

  it('tells a pool from a client checked out for a transaction', async () => {
    const client = await pool.connect();
    try {
      expect(isPool(pool)).toBe(true);
      expect(isPool(client)).toBe(false);
    } finally {
      client.release();
    }
  });
});
