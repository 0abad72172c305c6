import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { migrate, Pool, withTransaction } from '@crm/db';
import { installEventTables, type EventEnvelope } from '@crm/events';
import { createLogger } from '@crm/logger';
import { createTestDatabase, TestDatabase, testPool } from '@crm/testing';
import { recomputeOrg, rescore, sweepOrg } from '../src/scoring/engine';
import { DEFAULT_CONFIG, ScoringConfig } from '../src/scoring/model';
import { scoreEvents } from '../src/scoring/scoring.consumer';
import * as repo from '../src/scoring/scoring.repo';
import { UsedConditions } from '../src/scoring/used-conditions';

// The scoring engine against a real PostgreSQL: events → facts → leadScore, the decay sweep at a later
// time, batched recomputes, pruning, and which score changes are published (outbox).
describe('lead scoring engine', () => {
  let db: TestDatabase;
  let pool: Pool;
  const handle = scoreEvents(new UsedConditions(0), createLogger('test', 'silent'));
  const DAY = 86_400_000;

  beforeAll(async () => {
    db = await createTestDatabase('crm_scoring');
    pool = testPool(db.url, 4);
    await migrate(pool, path.join(__dirname, '..', 'migrations'));
    await installEventTables(pool);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  const newOrg = async (config: Partial<ScoringConfig>, rules: { condition: string; value?: string; points: number; weight?: number }[]) => {
    const orgId = randomUUID();
    const c = { ...DEFAULT_CONFIG, ...config };
    await repo.saveConfig(pool, orgId, c);
    for (const r of rules)
      await repo.insertRule(pool, randomUUID(), orgId, {
        name: r.condition,
        condition: r.condition as never,
        value: r.value ?? '',
        points: r.points,
        weight: r.weight ?? 1,
      });
    return { orgId, config: c };
  };
  const newContact = async (orgId: string) =>
    (await pool.query<{ id: string }>(`INSERT INTO contacts (id, org_id, name) VALUES (gen_random_uuid(), $1, 'x') RETURNING id`, [orgId])).rows[0]
      .id;
  const deliver = (e: Omit<EventEnvelope, 'id' | 'occurredAt'> & { occurredAt?: string }) =>
    withTransaction(pool, (tx) => handle([{ id: randomUUID(), occurredAt: new Date().toISOString(), ...e }], tx));
  const received = (orgId: string, contactId: string, sentAt = new Date()) =>
    deliver({ type: 'message.received', orgId, data: { contactId, sentAt: sentAt.toISOString() } });
  const score = async (id: string) =>
    (await pool.query<{ lead_score: number }>('SELECT lead_score FROM contacts WHERE id = $1', [id])).rows[0].lead_score;
  const announced = async (contactId: string) =>
    (
      await pool.query<{ data: { contact: { leadScore: number }; changes: string[]; highValueThreshold: number } }>(
        `SELECT data FROM outbox WHERE type = 'contact.updated' AND data->'contact'->>'id' = $1 ORDER BY occurred_at, id`,
        [contactId],
      )
    ).rows.map((r) => r.data);

  it('counts events into hour buckets and scores them; only meaningful moves and crossings are announced', async () => {
    const { orgId } = await newOrg({ decayRate: 0, highValueThreshold: 50 }, [{ condition: 'message_received', points: 4 }]);
    const id = await newContact(orgId);
    for (let i = 0; i < 15; i++) await received(orgId, id);
    expect(await score(id)).toBe(60);
    // 15 messages in one hour: one fact row.
    expect((await pool.query('SELECT occurrences FROM contact_score_facts WHERE contact_id = $1', [id])).rows).toEqual([{ occurrences: 15 }]);
    // Announced at 12, 24, 36, 48 (a move of a tenth of maxScore each) and 52 (reaching the threshold of 50).
    const events = await announced(id);
    expect(events.map((e) => e.contact.leadScore)).toEqual([12, 24, 36, 48, 52]);
    expect(events[0]).toEqual(expect.objectContaining({ changes: ['leadScore'], highValueThreshold: 50 }));
  });

  it("a message for another org's contact is not counted", async () => {
    const a = await newOrg({}, [{ condition: 'message_received', points: 10 }]);
    const b = await newOrg({}, [{ condition: 'message_received', points: 10 }]);
    const id = await newContact(a.orgId);
    await received(b.orgId, id);
    expect(await score(id)).toBe(0);
    expect((await pool.query('SELECT count(*)::int AS n FROM contact_score_facts WHERE contact_id = $1', [id])).rows[0].n).toBe(0);
  });

  it('the sweep brings scores down with time from the stored sum alone, writing and announcing only changes', async () => {
    const { orgId, config } = await newOrg({ decayRate: 0.5, decayInterval: 'daily', highValueThreshold: 50 }, [
      { condition: 'message_received', points: 10 },
    ]);
    const id = await newContact(orgId);
    const steady = await newContact(orgId);
    for (let i = 0; i < 8; i++) await received(orgId, id);
    expect(await score(id)).toBe(80);
    const before = (await announced(id)).length;

    // One day later every contribution is worth half: 40, below 50 − hysteresis, so subscribers hear of it.
    const tomorrow = new Date(Date.now() + DAY);
    expect(await sweepOrg(pool, orgId, config, { batchSize: 10, asOf: tomorrow })).toEqual({ changed: 1, pruned: 0 });
    expect(await score(id)).toBe(40);
    expect(await score(steady)).toBe(0);
    expect(await repo.scoredAt(pool, orgId, id)).toEqual(tomorrow);
    const after = await announced(id);
    expect(after).toHaveLength(before + 1);
    expect(after[after.length - 1].contact.leadScore).toBe(40);
    // The breakdown as of that moment adds up to the stored score.
    const parts = await repo.breakdownOf(pool, orgId, id, config, tomorrow);
    expect(parts.map((p) => p.points * p.decayed)).toEqual([expect.closeTo(40, 3)]);

    // Same moment again: nothing moves, nothing is written or announced.
    expect((await sweepOrg(pool, orgId, config, { batchSize: 10, asOf: tomorrow })).changed).toBe(0);
    expect(await announced(id)).toHaveLength(before + 1);

    // An event recomputes from the facts as of its own handling (now, not the sweep's future moment): 9 × 10.
    await received(orgId, id);
    expect(await score(id)).toBe(90);
  });

  it('facts whose weight decayed below a millionth are pruned by the sweep', async () => {
    const { orgId, config } = await newOrg({ decayRate: 0.5, decayInterval: 'daily' }, [{ condition: 'message_received', points: 10 }]);
    const id = await newContact(orgId);
    await received(orgId, id, new Date(Date.now() - 60 * DAY));
    await received(orgId, id);
    expect(await score(id)).toBe(10);
    expect((await sweepOrg(pool, orgId, config, { batchSize: 10 })).pruned).toBe(1);
    expect((await pool.query('SELECT count(*)::int AS n FROM contact_score_facts WHERE contact_id = $1', [id])).rows[0].n).toBe(1);
  });

  it('recomputes a whole org in batches: new base score for contacts never scored, new rules over old facts; announces only crossings', async () => {
    // A rule worth nothing: its condition is in use, so its facts are recorded for the rules that come later.
    const { orgId } = await newOrg({ decayRate: 0 }, [{ condition: 'message_received', points: 0 }]);
    await pool.query(`INSERT INTO contacts (id, org_id, name) SELECT gen_random_uuid(), $1, 'c' || g FROM generate_series(1, 2500) g`, [orgId]);
    const chatty = await newContact(orgId);
    for (let i = 0; i < 3; i++) await received(orgId, chatty);
    expect(await score(chatty)).toBe(0);

    const config = { ...DEFAULT_CONFIG, decayRate: 0, baseScore: 15, highValueThreshold: 40 };
    await repo.saveConfig(pool, orgId, config);
    await repo.insertRule(pool, randomUUID(), orgId, { name: 'Writes to us', condition: 'message_received', value: '', points: 5, weight: 2 });
    let batches = 0;
    expect(await recomputeOrg(pool, orgId, config, { batchSize: 1000, onBatch: async () => void batches++ })).toBe(2501);
    expect(batches).toBe(3);
    const counts = (
      await pool.query<{ lead_score: number; n: number }>(
        'SELECT lead_score, count(*)::int AS n FROM contacts WHERE org_id = $1 GROUP BY 1 ORDER BY 1',
        [orgId],
      )
    ).rows;
    expect(counts).toEqual([
      { lead_score: 15, n: 2500 },
      { lead_score: 45, n: 1 },
    ]);
    // 2501 scores moved by a tenth of the scale or more, one crossed the threshold: one event, not 2501.
    const events = (await pool.query(`SELECT data FROM outbox WHERE org_id = $1 AND type = 'contact.updated'`, [orgId])).rows;
    expect(events.map((e) => [e.data.contact.id, e.data.contact.leadScore])).toEqual([[chatty, 45]]);
  });

  it('scoring a contact and deleting it at the same moment wait for each other instead of deadlocking', async () => {
    const { orgId, config } = await newOrg({ decayRate: 0 }, [{ condition: 'message_received', points: 10 }]);
    const id = await newContact(orgId);
    await received(orgId, id);
    const scorer = await pool.connect();
    const deleter = await pool.connect();
    try {
      await scorer.query('BEGIN');
      // The consumer's first step for an event of this contact...
      expect(await repo.lockState(scorer, orgId, id)).toBeDefined();
      await deleter.query('BEGIN');
      const deleting = deleter.query('DELETE FROM contacts WHERE id = $1', [id]).then(() => deleter.query('COMMIT'));
      await new Promise((r) => setTimeout(r, 300));
      // ...and its last, writing the score onto the contact row: with the locks taken in the other order, one of
      // the two transactions is aborted as a deadlock (a DELETE /contacts/:id answering 500).
      await rescore(scorer, orgId, [id], { ...config, baseScore: 5 });
      await scorer.query('COMMIT');
      await deleting;
    } finally {
      scorer.release();
      deleter.release();
    }
    expect((await pool.query('SELECT 1 FROM contacts WHERE id = $1', [id])).rowCount).toBe(0);
  });
});
