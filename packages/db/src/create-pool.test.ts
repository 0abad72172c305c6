import { Client } from 'pg';
import { oneConnectionRole } from './test-support/one-connection-role';
import { createPool } from './index';
import { ROOM_WAIT_MS } from './patient-pool';

// A service's pool on a server shared with others (tests beside `npm start`): it keeps one connection when idle, so
// a caller refused for lack of room waits in the pool's own line; and a service's start waits for room longer than a
// request would (prepareDatabase's migrations pool).
describe('createPool', () => {
  const { baseUrl, url: asRole } = oneConnectionRole('create_pool');

  it('keeps one connection when idle, where it used to close them all', async () => {
    const pool = createPool(baseUrl, 3, { idleTimeoutMillis: 100 });
    try {
      // Grown past one: three queries at once, again while the shared server is full (beside `npm start` it is at times,
      // and then the pool rightly queues them on the connection it has) for up to ~5 s.
      for (let tries = 0; pool.totalCount <= 1 && tries < 50; tries++)
        await Promise.all([pool.query('SELECT pg_sleep(0.05)'), pool.query('SELECT pg_sleep(0.05)'), pool.query('SELECT 1')]);
      expect(pool.totalCount).toBeGreaterThan(1);
      await new Promise((r) => setTimeout(r, 500));
      expect(pool.totalCount).toBe(1);
      expect(pool.idleCount).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('with a longer room wait (a start), outwaits a full server past ROOM_WAIT_MS', async () => {
    const holder = new Client({ connectionString: asRole });
    await holder.connect();
    const pool = createPool(asRole, 1, { roomWaitMs: ROOM_WAIT_MS + 5_000 });
    try {
      const started = Date.now();
      const answer = pool.query('SELECT 1 AS n');
      setTimeout(() => void holder.end(), ROOM_WAIT_MS + 1_000);
      expect((await answer).rows[0].n).toBe(1);
      expect(Date.now() - started).toBeGreaterThan(ROOM_WAIT_MS);
    } finally {
      await pool.end();
    }
  }, 15_000);
});
