import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { migrate, Pool, type Queryable } from '@crm/db';
import { createTestDatabase, TestDatabase, testPool } from '@crm/testing';
import { cancelReplied } from '../src/scheduled/repo';
import { concernedBySla } from '../src/service-levels/sla-clock.repo';

// What every inbound message's bookkeeping asks of the database, once per batch instead of once per message: the
// scheduled cancelIfReplied messages its contacts' messages cancel, and which conversations the SLA clocks concern.
// Each answers as the per-message statements did, in one round trip.
describe('per-batch bookkeeping statements', () => {
  let db: TestDatabase;
  let pool: Pool;
  const org = randomUUID();
  const other = randomUUID();
  const account = randomUUID();
  const t0 = Date.parse('2026-12-04T08:00:00Z');
  const at = (secs: number) => new Date(t0 + secs * 1000);

  /** The pool, counting the statements sent through it. */
  const counted = () => {
    const sent: string[] = [];
    const query = (text: string, values?: unknown[]) => (sent.push(text), pool.query(text, values));
    return { q: { query } as unknown as Queryable, sent };
  };

  beforeAll(async () => {
    db = await createTestDatabase('msg_batch_bookkeeping');
    pool = testPool(db.url, 2);
    await migrate(pool, path.join(__dirname, '..', 'migrations'));
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  async function conversation(orgId: string, accountId = account, slaPolicyId: string | null = null) {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, contact_chatnet_uid, contact_name, status, last_activity_at, sla_policy_id)
       VALUES ($1, $2, $3, 'user', $4, $4, 'Lan', 'active', now(), $5)`,
      [id, orgId, accountId, `u-${id}`, slaPolicyId],
    );
    return id;
  }
  async function scheduled(conversationId: string, createdAt: Date, o: { cancelIfReplied?: boolean; leased?: boolean; orgId?: string } = {}) {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO scheduled_messages (id, org_id, conversation_id, content, send_at, due_at, cancel_if_replied, created_at, lease_until)
       VALUES ($1, $2, $3, 'later', now() + interval '1 day', now() + interval '1 day', $4, $5, $6)`,
      [id, o.orgId ?? org, conversationId, o.cancelIfReplied ?? true, createdAt, o.leased ? new Date(Date.now() + 60_000) : null],
    );
    return id;
  }
  const statusOf = async (id: string) =>
    (await pool.query('SELECT status, cancel_reason FROM scheduled_messages WHERE id = $1', [id])).rows[0] as {
      status: string;
      cancel_reason: string | null;
    };

  it('cancelReplied: one statement for the batch cancels what each conversation’s latest contact message follows, and nothing else', async () => {
    const c1 = await conversation(org);
    const c2 = await conversation(org);
    const c3 = await conversation(org);
    const before = await scheduled(c1, at(5)); // written before the later of c1's two messages: cancelled
    const after = await scheduled(c1, at(30)); // written after both: stays
    const notIfReplied = await scheduled(c1, at(1), { cancelIfReplied: false });
    const leased = await scheduled(c1, at(1), { leased: true }); // being sent right now: the send decides
    const inC2 = await scheduled(c2, at(1));
    const untouched = await scheduled(c3, at(1)); // no message of the batch went there

    const { q, sent } = counted();
    const n = await cancelReplied(q, [
      { orgId: org, conversationId: c1, sentAt: at(2) },
      { orgId: org, conversationId: c2, sentAt: at(3) },
      { orgId: org, conversationId: c1, sentAt: at(10) },
      { orgId: other, conversationId: c3, sentAt: at(10) }, // the right conversation under another org: no match
    ]);

    expect(sent).toHaveLength(1);
    expect(n).toBe(2);
    expect(await statusOf(before)).toEqual({ status: 'cancelled', cancel_reason: 'customer_replied' });
    expect(await statusOf(inC2)).toEqual({ status: 'cancelled', cancel_reason: 'customer_replied' });
    for (const id of [after, notIfReplied, leased, untouched]) expect((await statusOf(id)).status).toBe('scheduled');
  });

  it('cancelReplied: an empty batch sends nothing', async () => {
    const { q, sent } = counted();
    expect(await cancelReplied(q, [])).toBe(0);
    expect(sent).toEqual([]);
  });

  it('concernedBySla: one statement names the conversations on an account with a policy or still holding a clock, by their place in the batch', async () => {
    const policy = randomUUID();
    const withPolicy = randomUUID();
    await pool.query(`INSERT INTO sla_policies (id, org_id, name, first_response_minutes) VALUES ($1, $2, 'Fast', 15)`, [policy, org]);
    await pool.query(`INSERT INTO account_sla (org_id, chatnet_account_id, policy_id) VALUES ($1, $2, $3)`, [org, withPolicy, policy]);
    const onPolicyAccount = await conversation(org, withPolicy);
    const withClock = await conversation(org, account, policy); // its account lost the policy; the clock is still to clear
    const neither = await conversation(org);
    const otherOrgs = await conversation(other, withPolicy); // the same account id under another org follows nothing

    const { q, sent } = counted();
    const concerned = await concernedBySla(q, [
      { orgId: org, accountId: account, conversationId: neither },
      { orgId: org, accountId: withPolicy, conversationId: onPolicyAccount },
      { orgId: other, accountId: withPolicy, conversationId: otherOrgs },
      { orgId: org, accountId: account, conversationId: withClock },
      { orgId: org, accountId: account, conversationId: neither },
    ]);

    expect(sent).toHaveLength(1);
    expect([...concerned].sort()).toEqual([1, 3]);
    expect(await concernedBySla(q, [])).toEqual(new Set());
    expect(sent).toHaveLength(1);
  });
});
