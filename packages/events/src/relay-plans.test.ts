import { createPool, type Pool, type PoolClient } from '@crm/db';
import { createTestDatabase, type TestDatabase } from '@crm/testing';
import { markPublished } from './relay';
import { installEventTables } from './tables';

// The relay's statements are run many times on one connection, from the moment a service starts, when its outbox is
// nearly empty, and the outbox then keeps every published row for the retention period. A plan that suits the empty
// table must not stay in use as it grows (see markPublished).

let db: TestDatabase;
let pool: Pool;
let client: PoolClient;
beforeEach(async () => {
  db = await createTestDatabase('events_plans');
  pool = createPool(db.url, 1);
  await installEventTables(pool);
  client = await pool.connect();
});
afterEach(async () => {
  client.release();
  await pool.end();
  await db.drop();
});

async function enqueue(n: number, published: boolean): Promise<string[]> {
  const { rows } = await client.query<{ seq: string }>(
    `INSERT INTO outbox (id, type, org_id, occurred_at, data, published_at)
     SELECT gen_random_uuid(), 'widget.created', 'org', now(), '{}', CASE WHEN $2 THEN now() END FROM generate_series(1, $1)
     RETURNING seq`,
    [n, published],
  );
  return rows.map((r) => r.seq);
}

/**
 * Sequential scans of `table` done by `work`. pg_stat_xact_user_tables holds this backend's counts not yet flushed to
 * the shared statistics (earlier transactions' too), and nothing is flushed inside a transaction: the difference
 * across `work`, inside one, is what `work` did.
 */
async function seqScansDuring(table: string, work: () => Promise<void>): Promise<number> {
  const count = async () => {
    const { rows } = await client.query<{ n: string }>('SELECT seq_scan AS n FROM pg_stat_xact_user_tables WHERE relname = $1', [table]);
    return Number(rows[0]?.n ?? 0);
  };
  await client.query('BEGIN');
  try {
    const before = await count();
    await work();
    return (await count()) - before;
  } finally {
    await client.query('ROLLBACK');
  }
}

test('marking a batch published finds its rows by key after the outbox grew on the same connection', async () => {
  // The relay's first batches, on an outbox of a few rows: a statement planned once for good would settle here on
  // reading the whole table (a named statement did, from its sixth call).
  const first = await enqueue(50, false);
  for (let i = 0; i < 10; i++) await markPublished(client, first.slice(i * 5, i * 5 + 5));
  // Then the outbox fills with published rows (no ANALYZE has run yet, as in a service's first minutes).
  await enqueue(20_000, true);
  const [next] = await enqueue(1, false);

  const scans = await seqScansDuring('outbox', () => markPublished(client, [next]));
  expect(scans).toBe(0);

  await markPublished(client, [next]);
  const { rows } = await client.query('SELECT published_at FROM outbox WHERE seq = $1', [next]);
  expect(rows[0].published_at).toBeInstanceOf(Date);
});
