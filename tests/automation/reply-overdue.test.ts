import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeMessaging, member, org } from './support';

// messaging's conversation.reply_overdue (an account's reply timeout with onTimeout notify_leads, issue #29 item 5) as
// automation takes it: one `reply_overdue` notification for the org's team leads and above, none for agents; and the
// rule trigger `conversation_reply_overdue`, whose conditions and templates read the event.
// Events are published into the stack's exchange as messaging's relay would.
describe('conversation.reply_overdue: the team leads are told', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let messaging: Awaited<ReturnType<typeof fakeMessaging>>;
  let owner: Client;
  let orgId: string;
  let agent: { api: Client; id: string };
  let lead: { api: Client; id: string };

  beforeAll(async () => {
    messaging = await fakeMessaging();
    stack = await startStack({ services: ['automation'], serviceEnv: { automation: { MESSAGING_ADDR: messaging.addr, RUN_POLL_MS: '100' } } });
    bus = await eventBus(stack);
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    agent = await member(stack, owner, 'agent');
    lead = await member(stack, owner, 'team_lead');
  });
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await messaging?.stop();
  });

  const overdueOf = async (as: Client) => (await as.get('/api/v1/notifications')).body.data.filter((n: any) => n.type === 'reply_overdue');

  it('team leads and the owner get one reply_overdue notification naming the contact, for the conversation; agents none', async () => {
    const conversationId = randomUUID();
    await bus.publish('conversation.reply_overdue', orgId, {
      conversationId,
      contactId: randomUUID(),
      chatnetAccountId: randomUUID(),
      assigneeId: agent.id,
      contactName: 'Mai Tran',
      waitingSince: new Date(Date.now() - 15 * 60_000).toISOString(),
      dueAt: new Date().toISOString(),
      replyTimeoutMinutes: 15,
    });
    const [n] = await eventually(async () => {
      const got = await overdueOf(lead.api);
      return got.length ? got : undefined;
    });
    expect(n).toEqual(
      expect.objectContaining({
        type: 'reply_overdue',
        title: 'Reply overdue: Mai Tran',
        message: 'Mai Tran has waited more than 15 minutes for a reply from the assignee.',
        resourceId: conversationId,
        read: false,
      }),
    );
    expect(await overdueOf(owner)).toHaveLength(1);
    // One org-wide row for team leads and above: the agent's list cannot show it.
    expect(await overdueOf(agent.api)).toHaveLength(0);
  });

  it('a rule on conversation_reply_overdue starts, its condition and template reading the event', async () => {
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Slow replies',
      trigger: { type: 'conversation_reply_overdue', conditions: [{ field: 'replyTimeoutMinutes', operator: 'gte', value: 10 }] },
      actions: [{ type: 'send_notification', title: 'Overdue', message: '{{conversation.contactName}} waits', notificationType: 'overdue_alert' }],
    });
    expect(rule.status).toBe(201);
    expect((await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).status).toBe(200);
    const data = (minutes: number, name: string) => ({
      conversationId: randomUUID(),
      contactId: null,
      chatnetAccountId: randomUUID(),
      assigneeId: agent.id,
      contactName: name,
      waitingSince: new Date().toISOString(),
      dueAt: new Date().toISOString(),
      replyTimeoutMinutes: minutes,
    });
    await bus.publish('conversation.reply_overdue', orgId, data(5, 'Short Wait'));
    await bus.publish('conversation.reply_overdue', orgId, data(30, 'Long Wait'));
    const alerts = await eventually(async () => {
      const got = (await owner.get('/api/v1/notifications')).body.data.filter((n: any) => n.type === 'overdue_alert');
      return got.length ? got : undefined;
    });
    expect(alerts.map((n: any) => n.message)).toEqual(['Long Wait waits']);
  });
});
