import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { oneConnectionRole } from './test-support/one-connection-role';
import { createPool } from './index';
import { HOLD_MS, ROOM_WAIT_MS } from './patient-pool';

// PostgreSQL refusing a connection for lack of room (53300: max_connections, or a role's CONNECTION LIMIT as here)
// makes a pool's caller wait for room, not fail at once: a test suite beside `npm start` on one server must not turn
// a moment of contention into 503s.
describe('createPool: queues while the server has no room', () => {
  const { baseUrl, url: asRole, admin } = oneConnectionRole('patient_pool');

  it('a query waits while another holder has the only connection the server allows, then runs', async () => {
    const holder = new Client({ connectionString: asRole });
    await holder.connect();
    const pool = createPool(asRole, 2);
    try {
      const started = Date.now();
      const query = pool.query<{ n: number }>('SELECT 1 AS n');
      // Refused (53300) while the holder is connected; served once it leaves.
      await new Promise((r) => setTimeout(r, 400));
      await holder.end();
      const res = await query;
      expect(res.rows[0].n).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      // connect() waits the same way (a transaction's checkout).
      const client = await pool.connect();
      client.release();
    } finally {
      await holder.end().catch(() => undefined);
      await pool.end();
    }
  });

  it('under a steady load each refused caller waits its turn for a released connection, longer than ROOM_WAIT_MS in all', async () => {
    // The server allows this pool 2 of its 10 connections; 40 queries of 200 ms need 4 s of those 2, more than
    // ROOM_WAIT_MS. Asking the server again would let later callers take the released connections until an early
    // caller's wait ran out (53300, a 503 at the gateway); waiting in the pool's queue serves every one of them.
    const pair = `patient_pool_pair_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE ROLE ${pair} LOGIN CONNECTION LIMIT 2`);
    const pool = createPool(Object.assign(new URL(baseUrl), { username: pair, password: '' }).toString(), 10);
    try {
      const started = Date.now();
      const results = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) => pool.query<{ i: number }>('SELECT $1::int AS i, pg_sleep(0.2)', [i])),
      );
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value.rows[0].i : -1))).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(Date.now() - started).toBeGreaterThan(ROOM_WAIT_MS);
      // Once the hold is over the pool asks for more again (the server still refuses: it stays usable).
      await new Promise((r) => setTimeout(r, HOLD_MS + 50));
      expect((await pool.query<{ n: number }>('SELECT 1 AS n')).rows[0].n).toBe(1);
    } finally {
      await pool.end();
      await admin.query(`DROP ROLE IF EXISTS ${pair}`);
    }
  }, 20_000);

  it('callers that keep arriving neither fail nor push back those already in line, however long the line is', async () => {
    // 30 callers at once, then one every 500 ms, queries of 400 ms, and the server allows the pool 2 connections: the
    // first in line has waited longer than ROOM_WAIT_MS while others still arrive. Each newcomer after a hold ends
    // the hold, its new connection is refused, and pg-pool asks the server again for the first in line, who is refused
    // too. That caller has connections of the pool's own to wait for: it keeps its place in line and waits, however
    // long it has waited already (before: a refusal after ROOM_WAIT_MS reached it, a 503 in the middle of the load;
    // and a refused caller went to the back of the line, waiting 6 s where its turn came after 2).
    const pair = `patient_pool_line_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE ROLE ${pair} LOGIN CONNECTION LIMIT 2`);
    const pool = createPool(Object.assign(new URL(baseUrl), { username: pair, password: '' }).toString(), 10);
    try {
      const waits: Promise<number>[] = [];
      const ask = () => {
        const asked = Date.now();
        waits.push(pool.query('SELECT pg_sleep(0.4)').then(() => Date.now() - asked));
      };
      for (let i = 0; i < 30; i++) ask();
      for (let i = 0; i < 12; i++) {
        await new Promise((r) => setTimeout(r, 500));
        ask();
      }
      const results = await Promise.allSettled(waits);
      expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason?.code)).toEqual([]);
      const took = results.map((r) => (r as PromiseFulfilledResult<number>).value);
      expect(Math.max(...took)).toBeGreaterThan(ROOM_WAIT_MS);
      // In turn: the n-th of the first 30 is served in its pair's round of 400 ms, give or take 2 s for a loaded machine
      // (a caller sent to the back of the line waited about 6 s).
      const late = took.slice(0, 30).flatMap((ms, n) => (ms > (Math.floor(n / 2) + 1) * 400 + 2000 ? [{ n, ms }] : []));
      expect(late).toEqual([]);
    } finally {
      await pool.end();
      await admin.query(`DROP ROLE IF EXISTS ${pair}`);
    }
  }, 30_000);

  it('a refusal that outlasts the wait reaches the caller as the server said it (53300)', async () => {
    const holder = new Client({ connectionString: asRole });
    await holder.connect();
    const pool = createPool(asRole, 2);
    try {
      const started = Date.now();
      await expect(pool.query('SELECT 1')).rejects.toMatchObject({ code: '53300' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(ROOM_WAIT_MS - 600);
    } finally {
      await holder.end();
      await pool.end();
    }
  }, 15_000);
});
