import { withTransaction, type Pool, type PoolClient } from '@crm/db';

/**
 * Runs `fn` in a transaction and counts the statements it sends (BEGIN and COMMIT not counted): how a batch test shows
 * that a batch costs a fixed number of round trips, however many events it holds.
 */
export async function countedTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<{ result: T; statements: number }> {
  return withTransaction(pool, async (client) => {
    let statements = 0;
    const query = client.query;
    client.query = ((...args: unknown[]) => {
      statements++;
      return (query as (...a: unknown[]) => unknown).apply(client, args);
    }) as typeof client.query;
    try {
      return { result: await fn(client), statements };
    } finally {
      client.query = query;
    }
  });
}
