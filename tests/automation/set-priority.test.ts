import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { automationWithMessaging, AutomationWithMessaging } from './messaging-stack';

// The automation action set_priority (issue #29): a rule sets the event's conversation's priority through messaging's
// SetConversationPriority; the change is announced as conversation.priority_changed, which starts rules with the
// trigger conversation_priority_changed.
describe('automation action set_priority and trigger conversation_priority_changed', () => {
  let f: AutomationWithMessaging;
  let bus: AutomationWithMessaging['bus'];
  let connector: AutomationWithMessaging['connector'];
  let owner: Client;
  let orgId: string;

  beforeAll(async () => {
    f = await automationWithMessaging('priority');
    ({ bus, connector, owner, orgId } = f);
  }, 60_000);
  afterAll(() => f?.stop());

  const newRule = (body: object) => owner.post('/api/v1/automation/rules', body);

  it('is a known action type: priority low…urgent or null (kept as written); 400 naming actions.<i>.priority otherwise', async () => {
    for (const priority of ['urgent', null]) {
      const ok = await newRule({
        name: 'P',
        trigger: { type: 'message_received' },
        actions: [
          { type: 'add_tag', tag: 'x' },
          { type: 'set_priority', priority },
        ],
      });
      expect(ok.status).toBe(201);
      expect((await owner.get(`/api/v1/automation/rules/${ok.body.id}`)).body.actions[1]).toEqual({ type: 'set_priority', priority });
    }
    for (const bad of [{ type: 'set_priority' }, { type: 'set_priority', priority: 'critical' }, { type: 'set_priority', priority: 3 }]) {
      const res = await newRule({ name: 'P', trigger: { type: 'message_received' }, actions: [{ type: 'add_tag', tag: 'x' }, bad] });
      expect([res.status, res.body.error.details[0].field]).toEqual([400, 'actions.1.priority']);
    }
    const unknown = await newRule({ name: 'P', trigger: { type: 'message_received' }, actions: [{ type: 'set_prio' }] });
    expect(unknown.body.error.details[0]).toEqual({ field: 'actions.0.type', message: expect.stringContaining('set_priority') });
  });

  it('a rule with set_priority fires on a message: the conversation gets the priority; a rule on conversation_priority_changed follows', async () => {
    const accountId = connector.account(orgId);
    const setter = await newRule({
      name: 'VIP words are urgent',
      trigger: { type: 'keyword', keywords: ['refund'] },
      actions: [{ type: 'set_priority', priority: 'urgent' }],
    });
    expect((await owner.post(`/api/v1/automation/rules/${setter.body.id}/activate`)).status).toBe(200);
    const follower = await newRule({
      name: 'Tell the team',
      trigger: { type: 'conversation_priority_changed', conditions: [{ field: 'priority', operator: 'equals', value: 'urgent' }] },
      actions: [{ type: 'send_notification', message: 'Now {{conversation.priority}}', notificationType: 'urgent_chat' }],
    });
    expect(follower.status).toBe(201);
    expect((await owner.post(`/api/v1/automation/rules/${follower.body.id}/activate`)).status).toBe(200);

    await bus.inbound(orgId, { accountId, fromUid: 'vip-1', content: 'I want a refund now' });
    const conversation = await eventually(async () => {
      const list = (await owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}&priority=urgent`)).body.data;
      return list.find((c: any) => c.threadId === 'vip-1');
    }, 20_000);
    expect(conversation.priority).toBe('urgent');
    // The row changes before the outbox relay publishes the event: wait for the event too.
    const event = await eventually(async () => bus.of('conversation.priority_changed').find((e) => e.data.conversationId === conversation.id));
    // A rule acts as the system: no user changed it.
    expect(event.data).toEqual(expect.objectContaining({ priority: 'urgent', previousPriority: null, changedBy: null }));

    const note = await eventually(
      async () => (await owner.get('/api/v1/notifications?limit=100')).body.data.find((n: any) => n.type === 'urgent_chat'),
      20_000,
    );
    expect(note.message).toBe('Now urgent');

    // The same priority again (another matching message) changes nothing: no second event, the follower runs once.
    await bus.inbound(orgId, { accountId, fromUid: 'vip-1', content: 'refund please' });
    await eventually(async () => {
      const runs = (await owner.get(`/api/v1/automation/rules/${setter.body.id}/runs?limit=100`)).body.data;
      return runs.filter((r: any) => r.status === 'succeeded').length === 2 || undefined;
    }, 20_000);
    expect(bus.of('conversation.priority_changed').filter((e) => e.data.conversationId === conversation.id)).toHaveLength(1);
    const followerRuns = (await owner.get(`/api/v1/automation/rules/${follower.body.id}/runs?limit=100`)).body.data;
    expect(followerRuns).toHaveLength(1);
  });
});
