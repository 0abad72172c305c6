import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Pool } from '@crm/db';
import { installEventTables, type ParsedEvent } from '@crm/events';
import { createMigratedDatabase, testPool, type TestDatabase } from '@crm/testing';
import { inboundAlerts } from '../../services/automation/src/notifications/inbound-alerts';
import { derivedId } from '../../services/automation/src/notifications/notifications';
import { countedTransaction } from '../support/counted-transaction';

// Issue #28 item 2: the inbound alerts of a batch of message.received take three statements however many messages
// and recipients there are. What the notifications end up as must be what the messages one at a time gave: one unread
// per user and conversation carrying the latest text, created with the first message's derived id and announced once,
// a read one left alone (a new one beside it), and other orgs' notifications untouched.
describe('inbound alerts: a batch of messages in three statements and its announcements', () => {
  let db: TestDatabase;
  let pool: Pool;
  const org = randomUUID();
  const otherOrg = randomUUID();
  const [u1, u2, u3] = [randomUUID(), randomUUID(), randomUUID()];

  function received(orgId: string, conversationId: string, content: string, to: { assigneeId?: string; eligibleUserIds?: string[] }) {
    return {
      id: randomUUID(),
      type: 'message.received',
      orgId,
      occurredAt: new Date().toISOString(),
      version: 1,
      data: { conversationId, senderName: 'Lan', threadType: 'user', content, contentType: 'text', assigneeId: null, eligibleUserIds: [], ...to },
    } as unknown as ParsedEvent<'message.received'>;
  }
  async function apply(events: ParsedEvent<'message.received'>[]): Promise<{ created: number; statements: number }> {
    const { result: created, statements } = await countedTransaction(pool, (client) => inboundAlerts(events, client));
    return { created, statements };
  }
  const alertsOf = async (userId: string, conversationId: string) =>
    (
      await pool.query(
        `SELECT n.id, n.org_id, n.message, EXISTS (SELECT 1 FROM notification_reads r WHERE r.notification_id = n.id) AS read
         FROM notifications n WHERE n.user_id = $1 AND n.resource_id = $2 AND n.type = 'new_message' ORDER BY n.created_at`,
        [userId, conversationId],
      )
    ).rows;
  const announced = async (notificationId: string) =>
    (await pool.query(`SELECT data FROM outbox WHERE type = 'notification.created' AND data->>'id' = $1`, [notificationId])).rows.map((r) => r.data);

  beforeAll(async () => {
    db = await createMigratedDatabase('automation', path.join(__dirname, '../../services/automation/migrations'));
    pool = testPool(db.url);
    await installEventTables(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('several messages of a conversation: one unread alert per recipient, the latest text, announced once; three statements and the announcements', async () => {
    const conv = randomUUID();
    const first = received(org, conv, 'first', { eligibleUserIds: [u1, u2] });
    const batch = [first, received(org, conv, 'second', { eligibleUserIds: [u1, u2] }), received(org, conv, 'third', { eligibleUserIds: [u1, u2] })];
    const { created, statements } = await apply(batch);
    expect(created).toBe(2);
    // The lock, the bump, the insert and the announcements: 4 (one more only because new ones are announced).
    expect(statements).toBe(4);
    for (const user of [u1, u2]) {
      const rows = await alertsOf(user, conv);
      expect(rows).toEqual([expect.objectContaining({ id: derivedId('new_message', first.id, user), org_id: org, message: 'third', read: false })]);
      expect(await announced(rows[0].id)).toEqual([
        expect.objectContaining({ userId: user, type: 'new_message', message: 'third', resourceId: conv }),
      ]);
    }
  });

  it('an unread alert is bumped (no new one, nothing announced); a read one is left and a new one added', async () => {
    const conv = randomUUID();
    await apply([received(org, conv, 'hello', { assigneeId: u1 }), received(org, conv, 'hello', { assigneeId: u3 })]);
    const [read] = await alertsOf(u3, conv);
    await pool.query('INSERT INTO notification_reads (notification_id, user_id) VALUES ($1, $2)', [read.id, u3]);

    const { created } = await apply([received(org, conv, 'again', { assigneeId: u1 }), received(org, conv, 'again', { assigneeId: u3 })]);
    expect(created).toBe(1);
    const u1Rows = await alertsOf(u1, conv);
    expect(u1Rows).toEqual([expect.objectContaining({ message: 'again', read: false })]);
    expect(await announced(u1Rows[0].id)).toEqual([expect.objectContaining({ message: 'hello' })]);
    expect(await alertsOf(u3, conv)).toEqual([
      expect.objectContaining({ id: read.id, message: 'hello', read: true }),
      expect.objectContaining({ message: 'again', read: false }),
    ]);
  });

  it("another org's messages touch only that org's alerts; a message with no recipient costs no statement", async () => {
    const conv = randomUUID();
    await apply([received(org, conv, 'ours', { assigneeId: u1 })]);
    const { created } = await apply([received(otherOrg, conv, 'theirs', { assigneeId: u1 })]);
    expect(created).toBe(1);
    const rows = await alertsOf(u1, conv);
    expect(rows.map((r) => [r.org_id, r.message])).toEqual([
      [org, 'ours'],
      [otherOrg, 'theirs'],
    ]);
    expect(await apply([received(org, conv, 'nobody', {})])).toEqual({ created: 0, statements: 0 });
  });

  it('the same batch again (a redelivery past its idempotency rows) adds nothing and announces nothing more', async () => {
    const conv = randomUUID();
    const batch = [received(org, conv, 'once', { assigneeId: u2 })];
    await apply(batch);
    await pool.query('INSERT INTO notification_reads (notification_id, user_id) SELECT id, user_id FROM notifications WHERE resource_id = $1', [
      conv,
    ]);
    expect((await apply(batch)).created).toBe(0);
    const rows = await alertsOf(u2, conv);
    expect(rows).toHaveLength(1);
    expect(await announced(rows[0].id)).toHaveLength(1);
  });
});
