import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Pool } from '@crm/db';
import { createMigratedDatabase, testPool, type TestDatabase } from '@crm/testing';
import { markReplied } from '../../services/automation/src/campaigns/recipients.repo';

// Issue #28 item 2: campaign replies take a whole batch of message.received in one statement. What each recipient
// row ends up with must be what the messages one by one gave: marked once, at its earliest message in the window,
// and only by its own org's messages.
describe('campaign replies: a batch of messages marks its recipients in one statement', () => {
  let db: TestDatabase;
  let pool: Pool;
  const org = randomUUID();
  const otherOrg = randomUUID();
  const hour = 3_600_000;
  const sentAt = new Date(Date.now() - 2 * hour);

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
  async function recipient(campaignId: string, orgId: string, contactId: string, status = 'sent'): Promise<void> {
    await pool.query(`INSERT INTO campaign_recipients (campaign_id, contact_id, org_id, status, sent_at) VALUES ($1, $2, $3, $4, $5)`, [
      campaignId,
      contactId,
      orgId,
      status,
      status === 'sent' ? sentAt : null,
    ]);
  }
  const repliedAt = async (campaignId: string, contactId: string) =>
    (await pool.query('SELECT replied_at FROM campaign_recipients WHERE campaign_id = $1 AND contact_id = $2', [campaignId, contactId])).rows[0]
      .replied_at as Date | null;

  beforeAll(async () => {
    db = await createMigratedDatabase('automation', path.join(__dirname, '../../services/automation/migrations'));
    pool = testPool(db.url);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('each recipient once, at its earliest message in the window; other orgs, unsent rows and old messages count nothing', async () => {
    const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const first = await campaign(org);
    const second = await campaign(org);
    const theirs = await campaign(otherOrg);
    await recipient(first, org, a);
    await recipient(second, org, a);
    await recipient(first, org, b);
    await recipient(first, org, c, 'pending');
    await recipient(theirs, otherOrg, d);

    const early = new Date(sentAt.getTime() + 10 * 60_000);
    const later = new Date(sentAt.getTime() + 20 * 60_000);
    const replied = await markReplied(
      pool,
      [
        { orgId: org, contactId: a, at: later },
        { orgId: org, contactId: a, at: early },
        { orgId: org, contactId: a, at: later },
        // Before the campaign message: no reply to it.
        { orgId: org, contactId: b, at: new Date(sentAt.getTime() - 60_000) },
        { orgId: org, contactId: c, at: later },
        // d is a recipient of another org's campaign only.
        { orgId: org, contactId: d, at: later },
      ],
      24,
    );
    expect(Object.fromEntries(replied)).toEqual({ [first]: 1, [second]: 1 });
    expect(await repliedAt(first, a)).toEqual(early);
    expect(await repliedAt(second, a)).toEqual(early);
    expect(await repliedAt(first, b)).toBeNull();
    expect(await repliedAt(first, c)).toBeNull();
    expect(await repliedAt(theirs, d)).toBeNull();

    // Again (a redelivery, a later message): nobody is marked twice, and the first time stays.
    const again = await markReplied(
      pool,
      [
        { orgId: org, contactId: a, at: later },
        { orgId: org, contactId: b, at: later },
      ],
      24,
    );
    expect(Object.fromEntries(again)).toEqual({ [first]: 1 });
    expect(await repliedAt(first, a)).toEqual(early);
    expect(await repliedAt(first, b)).toEqual(later);
  });

  it('a message past the window after the send is no reply; an empty batch asks nothing', async () => {
    const e = randomUUID();
    const id = await campaign(org);
    await recipient(id, org, e);
    expect((await markReplied(pool, [{ orgId: org, contactId: e, at: new Date(sentAt.getTime() + 3 * hour) }], 2)).size).toBe(0);
    expect(await repliedAt(id, e)).toBeNull();
    expect((await markReplied(pool, [], 2)).size).toBe(0);
  });
});
