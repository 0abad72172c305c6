import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Pool } from '@crm/db';
import type { EventEnvelope } from '@crm/events';
import { createMigratedDatabase, testPool, type TestDatabase } from '@crm/testing';
import { seenHandler } from '../../services/automation/src/campaigns/campaign-seen.consumer';
import type { Deps } from '../../services/automation/src/deps';
import { countedTransaction } from '../support/counted-transaction';

// Issue #28 item 2: read receipts (message.seen) take a whole batch in one statement. What each recipient row and
// campaign count end up with must be what the receipts one by one gave: seen once, at its first receipt, only by its
// own org's receipts; and a campaign message seen before its send is recorded still fails the batch for a retry.
describe('campaign read receipts: a batch of message.seen in one statement', () => {
  let db: TestDatabase;
  let pool: Pool;
  const org = randomUUID();
  const otherOrg = randomUUID();
  const handler = seenHandler({ log: { info: () => undefined } } as unknown as Deps);

  async function campaign(orgId: string): Promise<string> {
    const id = randomUUID();
    await pool.query(`INSERT INTO campaigns (id, org_id, name, list_id, template_id, status) VALUES ($1, $2, 'Promo', $3, $4, 'active')`, [
      id,
      orgId,
      randomUUID(),
      randomUUID(),
    ]);
    return id;
  }
  async function recipient(campaignId: string, orgId: string, status = 'sent', conversationId: string | null = null): Promise<string> {
    const messageId = randomUUID();
    await pool.query(
      `INSERT INTO campaign_recipients (campaign_id, contact_id, org_id, status, sent_at, message_id, conversation_id) VALUES ($1, $2, $3, $4, now(), $5, $6)`,
      [campaignId, randomUUID(), orgId, status, status === 'sent' ? messageId : null, conversationId],
    );
    return messageId;
  }
  const seen = (orgId: string, messageIds: string[], seenAt: Date, extra: Partial<{ conversationId: string; messages: unknown[] }> = {}) =>
    ({
      id: randomUUID(),
      type: 'message.seen',
      orgId,
      occurredAt: seenAt.toISOString(),
      version: 1,
      data: { messageIds, conversationId: randomUUID(), seenAt: seenAt.toISOString(), messages: [], ...extra },
    }) as unknown as EventEnvelope;
  const seenAt = async (messageId: string) =>
    (await pool.query('SELECT seen_at FROM campaign_recipients WHERE message_id = $1', [messageId])).rows[0].seen_at as Date | null;
  const seenCount = async (campaignId: string) =>
    (await pool.query('SELECT seen_count FROM campaigns WHERE id = $1', [campaignId])).rows[0].seen_count;
  async function apply(events: EventEnvelope[]): Promise<number> {
    return (await countedTransaction(pool, (client) => handler(events, client, undefined))).statements;
  }

  beforeAll(async () => {
    db = await createMigratedDatabase('automation', path.join(__dirname, '../../services/automation/migrations'));
    pool = testPool(db.url);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('each recipient once, at its first receipt; other orgs and unsent rows count nothing; one statement to mark', async () => {
    const [first, second, theirs] = [await campaign(org), await campaign(org), await campaign(otherOrg)];
    const [m1, m2, m3] = [await recipient(first, org), await recipient(first, org), await recipient(second, org)];
    const pending = await recipient(first, org, 'pending');
    const other = await recipient(theirs, otherOrg);
    const early = new Date(Date.now() - 60_000);
    const later = new Date(Date.now() - 30_000);

    // One statement marks all, then one per campaign counted (two here).
    const statements = await apply([seen(org, [m1, m2.toUpperCase()], early), seen(org, [m1, m3, other], later), seen(org, [pending], later)]);
    expect(statements).toBe(3);
    expect(await seenAt(m1)).toEqual(early);
    expect(await seenAt(m2)).toEqual(early);
    expect(await seenAt(m3)).toEqual(later);
    expect(await seenAt(other)).toBeNull();
    expect([await seenCount(first), await seenCount(second), await seenCount(theirs)]).toEqual([2, 1, 0]);

    // Again (a redelivery, a later receipt): nobody is seen twice, the first time stays, the counts hold.
    await apply([seen(org, [m1, m3], new Date())]);
    expect(await seenAt(m1)).toEqual(early);
    expect([await seenCount(first), await seenCount(second)]).toEqual([2, 1]);
  });

  it('a campaign message seen while its send is still pending fails the batch (retried); nothing of it is kept', async () => {
    const id = await campaign(org);
    const conversationId = randomUUID();
    const known = await recipient(id, org);
    await recipient(id, org, 'pending', conversationId);
    const unrecorded = randomUUID();
    await expect(
      apply([
        seen(org, [known, unrecorded], new Date(), {
          conversationId,
          messages: [{ id: unrecorded, source: 'campaign', sentAt: new Date().toISOString() }],
        }),
      ]),
    ).rejects.toThrow('no recorded send yet');
    expect(await seenAt(known)).toBeNull();
    expect(await seenCount(id)).toBe(0);
  });

  it('a batch naming no message asks nothing', async () => {
    expect(await apply([seen(org, [], new Date())])).toBe(0);
  });
});
