import type { Client, QueryResultRow } from 'pg';

/**
 * Rows of a query on pg_stat_activity as the server's sessions are now, on a connection that may be inside a
 * transaction. PostgreSQL copies the sessions' status (their query text among it) at a transaction's first read of
 * the view and keeps the copy until the transaction ends; only the wait event is read live. So a test that holds a
 * lock in a transaction and polls for the session waiting on it with a given statement missed it whenever that pooled
 * session had been running another statement at the first read: the live wait event beside the copy's old text
 * (tests/webhooks/dispatch.test.ts, a flake seen 1 in 14 runs). pg_stat_clear_snapshot() drops the copy first.
 */
export async function activityNow<R extends QueryResultRow>(db: Client, sql: string, values: unknown[] = []): Promise<R[]> {
  await db.query('SELECT pg_stat_clear_snapshot()');
  return (await db.query<R>(sql, values)).rows;
}
