import path from 'node:path';
import { migrate, type Pool } from '@crm/db';
import { createTestDatabase, type TestDatabase, testPool } from '@crm/testing';
import { pruneOlderThan, recordSent, sentWithin } from '../../services/automation/src/notifications/email-alerts.repo';

// The alert-email throttle keeps one row per (org, user, conversation); a row older than the window decides nothing
// any more, so the pruner deletes exactly those and keeps the ones still throttling.
describe('email alert throttle rows are pruned past the window', () => {
  let db: TestDatabase;
  let pool: Pool;
  const org = '00000000-0000-4000-8000-000000000001';
  const user = '00000000-0000-4000-8000-000000000002';
  const conv = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

  beforeAll(async () => {
    db = await createTestDatabase('alerts_prune');
    pool = testPool(db.url);
    await migrate(pool, path.join(__dirname, '../../services/automation/migrations'));
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('deletes rows older than the window only, in slices', async () => {
    for (let i = 1; i <= 5; i++) await recordSent(pool, org, user, conv(i));
    await pool.query(`UPDATE email_alerts_sent SET sent_at = now() - interval '2 hours' WHERE conversation_id = ANY($1)`, [
      [conv(1), conv(2), conv(3)],
    ]);
    expect(await pruneOlderThan(pool, 3600_000, 2)).toBe(2);
    expect(await pruneOlderThan(pool, 3600_000, 2)).toBe(1);
    expect(await pruneOlderThan(pool, 3600_000, 2)).toBe(0);
    const { rows } = await pool.query('SELECT conversation_id FROM email_alerts_sent ORDER BY conversation_id');
    expect(rows.map((r) => r.conversation_id)).toEqual([conv(4), conv(5)]);
    expect(await sentWithin(pool, org, user, conv(4), 3600_000)).toBe(true);
    expect(await sentWithin(pool, org, user, conv(1), 3600_000)).toBe(false);
  });
});
