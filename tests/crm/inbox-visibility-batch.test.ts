import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { withTransaction, type Pool } from '@crm/db';
import type { EventEnvelope } from '@crm/events';
import { createLogger } from '@crm/logger';
import { createMigratedDatabase, testPool, type TestDatabase } from '@crm/testing';
import { inboxVisibilityHandler } from '../../services/crm/src/contacts/events/inbox-visibility.consumer';

// Issue #28 item 2: crm's inbox visibility takes a batch of conversation events in two statements. What the rows end
// up with must be what the events one at a time in delivery order gave.
describe('inbox visibility: a batch of conversation events is folded in order, then written at once', () => {
  let db: TestDatabase;
  let pool: Pool;
  const org = randomUUID();
  const handler = inboxVisibilityHandler(createLogger('test', 'silent'));
  const event = (type: string, data: object, orgId = org): EventEnvelope => ({
    id: randomUUID(),
    type,
    orgId,
    occurredAt: new Date().toISOString(),
    data,
  });
  const created = (id: string, contactId: string | null, accountId: string, orgId = org) =>
    event('conversation.created', { id, contactId, chatnetAccountId: accountId, type: 'user', threadId: 't' }, orgId);
  const assigned = (conversationId: string, contactId: string | null, accountId: string, assigneeId: string | null) =>
    event('conversation.assigned', {
      conversationId,
      contactId,
      chatnetAccountId: accountId,
      assigneeId,
      teamId: null,
      previousAssigneeId: null,
      assignedBy: null,
      reason: 'round_robin',
    });
  const owners = async (id: string) =>
    (await pool.query('SELECT org_id, contact_id, chatnet_account_id, assignee_id FROM conversation_owners WHERE conversation_id = $1', [id]))
      .rows[0];
  const apply = (events: EventEnvelope[]) => withTransaction(pool, (tx) => handler(events, tx));

  beforeAll(async () => {
    db = await createMigratedDatabase('crm', path.join(__dirname, '../../services/crm/migrations'));
    pool = testPool(db.url);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('created, assigned, reassigned and unassigned in one batch end as the last said; an unstated assignee is kept', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const [contact, account, lan, minh] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await apply([
      created(a, contact, account),
      assigned(a, contact, account, lan),
      created(b, null, account),
      assigned(b, null, account, minh),
      assigned(a, null, account, minh),
      created(c, contact, account),
      assigned(b, contact, account, null),
    ]);
    expect(await owners(a)).toEqual({ org_id: org, contact_id: contact, chatnet_account_id: account, assignee_id: minh });
    expect(await owners(b)).toEqual({ org_id: org, contact_id: contact, chatnet_account_id: account, assignee_id: null });
    expect(await owners(c)).toEqual({ org_id: org, contact_id: contact, chatnet_account_id: account, assignee_id: null });

    // A later batch that does not state the assignee (a created redelivered) keeps it; one that does changes it.
    await apply([created(a, null, account), assigned(c, null, account, lan)]);
    expect((await owners(a)).assignee_id).toBe(minh);
    expect((await owners(c)).assignee_id).toBe(lan);
  });

  it('an account assignment or a settings change in the middle of the batch is applied in its place', async () => {
    const [conv, account, lan] = [randomUUID(), randomUUID(), randomUUID()];
    await apply([
      created(conv, null, account),
      event('inbox_settings.updated', { agentVisibility: 'assigned' }),
      event('chatnet_account.assignment_updated', { chatnetAccountId: account, mode: 'manual', userIds: [lan], maxOpenPerUser: null }),
      assigned(conv, null, account, lan),
    ]);
    expect((await owners(conv)).assignee_id).toBe(lan);
    expect((await pool.query('SELECT agent_visibility FROM inbox_visibility WHERE org_id = $1', [org])).rows[0].agent_visibility).toBe('assigned');
    expect(
      (await pool.query('SELECT user_ids FROM account_users WHERE org_id = $1 AND chatnet_account_id = $2', [org, account])).rows[0].user_ids,
    ).toEqual([lan]);
  });

  it("another org's event naming a conversation leaves that conversation's row alone", async () => {
    const [conv, account, other] = [randomUUID(), randomUUID(), randomUUID()];
    await apply([created(conv, null, account), created(conv, randomUUID(), randomUUID(), other)]);
    expect(await owners(conv)).toEqual({ org_id: org, contact_id: null, chatnet_account_id: account, assignee_id: null });
  });
});
