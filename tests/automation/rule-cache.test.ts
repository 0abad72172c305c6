import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { migrate, type Pool } from '@crm/db';
import { createLogger } from '@crm/logger';
import { eventually, testPool } from '@crm/testing';
import { createTestDatabase, type TestDatabase } from '@crm/testing';
import { RuleCache } from '../../services/automation/src/rule-definitions';

// Issue #28 item 3: the trigger consumer judges events against each org's active rules held in memory. Events no
// rule watches cost no query; a rule written anywhere (this process, another replica, plain SQL) is seen at once or
// within a notification's delivery; a lost notification is outlived by RULE_CACHE_MAX_AGE_MS.
describe('the rule cache of the trigger consumer', () => {
  let db: TestDatabase;
  let pool: Pool;
  let writer: Pool;
  const queries = { n: 0 };
  const caches: RuleCache[] = [];

  const newCache = async (maxAgeMs = 60_000) => {
    const cache = new RuleCache({ pool, databaseUrl: db.url, log: createLogger('test', 'silent'), maxAgeMs });
    await cache.start();
    caches.push(cache);
    return cache;
  };
  const addRule = async (orgId: string, trigger: string, status = 'active') => {
    const id = randomUUID();
    await writer.query(
      `INSERT INTO rules (id, org_id, name, trigger_type, conditions, keywords, actions, status)
       VALUES ($1, $2, $3, $4, '[]', '{}', '[{"type":"add_tag","tag":"x"}]', $5)`,
      [id, orgId, `rule ${id.slice(0, 4)}`, trigger, status],
    );
    return id;
  };

  beforeAll(async () => {
    db = await createTestDatabase('automation_rule_cache');
    pool = testPool(db.url, 4);
    writer = testPool(db.url, 2);
    await migrate(pool, path.join(__dirname, '../../services/automation/migrations'));
    // Count what the cache asks of its pool (the writer's statements are not counted).
    const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
    (pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      queries.n++;
      return query(...a);
    };
  });
  afterAll(async () => {
    for (const c of caches) await c.stop();
    await writer?.end();
    await pool?.end();
    await db?.drop();
  });

  it('asks the database once per org, however many of its events no rule watches', async () => {
    const org = randomUUID();
    // Written before the cache listens, so no announcement of it arrives midway to force a (correct) second load.
    await addRule(org, 'message_received');
    const cache = await newCache();
    queries.n = 0;
    const results = await Promise.all(Array.from({ length: 50 }, () => cache.rulesFor(org, ['conversation_created'])));
    for (let i = 0; i < 200; i++) results.push(await cache.rulesFor(org, ['contact_created']));
    expect(results.every((r) => r.length === 0)).toBe(true);
    expect((await cache.rulesFor(org, ['message_received'])).map((r) => r.trigger_type)).toEqual(['message_received']);
    expect(queries.n).toBe(1);
  });

  it('sees a rule another process wrote as soon as the change is announced, and one this process wrote at once', async () => {
    const cache = await newCache();
    const org = randomUUID();
    expect(await cache.rulesFor(org, ['message_received'])).toEqual([]);
    // Another replica (or plain SQL): migration 010's trigger announces it at commit.
    const first = await addRule(org, 'message_received');
    expect(await eventually(async () => ((await cache.rulesFor(org, ['message_received'])).length === 1 ? true : undefined), 5_000, 20)).toBe(true);
    // Paused elsewhere: gone again.
    await writer.query(`UPDATE rules SET status = 'paused' WHERE id = $1`, [first]);
    expect(await eventually(async () => ((await cache.rulesFor(org, ['message_received'])).length === 0 ? true : undefined), 5_000, 20)).toBe(true);
    // Written by this process's rules API: it says so after the commit, and the very next event sees the rule.
    await pool.query(`ALTER TABLE rules DISABLE TRIGGER rules_changed`);
    try {
      await addRule(org, 'message_received');
      expect(await cache.rulesFor(org, ['message_received'])).toHaveLength(0);
      cache.changed(org);
      expect(await cache.rulesFor(org, ['message_received'])).toHaveLength(1);
    } finally {
      await pool.query(`ALTER TABLE rules ENABLE TRIGGER rules_changed`);
    }
  });

  it('forgets an unannounced change within its maximum age', async () => {
    // 3 s: the statements between filling the entry and reading it again stay well inside its age even on a loaded
    // machine (at 300 ms they could outlast it, and the "old answer" was already the new one).
    const cache = await newCache(3_000);
    const org = randomUUID();
    expect(await cache.rulesFor(org, ['contact_created'])).toEqual([]);
    await pool.query(`ALTER TABLE rules DISABLE TRIGGER rules_changed`);
    try {
      await addRule(org, 'contact_created');
      // Nothing announced it: still the old answer for now, the new one once the entry is older than 3 s.
      expect(await cache.rulesFor(org, ['contact_created'])).toHaveLength(0);
      expect(await eventually(async () => ((await cache.rulesFor(org, ['contact_created'])).length === 1 ? true : undefined), 10_000, 50)).toBe(true);
    } finally {
      await pool.query(`ALTER TABLE rules ENABLE TRIGGER rules_changed`);
    }
  });

  it('gives rules of several triggers in the order they were made', async () => {
    const cache = await newCache();
    const org = randomUUID();
    const a = await addRule(org, 'conversation_assigned');
    const b = await addRule(org, 'conversation_created');
    const c = await addRule(org, 'conversation_assigned');
    expect((await cache.rulesFor(org, ['conversation_created', 'conversation_assigned'])).map((r) => r.id)).toEqual([a, b, c]);
  });

  it('keeps the order of rules made within one millisecond (created_at has microseconds, a JS Date does not)', async () => {
    const cache = await newCache();
    const org = randomUUID();
    // The later rule has the smaller id: ordered by milliseconds, then id, it would come first.
    const [first, second] = ['ffffffff-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
    const [made] = (await pool.query(`SELECT date_trunc('milliseconds', now()) AS t`)).rows.map((r) => r.t as Date);
    for (const [id, trigger, micros] of [
      [first, 'conversation_created', 300],
      [second, 'conversation_assigned', 700],
    ] as const) {
      await addRule(org, trigger);
      await writer.query(
        `UPDATE rules SET id = $1, created_at = $2::timestamptz + $3 * interval '1 microsecond' WHERE org_id = $4 AND trigger_type = $5`,
        [id, made, micros, org, trigger],
      );
    }
    expect((await cache.rulesFor(org, ['conversation_assigned', 'conversation_created'])).map((r) => r.id)).toEqual([first, second]);
  });
});
