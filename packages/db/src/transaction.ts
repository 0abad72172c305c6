import type { Pool, PoolClient } from 'pg';

/** Run `fn` inside a transaction; commits on success, rolls back on any error. */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A client whose ROLLBACK failed (its connection was terminated, or it is stuck in a failed state) is destroyed,
  // never handed back to the pool for the next caller to inherit.
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: Error) => {
      broken = rollbackErr;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

/** PostgreSQL's "nothing is wrong with the request, try it again" answers: deadlock victim, serialization failure. */
const RETRYABLE = new Set(['40P01', '40001']);

export const isRetryableConflict = (err: unknown) => RETRYABLE.has((err as { code?: unknown } | null)?.code as string);

/**
 * withTransaction for work that takes row locks in an order another writer may take them in reverse (a merge
 * locking two contacts' aggregates while a consumer updates them): when PostgreSQL picks this transaction as the
 * deadlock victim, it is run again from the start after a short random pause instead of failing the request. The
 * rolled-back attempt left nothing behind; `fn` must not have effects outside the transaction.
 */
export async function withRetriedTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withTransaction(pool, fn);
    } catch (err) {
      if (attempt >= attempts || !isRetryableConflict(err)) throw err;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
    }
  }
}
