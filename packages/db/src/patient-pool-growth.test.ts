import { Client, Pool, type PoolConfig } from 'pg';
import { PatientPool } from './patient-pool';

// A burst at an idle pool: pg-pool opens a connection for every caller that finds none idle, so 20 quick queries at
// once asked the server for as many backends as the pool allows, each started and warmed while the queries waited.
// PatientPool opens them one at a time, serving callers from connections released meanwhile.

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

type ConnectCallback = (err?: Error) => void;
/** pg-pool connects its clients with a callback: the one form of Client#connect these classes need. */
type Connect = (this: Client, callback: ConnectCallback) => void;

/** A pg Client class whose connect is `connect` (called with the original), for counting or failing attempts. */
function clientWith(connect: (original: Connect, self: Client, callback: ConnectCallback) => void): typeof Client {
  const original = Client.prototype.connect as unknown as Connect;
  class Wrapped extends Client {}
  (Wrapped.prototype as unknown as { connect: Connect }).connect = function (callback) {
    connect(original, this, callback);
  };
  return Wrapped;
}

/** A pg Client class that records how many of its kind are connecting at once, and how many connected in all. */
function countingClient(first?: (callback: ConnectCallback) => boolean) {
  const seen = { connecting: 0, mostAtOnce: 0, connected: 0 };
  const Counting = clientWith((original, self, callback) => {
    seen.connecting++;
    seen.mostAtOnce = Math.max(seen.mostAtOnce, seen.connecting);
    const done: ConnectCallback = (err) => {
      seen.connecting--;
      if (!err) seen.connected++;
      callback(err);
    };
    if (first?.(done)) return;
    original.call(self, done);
  });
  return { seen, Client: Counting };
}

const config = (Client: typeof import('pg').Client, max: number): PoolConfig => ({ connectionString: url, max, Client });

describe('PatientPool: opens its connections one at a time', () => {
  it('20 quick queries at once: every one answered in order, never more than one connection being opened', async () => {
    const { seen, Client: Counting } = countingClient();
    const pool = new PatientPool(config(Counting, 10));
    try {
      const rows = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.query<{ i: number }>('SELECT $1::int AS i', [i])));
      expect(rows.map((r) => r.rows[0].i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(seen.mostAtOnce).toBe(1);
      expect(seen.connected).toBeLessThan(10);
    } finally {
      await pool.end();
    }
  });

  it('pg-pool itself (the control): the same burst opens connections side by side, up to its max', async () => {
    const { seen, Client: Counting } = countingClient();
    const pool = new Pool(config(Counting, 10));
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => pool.query('SELECT $1::int AS i', [i])));
      expect(seen.mostAtOnce).toBe(10);
      expect(seen.connected).toBe(10);
    } finally {
      await pool.end();
    }
  });

  it('callers that hold their connections still get the pool up to its max, one connection after another', async () => {
    const { seen, Client: Counting } = countingClient();
    const pool = new PatientPool(config(Counting, 5));
    const clients: import('pg').PoolClient[] = [];
    try {
      // Five transactions that each hold a connection until all five have one: the pool must reach 5 connections.
      clients.push(...(await Promise.all(Array.from({ length: 5 }, () => pool.connect()))));
      expect(seen.connected).toBe(5);
      expect(seen.mostAtOnce).toBe(1);
      expect(pool.totalCount).toBe(5);
      // At the max, a sixth caller waits for one to be released.
      const sixth = pool.query<{ n: number }>('SELECT 6 AS n');
      await new Promise((r) => setTimeout(r, 50));
      expect(pool.waitingCount).toBe(1);
      clients.shift()!.release();
      expect((await sixth).rows[0].n).toBe(6);
    } finally {
      for (const c of clients) c.release();
      await pool.end();
    }
  });

  it('a connection that fails to open does not stop the next one being opened for the callers in line', async () => {
    let failNext = true;
    const { seen, Client: FailingOnce } = countingClient((callback) => {
      if (!failNext) return false;
      failNext = false;
      // A server that cannot be reached: the attempt fails after a moment, as a refused connection does.
      setTimeout(() => callback(Object.assign(new Error('connect ECONNREFUSED (test)'), { code: 'ECONNREFUSED' })), 20);
      return true;
    });
    const pool = new PatientPool(config(FailingOnce, 5));
    try {
      const results = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => pool.query<{ i: number }>('SELECT $1::int AS i', [i])));
      // The first caller's attempt failed (its error reaches it); the three behind it are served by the next ones.
      expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 'ECONNREFUSED' } });
      expect(results.slice(1).map((r) => (r.status === 'fulfilled' ? r.value.rows[0].i : r.reason))).toEqual([1, 2, 3]);
      expect(seen.mostAtOnce).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
