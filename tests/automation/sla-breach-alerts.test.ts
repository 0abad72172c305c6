import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import { ConsumerProbe, processedBy } from '../support/consumers';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeMessaging, member, org } from './support';
import { connectPatiently } from '../support/patient-client';

// messaging's conversation.sla_breached as automation takes it: `sla_breached` notifications for whom the policy's
// onBreach.notify names (the assignee; the org's team leads and above), once per event; and the
// `conversation_sla_breached` trigger. Events are published into the stack's exchange as messaging's relay would.
describe('conversation.sla_breached: notifications and the conversation_sla_breached trigger', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let messaging: Awaited<ReturnType<typeof fakeMessaging>>;
  let db: PgClient;
  let triggers: ConsumerProbe;
  let owner: Client;
  let orgId: string;
  let agent: { api: Client; id: string };
  let other: { api: Client; id: string };
  let lead: { api: Client; id: string };

  beforeAll(async () => {
    messaging = await fakeMessaging();
    stack = await startStack({ services: ['automation'], serviceEnv: { automation: { MESSAGING_ADDR: messaging.addr, RUN_POLL_MS: '100' } } });
    bus = await eventBus(stack);
    db = await connectPatiently(stack.databaseUrl('automation'));
    triggers = new ConsumerProbe(stack, 'automation', triggersQueue());
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    agent = await member(stack, owner, 'agent', 'assignee');
    other = await member(stack, owner, 'agent', 'bystander');
    lead = await member(stack, owner, 'team_lead');
  });
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await messaging?.stop();
  });

  const breach = (d: Record<string, unknown> = {}) => ({
    conversationId: randomUUID(),
    contactId: randomUUID(),
    chatnetAccountId: randomUUID(),
    assigneeId: agent.id,
    policyId: randomUUID(),
    target: 'first_response',
    dueAt: '2031-03-10T09:30:00.000Z',
    breachedAt: '2031-03-10T09:30:01.000Z',
    notify: ['assignee', 'team_leads'],
    ...d,
  });
  const triggersQueue = () => `${stack.env.EVENTS_EXCHANGE}.automation.triggers`;
  /** automation's trigger consumer (alerts and rule runs) has committed its handling of these events. */
  const handled = (...eventIds: string[]) => processedBy(db, triggersQueue(), eventIds);
  const alertsOf = async (as: Client) => (await as.get('/api/v1/notifications')).body.data.filter((n: any) => n.type === 'sla_breached');

  it('the assignee and the team leads (and above) are told, once; other agents are not', async () => {
    const data = breach();
    const event = await bus.publish('conversation.sla_breached', orgId, data);
    const [mine] = await eventually(async () => {
      const got = await alertsOf(agent.api);
      return got.length ? got : undefined;
    });
    expect(mine).toEqual({
      id: expect.any(String),
      type: 'sla_breached',
      title: 'SLA breached: first response',
      message: 'A conversation missed its first response due time (2031-03-10 09:30 UTC).',
      resourceId: data.conversationId,
      read: false,
      createdAt: expect.any(String),
    });
    await eventually(async () => (await alertsOf(lead.api)).length === 1);
    expect(await alertsOf(owner)).toHaveLength(1);

    const mark = await triggers.mark();
    await bus.publish('conversation.sla_breached', orgId, data, event.id);
    // The copy was settled (recognised as processed: it writes no row of its own).
    await triggers.settled(mark, 1);
    expect(await alertsOf(agent.api)).toHaveLength(1);
    expect(await alertsOf(lead.api)).toHaveLength(1);
    expect(await alertsOf(other.api)).toEqual([]);
  });

  it('notify [] tells nobody; team_leads alone skips the assignee', async () => {
    const quiet = breach({ notify: [], target: 'resolution' });
    const leadsOnly = breach({ notify: ['team_leads'], target: 'next_response' });
    const quietEvent = await bus.publish('conversation.sla_breached', orgId, quiet);
    const leadsOnlyEvent = await bus.publish('conversation.sla_breached', orgId, leadsOnly);
    const n = await eventually(async () => (await alertsOf(lead.api)).find((x: any) => x.resourceId === leadsOnly.conversationId));
    expect(n.title).toBe('SLA breached: next response');
    await handled(quietEvent.id, leadsOnlyEvent.id);
    expect((await alertsOf(agent.api)).map((x: any) => x.resourceId)).not.toContain(leadsOnly.conversationId);
    for (const as of [agent.api, lead.api, owner]) expect((await alertsOf(as)).map((x: any) => x.resourceId)).not.toContain(quiet.conversationId);
  });

  it('a conversation_sla_breached rule matches on the breach (conversation.target) and acts on its conversation', async () => {
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Missed first reply',
      trigger: { type: 'conversation_sla_breached', conditions: [{ field: 'conversation.target', operator: 'equals', value: 'first_response' }] },
      actions: [{ type: 'send_message', template: 'Sorry for the wait, we are on it.' }],
    });
    expect(rule.status).toBe(201);
    expect((await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).status).toBe(200);
    const skipped = breach({ target: 'resolution', notify: [] });
    const matched = breach({ notify: [] });
    const skippedEvent = await bus.publish('conversation.sla_breached', orgId, skipped);
    await bus.publish('conversation.sla_breached', orgId, matched);
    const sent = await eventually(async () => messaging.calls.find((c) => c.conversationId === matched.conversationId));
    expect(sent).toEqual(expect.objectContaining({ orgId, content: 'Sorry for the wait, we are on it.', source: 'automation' }));
    // A run is started in the transaction that handles its event: the skipped breach's is committed, and started none.
    await handled(skippedEvent.id);
    expect((await owner.get(`/api/v1/automation/rules/${rule.body.id}/runs`)).body.pagination.total).toBe(1);
    expect(messaging.calls.filter((c) => c.conversationId === skipped.conversationId)).toEqual([]);
  });
});
