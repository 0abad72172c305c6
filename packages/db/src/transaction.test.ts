import { randomBytes } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { withRetriedTransaction, withTransaction, withTransactionOn } from './transaction';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('withRetriedTransaction', () => {
  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  const table = `t_retry_${randomBytes(4).toString('hex')}`;
  beforeAll(async () => {
    await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)`);
    await pool.query(`INSERT INTO ${table} (id) VALUES (1), (2)`);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });

  /** Two writers locking rows 1 and 2 in opposite orders, each waiting until the other holds its first row. */
  async function crossedWriters(run: (pool: Pool, fn: (tx: PoolClient) => Promise<void>) => Promise<void>) {
    let holding = 0;
    const bothHold = async () => {
      holding += 1;
      while (holding < 2) await new Promise((r) => setTimeout(r, 5));
    };
    let attempts = 0;
    const writer = (first: number, second: number) =>
      run(pool, async (tx) => {
        attempts += 1;
        await tx.query(`UPDATE ${table} SET n = n + 1 WHERE id = $1`, [first]);
        if (attempts <= 2) await bothHold(); // only the first attempts meet; a retry runs alone
        await tx.query(`UPDATE ${table} SET n = n + 1 WHERE id = $1`, [second]);
      });
    return Promise.allSettled([writer(1, 2), writer(2, 1)]);
  }

  it('runs a deadlock victim again, so both writers succeed and each change is applied once', async () => {
    const before = await pool.query<{ n: number }>(`SELECT sum(n)::int AS n FROM ${table}`);
    const results = await crossedWriters(withRetriedTransaction);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    const after = await pool.query<{ n: number }>(`SELECT sum(n)::int AS n FROM ${table}`);
    expect(after.rows[0].n - before.rows[0].n).toBe(4);
  });

  it('without it, the same crossing fails one writer with a deadlock', async () => {
    const results = await crossedWriters(withTransaction);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(failed.map((r) => (r.reason as { code?: string }).code)).toEqual(['40P01']);
  });

  it('does not retry other errors', async () => {
    let attempts = 0;
    await expect(
      withRetriedTransaction(pool, async (tx) => {
        attempts += 1;
        await tx.query('SELECT 1/0');
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(attempts).toBe(1);
  });
});

describe('withTransaction and a connection that dies inside it', () => {
  // One connection only: if the dead client went back to the pool, the next caller would be handed it.
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  const admin = new Pool({ connectionString: databaseUrl, max: 1 });
  // What the services' pools do (@crm/db createPool): a checked-out client reports its terminated backend as 'error'.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  afterAll(async () => {
    await pool.end();
    await admin.end();
  });

  it('gives the pool back its only connection, live, after the backend died mid-transaction (a dead client is destroyed, not reused or leaked)', async () => {
    const failure = withTransaction(pool, async (tx) => {
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      await tx.query('SELECT 1');
    });
    await expect(failure).rejects.toThrow();
    const { rows } = await withTransaction(pool, (tx) => tx.query<{ ok: number }>('SELECT 1 AS ok'));
    expect(rows[0].ok).toBe(1);
    expect(pool.totalCount).toBe(1);
  });
});

describe('withTransaction with statements sent alongside BEGIN and COMMIT', () => {
  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  const table = `t_trips_${randomBytes(4).toString('hex')}`;
  /** Every query text the pool's clients send, in order. */
  const sent: string[] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      if (typeof a[0] === 'string') sent.push(a[0]);
      return query(...a);
    };
  });
  beforeAll(() => pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY)`));
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });
  beforeEach(() => (sent.length = 0));

  it('sends the first statements with BEGIN and the last with COMMIT: two round trips, and fn gets the first ones results', async () => {
    const claimed = await withTransaction(pool, async (_tx, [inserted]) => inserted.rows.map((r: { id: number }) => r.id), {
      begin: `INSERT INTO ${table} (id) VALUES (1), (2) RETURNING id`,
      commit: (ids) => `INSERT INTO ${table} (id) VALUES (${ids.length + 1})`,
    });
    expect(claimed).toEqual([1, 2]);
    expect(sent).toEqual([`BEGIN; INSERT INTO ${table} (id) VALUES (1), (2) RETURNING id`, `INSERT INTO ${table} (id) VALUES (3); COMMIT`]);
    const { rows } = await pool.query(`SELECT id FROM ${table} ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual([1, 2, 3]);
  });

  it('rolls back what went with BEGIN when fn throws', async () => {
    await expect(
      withTransaction(pool, async () => Promise.reject(new Error('no')), { begin: `INSERT INTO ${table} (id) VALUES (10)` }),
    ).rejects.toThrow('no');
    expect(sent.at(-1)).toBe('ROLLBACK');
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE id = 10`);
    expect(rows[0].n).toBe(0);
  });

  it('on a connection the caller holds, keeps it (never released) and rolls back on failure', async () => {
    const held = await pool.connect();
    try {
      await expect(withTransactionOn(held, (tx) => tx.query('SELECT 1/0'))).rejects.toMatchObject({ code: '22012' });
      const { rows } = await withTransactionOn(held, (tx) => tx.query<{ ok: number }>('SELECT 1 AS ok'));
      expect(rows[0].ok).toBe(1);
      expect(sent.slice(-4)).toEqual(['ROLLBACK', 'BEGIN', 'SELECT 1 AS ok', 'COMMIT']);
    } finally {
      held.release();
    }
  });
});
