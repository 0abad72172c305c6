import type { ClientBase, Pool, PoolClient, QueryResult } from 'pg';

/**
 * Round trips a short transaction can save by sending its first statements with BEGIN and its last with COMMIT (the
 * events package's consumers claim event ids with BEGIN; its relay marks rows with COMMIT): on a machine where a round
 * trip between two processes costs more than the statements in it, that halves the trips. A multi-statement query
 * takes no parameters: inline only values that were validated or escaped.
 */
export interface TransactionTrips<T> {
  /** Sent as `BEGIN; <begin>`; the transaction's function gets these statements' results (BEGIN's left out). */
  begin?: string;
  /** Sent as `<statement>; COMMIT`, from what the transaction's function returned; undefined sends COMMIT alone. */
  commit?: (result: T) => string | undefined;
}

/** Run `fn` inside a transaction; commits on success, rolls back on any error. */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient, begun: QueryResult[]) => Promise<T>,
  trips: TransactionTrips<T> = {},
): Promise<T> {
  const client = await pool.connect();
  // A client whose ROLLBACK failed (its connection was terminated, or it is stuck in a failed state) is destroyed,
  // never handed back to the pool for the next caller to inherit.
  let broken: Error | undefined;
  try {
    return await inTransaction(client, fn, trips, (rollbackErr) => {
      broken = rollbackErr;
    });
  } finally {
    client.release(broken);
  }
}

/**
 * withTransaction on a connection the caller holds (the outbox relay's LISTEN connection): it is never released, and
 * when its ROLLBACK fails its owner learns of the loss from the connection's own 'error' and 'end' events.
 */
export function withTransactionOn<C extends ClientBase, T>(
  client: C,
  fn: (client: C, begun: QueryResult[]) => Promise<T>,
  trips: TransactionTrips<T> = {},
): Promise<T> {
  return inTransaction(client, fn, trips, () => undefined);
}

async function inTransaction<C extends ClientBase, T>(
  client: C,
  fn: (client: C, begun: QueryResult[]) => Promise<T>,
  trips: TransactionTrips<T>,
  rollbackFailed: (err: Error) => void,
): Promise<T> {
  try {
    let begun: QueryResult[] = [];
    if (trips.begin === undefined) await client.query('BEGIN');
    else begun = ((await client.query(`BEGIN; ${trips.begin}`)) as unknown as QueryResult[]).slice(1);
    const result = await fn(client, begun);
    const last = trips.commit?.(result);
    await client.query(last === undefined ? 'COMMIT' : `${last}; COMMIT`);
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(rollbackFailed);
    throw err;
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
