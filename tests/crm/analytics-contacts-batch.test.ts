import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { migrate, withTransaction, type Pool } from '@crm/db';
import { createTestDatabase, type TestDatabase, testPool } from '@crm/testing';
import { applyContactChanges, type ContactChanges, type ContactSnapshot } from '../../services/crm/src/analytics/contact-events';

// The analytics read model's contact side against a real database: a batch of new contacts takes the one-statement
// path, contacts that already have a row take the row-by-row path, and either way the rows, funnel counts,
// assignments and user counters are exactly what applying the same events one at a time gives.
describe('analytics: contacts applied in batches', () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase('crm_analytics_batch');
    pool = testPool(db.url, 4);
    await migrate(pool, path.join(__dirname, '../../services/crm/migrations'));
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const day = (d: number) => new Date(Date.UTC(2026, 10, d, 9));
  const alice = randomUUID();
  const bob = randomUUID();
  const stage = randomUUID();
  const ids = Array.from({ length: 6 }, () => randomUUID());
  const snap = (id: string, patch: Partial<ContactSnapshot> = {}): ContactSnapshot => ({
    id,
    status: 'new',
    statusId: null,
    assignedUserId: null,
    dealValue: 0,
    createdAt: day(2),
    ...patch,
  });
  const created = (orgId: string, s: ContactSnapshot, at = s.createdAt): ContactChanges => ({
    orgId,
    contactId: s.id,
    changes: [{ kind: 'snapshot', snapshot: s, at, assigned: true, created: true }],
  });
  const updated = (orgId: string, s: ContactSnapshot, at: Date, assigned = false): ContactChanges => ({
    orgId,
    contactId: s.id,
    changes: [{ kind: 'snapshot', snapshot: s, at, assigned }],
  });

  /** The events of the story, for one org: new contacts, then updates (some of contacts already in the model). */
  const story = (orgId: string): ContactChanges[][] => [
    [
      created(orgId, snap(ids[0])),
      created(orgId, snap(ids[1], { assignedUserId: alice, status: 'lead' })),
      created(orgId, snap(ids[2], { status: 'customer', assignedUserId: bob, dealValue: 120 })),
    ],
    [
      // ids[0] exists: updated to a customer of alice's; ids[3] and ids[4] are new (one with a custom stage); ids[5] is new and deleted.
      updated(orgId, snap(ids[0], { status: 'customer', assignedUserId: alice, dealValue: 50 }), day(3), true),
      created(orgId, snap(ids[3], { createdAt: day(3) })),
      created(orgId, snap(ids[4], { createdAt: day(3), statusId: stage })),
      {
        orgId,
        contactId: ids[5],
        changes: [
          { kind: 'snapshot', snapshot: snap(ids[5], { createdAt: day(3) }), at: day(3), assigned: true, created: true },
          { kind: 'deleted', at: day(4) },
        ],
      },
    ],
  ];
  const state = async (orgId: string) => {
    const q = async (sql: string) => (await pool.query(sql, [orgId])).rows;
    return {
      contacts: await q(
        `SELECT contact_id, created_at, snapshot_at, assigned_user_id, deal_value, reached_lead, reached_customer, reached_status_ids, converted_at, converted_by, deleted FROM analytics_contacts WHERE org_id = $1 ORDER BY contact_id`,
      ),
      funnel: await q(
        `SELECT day, reached_lead, reached_customer, reached_status_ids, n FROM analytics_funnel_days WHERE org_id = $1 AND n <> 0 ORDER BY day, reached_lead, reached_customer, reached_status_ids::text`,
      ),
      assignments: await q(`SELECT contact_id, user_id, at, credited FROM analytics_assignments WHERE org_id = $1 ORDER BY 1, 2`),
      users: await q(`SELECT * FROM analytics_user_stats WHERE org_id = $1 ORDER BY 2, 3, 4`),
    };
  };
  const strip = (s: Awaited<ReturnType<typeof state>>) => JSON.parse(JSON.stringify({ ...s, users: s.users.map(({ org_id: _o, ...rest }) => rest) }));

  /** Applies `batch` in a transaction; returns the names of the statements it ran, in order. */
  const applied = async (batch: ContactChanges[]): Promise<string[]> => {
    const names: string[] = [];
    await withTransaction(pool, async (tx) => {
      const q = tx.query.bind(tx) as (...a: unknown[]) => unknown;
      (tx as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
        names.push((a[0] as { name?: string })?.name ?? String(a[0]));
        return q(...a);
      };
      try {
        await applyContactChanges(tx, batch);
      } finally {
        (tx as unknown as { query: unknown }).query = q;
      }
    });
    return names;
  };
  const INSERT_MANY = 'analytics_contacts_insert_many';
  const FUNNEL = 'analytics_funnel_add_many';
  const USER_STATS = 'analytics_user_stats_add_many';

  it('gives the same read model as the events applied one at a time', async () => {
    const [batched, single] = [randomUUID(), randomUUID()];
    // The insert statement of many rows is what the batched org's batches use, and each new contact alone: count it.
    let many = 0;
    for (const batch of story(batched)) many += (await applied(batch)).filter((n) => n === INSERT_MANY).length;
    expect(many).toBe(2);
    let alone = 0;
    for (const batch of story(single)) for (const one of batch) alone += (await applied([one])).filter((n) => n === INSERT_MANY).length;
    // The five contact.created alone (ids[5]'s creation comes with its deletion: the usual path); not the update of ids[0].
    expect(alone).toBe(5);

    const a = strip(await state(batched));
    const b = strip(await state(single));
    expect(a).toEqual(b);
    // And the story itself: six contacts (one a tombstone), alice credited with ids[0]'s conversion, bob with ids[2]'s.
    expect(a.contacts).toHaveLength(6);
    expect(a.contacts.filter((c: { deleted: boolean }) => c.deleted)).toHaveLength(1);
    expect(a.assignments).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ contact_id: ids[0], user_id: alice, credited: true }),
        expect.objectContaining({ contact_id: ids[1], user_id: alice, credited: false }),
        expect.objectContaining({ contact_id: ids[2], user_id: bob, credited: true }),
      ]),
    );
    expect(a.funnel.reduce((n: number, r: { n: number }) => n + r.n, 0)).toBe(5);
  });

  it('a contact that already has a row is applied row by row: a snapshot arriving twice changes nothing twice', async () => {
    const orgId = randomUUID();
    const [x, y] = [randomUUID(), randomUUID()];
    const batch = [created(orgId, snap(x, { status: 'lead' })), created(orgId, snap(y))];
    await withTransaction(pool, (tx) => applyContactChanges(tx, batch));
    const once = strip(await state(orgId));
    await withTransaction(pool, (tx) => applyContactChanges(tx, batch));
    expect(strip(await state(orgId))).toEqual(once);
  });

  it('a new contact alone is one statement and nothing else; its creation arriving again falls back to the row', async () => {
    const orgId = randomUUID();
    const x = randomUUID();
    // No assignee, no conversion: its row and its funnel count, and no read of assignments it cannot have yet.
    expect(await applied([created(orgId, snap(x))])).toEqual([INSERT_MANY, FUNNEL]);
    const once = strip(await state(orgId));
    expect(once.contacts).toHaveLength(1);
    expect((await applied([created(orgId, snap(x))])).slice(0, 2)).toEqual([INSERT_MANY, 'analytics_contact_lock']);
    expect(strip(await state(orgId))).toEqual(once);
    // With an assignee, its assignment is recorded as before.
    const y = randomUUID();
    expect(await applied([created(orgId, snap(y, { assignedUserId: alice }))])).toContain('analytics_assignment_save');
    expect((await state(orgId)).assignments).toEqual([expect.objectContaining({ contact_id: y, user_id: alice, credited: false })]);
  });

  it('a batch of several orgs costs the statements of one org: one insert, one funnel write, one user-stats write', async () => {
    const orgs = [randomUUID(), randomUUID(), randomUUID()];
    const [x, y] = [randomUUID(), randomUUID()];
    // Per org: a lead assigned to alice, a plain new contact, both created on day 2 (the same ids in every org: the
    // read model is keyed by org and contact).
    const eventsOf = (orgId: string) => [created(orgId, snap(x, { status: 'lead', assignedUserId: alice })), created(orgId, snap(y))];
    const names = await applied(orgs.flatMap(eventsOf));
    expect(names.filter((n) => n === INSERT_MANY)).toHaveLength(1);
    expect(names.filter((n) => n === FUNNEL)).toHaveLength(1);
    expect(names.filter((n) => n === USER_STATS)).toHaveLength(1);
    // Each org's read model is what its events give alone.
    const alone = randomUUID();
    await applied(eventsOf(alone));
    const expected = strip(await state(alone));
    expect(expected.contacts).toHaveLength(2);
    expect(expected.funnel).toHaveLength(2);
    expect(expected.users.length).toBeGreaterThan(0);
    for (const orgId of orgs) expect(strip(await state(orgId))).toEqual(expected);
  });

  it('updates alone, one per org, make no insert statement: each contact takes the usual path', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const x = randomUUID();
    await applied([created(a, snap(x)), created(b, snap(x))]);
    const names = await applied([updated(a, snap(x, { status: 'lead' }), day(5)), updated(b, snap(x, { status: 'lead' }), day(5))]);
    expect(names).not.toContain(INSERT_MANY);
    expect(names.filter((n) => n === 'analytics_contact_lock')).toHaveLength(2);
    expect(names.filter((n) => n === FUNNEL)).toHaveLength(1);
  });

  it('a contact.updated alone keeps the usual path: its row is locked first, with no insert tried before', async () => {
    const orgId = randomUUID();
    const x = randomUUID();
    await applied([created(orgId, snap(x))]);
    const names = await applied([updated(orgId, snap(x, { status: 'lead' }), day(5))]);
    expect(names[0]).toBe('analytics_contact_lock');
    expect(names).not.toContain(INSERT_MANY);
  });
});
