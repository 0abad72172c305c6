import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { migrate, Pool } from '@crm/db';
import { createTestDatabase, TestDatabase, testPool } from '@crm/testing';
import { compactContactCounts, listContacts } from '../src/contacts/db/contacts.repo';
import { TotalCache } from '../src/contacts/db/total-cache';

// The per-org contact counter behind unfiltered list totals, against a real PostgreSQL.
describe('contact counter', () => {
  let db: TestDatabase;
  let pool: Pool;
  const orgA = randomUUID();
  const orgB = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase('crm_counts');
    pool = testPool(db.url, 4);
    await migrate(pool, path.join(__dirname, '..', 'migrations'));
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  const insert = (orgId: string, n: number) =>
    pool.query(`INSERT INTO contacts (id, org_id, name) SELECT gen_random_uuid(), $1, 'c' || g FROM generate_series(1, $2::int) g`, [orgId, n]);
  const total = async (orgId: string) =>
    (await listContacts(pool, orgId, { page: 1, limit: 1, sortBy: 'createdAt', direction: 'desc' })).pagination.total;
  const counted = async (orgId: string) =>
    (await listContacts(pool, orgId, { page: 1, limit: 1, sortBy: 'createdAt', direction: 'desc', hasChatnet: 'false' })).pagination.total;

  it('follows inserts and deletes per organization, before and after compaction', async () => {
    await insert(orgA, 5);
    await insert(orgA, 3);
    await insert(orgB, 2);
    // c1 and c2 exist twice in orgA (one of each per insert): four rows go.
    await pool.query(`DELETE FROM contacts WHERE org_id = $1 AND name IN ('c1', 'c2')`, [orgA]);
    expect(await total(orgA)).toBe(4);
    expect(await total(orgB)).toBe(2);
    const rowsBefore = (await pool.query('SELECT count(*)::int AS n FROM contact_count_deltas')).rows[0].n;
    expect(rowsBefore).toBe(4);

    await compactContactCounts(pool);
    expect((await pool.query('SELECT count(*)::int AS n FROM contact_count_deltas')).rows[0].n).toBe(2);
    expect(await total(orgA)).toBe(4);
    expect(await total(orgB)).toBe(2);
    // The counter agrees with an actual count (a filtered list counts rows).
    expect(await counted(orgA)).toBe(4);
  });

  it('an insert that conflicts and writes nothing adds nothing', async () => {
    await pool.query(`INSERT INTO contacts (id, org_id, name, chatnet_uid) VALUES (gen_random_uuid(), $1, 'x', 'u1')`, [orgB]);
    await pool.query(
      `INSERT INTO contacts (id, org_id, name, chatnet_uid) VALUES (gen_random_uuid(), $1, 'x', 'u1')
       ON CONFLICT (org_id, chatnet_uid) WHERE chatnet_uid IS NOT NULL DO NOTHING`,
      [orgB],
    );
    expect(await total(orgB)).toBe(3);
  });

  it('compaction racing with inserts loses nothing', async () => {
    await Promise.all([insert(orgA, 10), compactContactCounts(pool), insert(orgA, 10), compactContactCounts(pool), insert(orgA, 10)]);
    expect(await total(orgA)).toBe(34);
    expect(await counted(orgA)).toBe(34);
  });

  describe('cached totals of large filtered lists', () => {
    const orgC = randomUUID();
    const lost = (cache: TotalCache, search?: string) =>
      listContacts(pool, orgC, { page: 1, limit: 2, sortBy: 'createdAt', direction: 'desc', status: 'lost', searchText: search }, cache);

    beforeAll(async () => {
      await pool.query(
        `INSERT INTO contacts (id, org_id, name, status) SELECT gen_random_uuid(), $1, 'lost ' || g, 'lost' FROM generate_series(1, 10) g`,
        [orgC],
      );
    });

    it('reuses a large total until the organization gains or loses a contact', async () => {
      const cache = new TotalCache(60_000, 5);
      expect((await lost(cache)).pagination.total).toBe(10);
      // A change to an existing contact may lag (documented) ...
      await pool.query(`UPDATE contacts SET status = 'lead' WHERE org_id = $1 AND name = 'lost 1'`, [orgC]);
      const lagging = await lost(cache);
      expect(lagging.pagination.total).toBe(10);
      expect(lagging.rows).toHaveLength(2);
      // ... but a create or delete in the org is seen at once.
      await pool.query(`INSERT INTO contacts (id, org_id, name, status) VALUES (gen_random_uuid(), $1, 'lost 11', 'lost')`, [orgC]);
      expect((await lost(cache)).pagination.total).toBe(10);
      await pool.query(`DELETE FROM contacts WHERE org_id = $1 AND name = 'lost 2'`, [orgC]);
      expect((await lost(cache)).pagination.total).toBe(9);
    });

    it('searches use it too; totals under the threshold or with the cache off are always exact', async () => {
      const cache = new TotalCache(60_000, 5);
      expect((await lost(cache, 'lost')).pagination.total).toBe(9);
      await pool.query(`UPDATE contacts SET status = 'lead' WHERE org_id = $1 AND name = 'lost 3'`, [orgC]);
      expect((await lost(cache, 'lost')).pagination.total).toBe(9);
      expect((await lost(new TotalCache(60_000, 100), 'lost')).pagination.total).toBe(8);
      expect((await lost(new TotalCache(0, 1))).pagination.total).toBe(8);
    });
  });
});
