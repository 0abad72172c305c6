import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { migrate, Pool, withTransaction } from '@crm/db';
import { installEventTables, OUTBOX_CHANNEL, type EventEnvelope } from '@crm/events';
import { createLogger } from '@crm/logger';
import { createTestDatabase, TestDatabase, testPool } from '@crm/testing';
import { ContactWriter, lockContactJsonRows, toEventContact } from '../src/contacts';
import { DEFAULT_CONFIG } from '../src/scoring/model';
import { newContactTags, scoreEvents } from '../src/scoring/scoring.consumer';
import * as scoringRepo from '../src/scoring/scoring.repo';
import { UsedConditions } from '../src/scoring/used-conditions';

// The contact writer against a real PostgreSQL: a contact change, its activity, its outbox event and its lead
// scoring facts commit together (no round trip through the broker), or not at all.
describe('contact writer', () => {
  let db: TestDatabase;
  let pool: Pool;
  const writer = new ContactWriter(scoreEvents(new UsedConditions(0), createLogger('test', 'silent')));

  beforeAll(async () => {
    db = await createTestDatabase('crm_writer');
    pool = testPool(db.url, 4);
    await migrate(pool, path.join(__dirname, '..', 'migrations'));
    await installEventTables(pool);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  const newOrg = async (rules: { condition: string; value?: string; points: number }[]) => {
    const orgId = randomUUID();
    await scoringRepo.saveConfig(pool, orgId, { ...DEFAULT_CONFIG, decayRate: 0 });
    for (const r of rules)
      await scoringRepo.insertRule(pool, randomUUID(), orgId, {
        name: r.condition,
        condition: r.condition as never,
        value: r.value ?? '',
        points: r.points,
        weight: 1,
      });
    return orgId;
  };
  const contact = (orgId: string, tags: string[] = []) => ({
    id: randomUUID(),
    orgId,
    name: 'Lan',
    email: '',
    phone: '',
    source: 'manual',
    status: 'new',
    statusId: null,
    assignedUserId: null,
    notes: '',
    tags,
  });
  const q = async (sql: string, values: unknown[]) => (await pool.query(sql, values)).rows;
  const score = async (id: string) => (await q('SELECT lead_score FROM contacts WHERE id = $1', [id]))[0]?.lead_score;
  const facts = (id: string) =>
    q('SELECT condition, value, occurrences FROM contact_score_facts WHERE contact_id = $1 ORDER BY condition, value', [id]);
  const outbox = (id: string) =>
    q(`SELECT type, data->'changes' AS changes FROM outbox WHERE data->'contact'->>'id' = $1 OR data->>'id' = $1 ORDER BY seq`, [id]);

  it('a new contact is scored in its own transaction: facts, leadScore, activity and events commit with it', async () => {
    const orgId = await newOrg([
      { condition: 'contact_created', points: 5 },
      { condition: 'tag_added', value: 'vip', points: 20 },
    ]);
    const c = contact(orgId, ['VIP']);
    await withTransaction(pool, (tx) => writer.create(tx, c, 'Created (source manual)'));

    // Scored on commit, not once an event came back from the broker.
    expect(await score(c.id)).toBe(25);
    expect(await facts(c.id)).toEqual([
      { condition: 'contact_created', value: '', occurrences: 1 },
      { condition: 'tag_added', value: 'vip', occurrences: 1 },
    ]);
    expect(await q('SELECT type, data FROM contact_activities WHERE contact_id = $1', [c.id])).toEqual([
      { type: 'created', data: 'Created (source manual)' },
    ]);
    // contact.created, then the score's announcement (25 is a move of a tenth of maxScore or more).
    expect(await outbox(c.id)).toEqual([
      { type: 'contact.created', changes: null },
      { type: 'contact.updated', changes: ['leadScore'] },
    ]);
  });

  it('a new contact nothing can score yet costs its state row only: snapshot kept, marked scored at 0, later tags judged against it', async () => {
    // Rules only on conditions a creation does not produce (and a tag rule, but the contact has no tags).
    const orgId = await newOrg([
      { condition: 'message_received', points: 3 },
      { condition: 'tag_added', value: 'vip', points: 20 },
    ]);
    const c = contact(orgId);
    const statements: string[] = [];
    await withTransaction(pool, async (tx) => {
      const query = tx.query.bind(tx);
      (tx as unknown as { query: unknown }).query = (...args: Parameters<typeof query>) => {
        const a = args[0] as string | { name?: string; text: string };
        statements.push(typeof a === 'string' ? a : (a.name ?? a.text));
        return query(...args);
      };
      await writer.create(tx, c, 'Created');
    });
    // The scoring part: the org's rules (cached for a while outside this test), and one statement that reads the config
    // and writes the state row; no locking, re-reading, scoring or publishing.
    expect(statements.filter((n) => n.startsWith('crm_scoring'))).toEqual(['crm_scoring_used_conditions', 'crm_scoring_state_create_one']);
    const [state] = await q('SELECT tags, contrib, scored_at IS NOT NULL AS scored, published_score FROM contact_score_state WHERE contact_id = $1', [
      c.id,
    ]);
    expect(state).toEqual({ tags: [], contrib: 0, scored: true, published_score: 0 });
    expect(await score(c.id)).toBe(0);
    expect((await outbox(c.id)).map((e) => e.type)).toEqual(['contact.created']);

    // The snapshot it kept is what a later change is judged against: adding vip counts once.
    const [row] = await q('SELECT * FROM contacts WHERE id = $1', [c.id]);
    await withTransaction(pool, (tx) => writer.update(tx, orgId, row, { tags: ['vip'] }));
    expect(await score(c.id)).toBe(20);
    expect(await facts(c.id)).toEqual([{ condition: 'tag_added', value: 'vip', occurrences: 1 }]);
  });

  it('a new contact of an org whose baseScore is not 0 is scored the usual way', async () => {
    const orgId = randomUUID();
    await scoringRepo.saveConfig(pool, orgId, { ...DEFAULT_CONFIG, decayRate: 0, baseScore: 7 });
    const c = contact(orgId);
    await withTransaction(pool, (tx) => writer.create(tx, c, 'Created'));
    expect(await score(c.id)).toBe(7);
  });

  it('a change that rolls back leaves no contact change, fact, activity or event', async () => {
    const orgId = await newOrg([{ condition: 'status_changed', points: 10 }]);
    const c = contact(orgId);
    const row = await withTransaction(pool, (tx) => writer.create(tx, c, 'Created'));
    await expect(
      withTransaction(pool, async (tx) => {
        await writer.update(tx, orgId, row, { status: 'lead' });
        throw new Error('the caller fails after the write');
      }),
    ).rejects.toThrow('the caller fails');
    expect((await q('SELECT status FROM contacts WHERE id = $1', [c.id]))[0].status).toBe('new');
    expect(await facts(c.id)).toEqual([]);
    expect(await q(`SELECT type FROM contact_activities WHERE contact_id = $1 AND type = 'updated'`, [c.id])).toEqual([]);
    expect((await outbox(c.id)).map((e) => e.type)).toEqual(['contact.created']);

    await withTransaction(pool, (tx) => writer.update(tx, orgId, row, { status: 'lead' }));
    expect(await facts(c.id)).toEqual([{ condition: 'status_changed', value: 'lead', occurrences: 1 }]);
    expect(await score(c.id)).toBe(10);
  });

  it('only what differs is written; quiet changes neither touch updatedAt nor publish', async () => {
    const orgId = await newOrg([]);
    const row = await withTransaction(pool, (tx) => writer.create(tx, contact(orgId), 'Created'));
    const same = await withTransaction(pool, (tx) => writer.update(tx, orgId, row, { name: row.name, tags: [] }));
    expect(same.changes).toEqual([]);
    const quiet = await withTransaction(pool, (tx) =>
      writer.update(tx, orgId, row, { threadTypes: ['group'] }, { activity: false, quiet: ['threadTypes'] }),
    );
    expect(quiet.changes).toEqual(['threadTypes']);
    expect(quiet.row.thread_types).toEqual(['group']);
    expect(quiet.row.updated_at).toEqual(row.updated_at);
    expect((await outbox(row.id)).map((e) => e.type)).toEqual(['contact.created']);
    expect(await q(`SELECT type FROM contact_activities WHERE contact_id = $1 ORDER BY id`, [row.id])).toEqual([{ type: 'created' }]);
  });

  it('a batch hands scoring all its changes in one call, after the writes', async () => {
    const calls: EventEnvelope[][] = [];
    const spying = new ContactWriter(async (events) => void calls.push(events));
    const orgId = await newOrg([]);
    const rows = await withTransaction(pool, async (tx) => {
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await spying.create(tx, contact(orgId), 'Created'));
      return made;
    });
    calls.length = 0;
    await withTransaction(pool, (tx) =>
      spying.batch(tx, async (contacts) => {
        for (const row of rows) await contacts.update(tx, orgId, row, { tags: ['hot'] });
        expect(calls).toEqual([]);
      }),
    );
    expect(calls).toHaveLength(1);
    expect(calls[0].map((e) => [e.type, (e.data as { contact: { id: string } }).contact.id])).toEqual(rows.map((r) => ['contact.updated', r.id]));
  });

  it('a merge removes the source (no contact.deleted) and fills the target; unmerge gives the fill back and the source returns as it was', async () => {
    const orgId = await newOrg([]);
    const target = { ...contact(orgId), name: 'Lan' };
    const source = { ...contact(orgId), name: 'Lan N.', phone: '+84901230001', email: 'lan@example.com' };
    await withTransaction(pool, (tx) => writer.create(tx, target, 'Created'));
    await withTransaction(pool, (tx) => writer.create(tx, source, 'Created'));
    const rows = await lockContactJsonRows(pool, orgId, [source.id, target.id]);
    const sourceRow = rows.get(source.id)!;

    const merged = await withTransaction(pool, (tx) =>
      writer.merge(tx, orgId, {
        targetId: target.id,
        sourceId: source.id,
        fill: { phone: source.phone, email: source.email },
        changes: ['phone', 'email'],
        activity: { type: 'merged', data: 'Merged' },
      }),
    );
    expect(merged).toEqual(expect.objectContaining({ id: target.id, phone: source.phone, email: source.email }));
    expect(await q('SELECT id FROM contacts WHERE id = $1', [source.id])).toEqual([]);
    expect((await outbox(source.id)).map((e) => e.type)).toEqual(['contact.created']);
    expect(await outbox(target.id)).toEqual([
      { type: 'contact.created', changes: null },
      { type: 'contact.updated', changes: ['phone', 'email'] },
    ]);

    const back = await withTransaction(pool, (tx) =>
      writer.unmerge(tx, orgId, {
        targetId: target.id,
        restore: { phone: '', email: '' },
        changes: ['phone', 'email'],
        source: sourceRow,
        activity: { type: 'merge_undone', data: 'Undone' },
      }),
    );
    expect(back).toEqual(expect.objectContaining({ phone: '', email: '' }));
    expect((await lockContactJsonRows(pool, orgId, [source.id])).get(source.id)).toEqual(sourceRow);
    expect((await outbox(source.id)).map((e) => e.type)).toEqual(['contact.created']);
    expect(await q('SELECT type FROM contact_activities WHERE contact_id = $1 ORDER BY occurred_at, type', [target.id])).toEqual([
      { type: 'created' },
      { type: 'merged' },
      { type: 'merge_undone' },
    ]);
  });

  it('unmerge puts a row back only into its own org, and locks read only the org asked for', async () => {
    const orgId = await newOrg([]);
    const other = await newOrg([]);
    const c = contact(orgId);
    await withTransaction(pool, (tx) => writer.create(tx, c, 'Created'));
    expect((await lockContactJsonRows(pool, other, [c.id])).size).toBe(0);
    const row = (await lockContactJsonRows(pool, orgId, [c.id])).get(c.id)!;
    const targetOfOther = contact(other);
    await withTransaction(pool, (tx) => writer.create(tx, targetOfOther, 'Created'));
    await expect(
      withTransaction(pool, (tx) =>
        writer.unmerge(tx, other, {
          targetId: targetOfOther.id,
          restore: {},
          changes: [],
          source: { ...row, id: randomUUID() },
          activity: { type: 'merge_undone', data: 'Undone' },
        }),
      ),
    ).rejects.toThrow('its own organization');
    expect(await q('SELECT count(*)::int AS n FROM contacts WHERE org_id = $1', [other])).toEqual([{ n: 1 }]);
  });

  describe('a contact the API creates (createAlone)', () => {
    // The rules cache as the service has it (kept a while), so a create reads the org's rules once.
    const conditions = new UsedConditions(60_000);
    const alone = new ContactWriter(scoreEvents(conditions, createLogger('test', 'silent')), {
      tagsOf: newContactTags(conditions),
      sql: scoringRepo.newContactStateSql,
    });
    /**
     * The statements a call sends through the pool (by prepared statement name or text), and how many connections it
     * took for a transaction (withTransaction's pool.connect(); pool.query takes its own with a callback).
     */
    const traced = async <T>(run: () => Promise<T>) => {
      const statements: string[] = [];
      const query = jest.spyOn(pool, 'query').mockImplementation(function (this: Pool, ...args: unknown[]) {
        const a = args[0] as string | { name?: string; text: string };
        statements.push(typeof a === 'string' ? a : (a.name ?? a.text));
        return (Pool.prototype.query as (...x: unknown[]) => unknown).apply(this, args);
      } as never);
      const connect = jest.spyOn(pool, 'connect');
      try {
        const result = await run();
        return { result, statements, transactions: connect.mock.calls.filter((c) => (c as unknown[]).length === 0).length };
      } finally {
        query.mockRestore();
        connect.mockRestore();
      }
    };
    const stateOf = async (id: string) =>
      (
        await q('SELECT tags, contrib, scored_at IS NOT NULL AS scored, published_score, tags_as_of FROM contact_score_state WHERE contact_id = $1', [
          id,
        ])
      )[0];
    const eventsOf = (id: string) => q(`SELECT type, org_id, version, data FROM outbox WHERE data->'contact'->>'id' = $1 ORDER BY seq`, [id]);

    it('is one statement when scoring needs nothing else, writing the rows and the event the transaction writes, and wakes the relay', async () => {
      const orgId = await newOrg([{ condition: 'message_received', points: 3 }]);
      await conditions.of(pool, orgId);
      const listener = await pool.connect();
      const woken: string[] = [];
      listener.on('notification', (n) => woken.push(n.payload ?? ''));
      await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
      try {
        const c = { ...contact(orgId, ['VIP', 'Lead']), phone: '+84901230001', email: 'lan@example.com', dealValue: 12.5, customFields: { size: 3 } };
        const { result: row, statements, transactions } = await traced(() => alone.createAlone(pool, c, 'Created (source api)'));
        expect(statements).toEqual(['crm_contact_insert_alone']);
        expect(transactions).toBe(0);

        // The same contact through the transaction, for comparison.
        const twin = { ...c, id: randomUUID(), phone: '+84901230002' };
        await withTransaction(pool, (tx) => alone.create(tx, twin, 'Created (source api)'));

        const [all] = await q('SELECT * FROM contacts WHERE id = $1', [c.id]);
        const stored = Object.fromEntries(Object.keys(row).map((k) => [k, all[k]]));
        expect(row).toEqual(stored);
        expect(Object.keys(row).length).toBeGreaterThan(20);
        const [event] = await eventsOf(c.id);
        const [twinEvent] = await eventsOf(twin.id);
        expect(event.data).toEqual({ contact: toEventContact(stored as never) });
        expect(await q(`SELECT occurred_at FROM outbox WHERE data->'contact'->>'id' = $1`, [c.id])).toEqual([{ occurred_at: stored.created_at }]);
        expect({ ...event, data: undefined }).toEqual({ ...twinEvent, data: undefined });
        expect(Object.keys(event.data.contact).sort()).toEqual(Object.keys(twinEvent.data.contact).sort());
        expect(await q('SELECT type, data, occurred_at FROM contact_activities WHERE contact_id = $1', [c.id])).toEqual([
          { type: 'created', data: 'Created (source api)', occurred_at: stored.created_at },
        ]);
        const state = await stateOf(c.id);
        expect(state).toEqual({ tags: ['vip', 'lead'], contrib: 0, scored: true, published_score: 0, tags_as_of: stored.updated_at });
        const { tags_as_of: _asOf, ...twinState } = await stateOf(twin.id);
        expect({ ...state, tags_as_of: undefined }).toEqual({ ...twinState, tags_as_of: undefined });

        // The relay hears of the row at commit, with its seq, as enqueueEvents would tell it.
        const [{ seq }] = await q(`SELECT seq::text FROM outbox WHERE data->'contact'->>'id' = $1`, [c.id]);
        await new Promise((r) => setTimeout(r, 100));
        expect(woken).toContain(seq);
      } finally {
        await listener.query(`UNLISTEN ${OUTBOX_CHANNEL}`);
        listener.release();
      }
    });

    it('is a transaction, scored the usual way, when a rule scores the creation or its tags, or the baseScore is not 0', async () => {
      const created = await newOrg([{ condition: 'contact_created', points: 5 }]);
      const tagged = await newOrg([{ condition: 'tag_added', value: 'vip', points: 20 }]);
      const based = randomUUID();
      await scoringRepo.saveConfig(pool, based, { ...DEFAULT_CONFIG, decayRate: 0, baseScore: 7 });
      for (const [orgId, tags, expected] of [
        [created, [], 5],
        [tagged, ['VIP'], 20],
        [based, [], 7],
      ] as const) {
        const c = contact(orgId, [...tags]);
        const { transactions } = await traced(() => alone.createAlone(pool, c, 'Created'));
        expect(transactions).toBe(1);
        expect(await score(c.id)).toBe(expected);
        // Written once: the statement that found a baseScore of 7 wrote nothing before the transaction did (the score
        // is announced in a contact.updated of its own).
        expect((await eventsOf(c.id)).filter((e) => e.type === 'contact.created')).toHaveLength(1);
        expect(await q('SELECT count(*)::int AS n FROM contact_activities WHERE contact_id = $1', [c.id])).toEqual([{ n: 1 }]);
      }
      // A tag rule does not matter to a contact without tags: one statement.
      const plain = contact(tagged);
      expect((await traced(() => alone.createAlone(pool, plain, 'Created'))).transactions).toBe(0);
      expect(await score(plain.id)).toBe(0);
    });

    it('fails on a duplicate phone as the insert does, writing nothing', async () => {
      const orgId = await newOrg([]);
      const first = { ...contact(orgId), phone: '+84901230003' };
      await alone.createAlone(pool, first, 'Created');
      const second = { ...contact(orgId), phone: '+84901230003' };
      await expect(alone.createAlone(pool, second, 'Created')).rejects.toMatchObject({ constraint: 'contacts_phone_uq' });
      expect(await eventsOf(second.id)).toEqual([]);
      expect(await q('SELECT count(*)::int AS n FROM contact_activities WHERE contact_id = $1', [second.id])).toEqual([{ n: 0 }]);
      // Another org may hold the same number.
      const other = await newOrg([]);
      const elsewhere = { ...contact(other), phone: '+84901230003' };
      expect((await alone.createAlone(pool, elsewhere, 'Created')).org_id).toBe(other);
    });
  });
});
