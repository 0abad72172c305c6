import { randomBytes } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { ClaimLoop } from './claim-loop';

// ClaimLoop as the timer facility (nextDueInMs): due rows in PostgreSQL, each instance sleeping until the nearest
// one, woken early by a NOTIFY of an earlier one; fired within 2 s of the due time, once across instances.
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const silent = { warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ClaimLoop with nextDueInMs (timers)', () => {
  const table = `due_timer_test_${randomBytes(4).toString('hex')}`;
  const channel = `${table}_due`;
  let db: Pool;
  const loops: ClaimLoop<{ id: number; due_at: Date }>[] = [];
  const fired: { id: number; dueAt: number; at: number; instance: number }[] = [];

  beforeAll(async () => {
    db = new Pool({ connectionString: databaseUrl, max: 4 });
    await db.query(`CREATE TABLE ${table} (id int PRIMARY KEY, due_at timestamptz NOT NULL, lease_until timestamptz, fired_at timestamptz)`);
  });
  afterAll(async () => {
    await Promise.all(loops.map((l) => l.stop()));
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.end();
  });

  const instance = (n: number) => {
    const loop = new ClaimLoop<{ id: number; due_at: Date }>({
      name: `timer ${n}`,
      databaseUrl,
      channel,
      concurrency: 4,
      log: silent,
      claim: async (free) =>
        (
          await db.query(
            `UPDATE ${table} SET lease_until = now() + interval '30 seconds' WHERE id IN (
               SELECT id FROM ${table} WHERE fired_at IS NULL AND due_at <= now() AND (lease_until IS NULL OR lease_until < now())
               ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING id, due_at`,
            [free],
          )
        ).rows,
      work: async (row) => {
        fired.push({ id: row.id, dueAt: row.due_at.getTime(), at: Date.now(), instance: n });
        await db.query(`UPDATE ${table} SET fired_at = now() WHERE id = $1`, [row.id]);
      },
      nextDueInMs: async () => {
        const r = await db.query(
          `SELECT extract(epoch FROM min(greatest(due_at, coalesce(lease_until, due_at))) - now()) * 1000 AS ms FROM ${table} WHERE fired_at IS NULL`,
        );
        return r.rows[0].ms === null ? null : Number(r.rows[0].ms);
      },
    });
    loops.push(loop);
    return loop;
  };

  /** Writes a due row and announces it, as an owner does in the transaction that writes it. */
  const schedule = async (id: number, inMs: number) => {
    const tx: PoolClient = await db.connect();
    try {
      await tx.query('BEGIN');
      await tx.query(`INSERT INTO ${table} (id, due_at) VALUES ($1, now() + $2 * interval '1 millisecond')`, [id, inMs]);
      await tx.query(`SELECT pg_notify($1, '')`, [channel]);
      await tx.query('COMMIT');
    } finally {
      tx.release();
    }
  };

  it('fires each row within 2 s of its time, once across two instances, with no poll, the earlier written later still first', async () => {
    await instance(1).start();
    await instance(2).start();
    // Far enough apart that the order of the due times holds however slowly a loaded machine writes them.
    await schedule(1, 4000);
    await schedule(2, 600); // earlier than the one the instances sleep for: the NOTIFY re-arms them
    await schedule(3, 1800);
    const until = Date.now() + 10_000;
    while (fired.length < 3 && Date.now() < until) await sleep(20);
    await sleep(300);
    expect(fired.map((f) => f.id)).toEqual([2, 3, 1]);
    for (const f of fired) {
      const late = f.at - f.dueAt;
      expect(late).toBeGreaterThanOrEqual(-50);
      expect(late).toBeLessThan(2000);
    }
  });

  it('a row due while no instance ran fires when one starts, and a row whose lease ran out fires again', async () => {
    await Promise.all(loops.splice(0).map((l) => l.stop()));
    fired.length = 0;
    await db.query(`INSERT INTO ${table} (id, due_at) VALUES (10, now() - interval '1 second')`);
    // Claimed by an instance that died: its lease ends in 800 ms.
    const leaseEnd = (
      await db.query(
        `INSERT INTO ${table} (id, due_at, lease_until) VALUES (11, now() - interval '1 second', now() + interval '800 milliseconds') RETURNING lease_until`,
      )
    ).rows[0].lease_until.getTime();
    await instance(3).start();
    const until = Date.now() + 10_000;
    while (fired.length < 2 && Date.now() < until) await sleep(20);
    expect(fired.map((f) => f.id)).toEqual([10, 11]);
    // Measured from the lease's end (not from a start that a loaded machine may make late): not before it, and
    // within the timers' 2 s after it.
    expect(fired[1].at - leaseEnd).toBeGreaterThanOrEqual(-50);
    expect(fired[1].at - leaseEnd).toBeLessThan(2000);
  });
});
