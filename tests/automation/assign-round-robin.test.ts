import { eventually } from '@crm/testing';
import { member } from '../messaging/inbox-support';
import type { Client } from '../support/http';
import type { Stack } from '../support/stack';
import { automationWithMessaging, AutomationWithMessaging } from './messaging-stack';

// The automation action assign_round_robin: a rule hands the event's conversation to the next person of its
// account's rotation (messaging's AssignRoundRobin), whatever the account's mode; one already assigned stays so.
describe('automation action assign_round_robin', () => {
  let f: AutomationWithMessaging;
  let stack: Stack;
  let bus: AutomationWithMessaging['bus'];
  let connector: AutomationWithMessaging['connector'];
  let owner: Client;
  let orgId: string;

  beforeAll(async () => {
    f = await automationWithMessaging('rr');
    ({ stack, bus, connector, owner, orgId } = f);
  }, 60_000);
  afterAll(() => f?.stop());

  it('is a known action type: accepted without settings, listed in the 400 for an unknown type', async () => {
    const ok = await owner.post('/api/v1/automation/rules', {
      name: 'RR',
      trigger: { type: 'conversation_created' },
      actions: [{ type: 'assign_round_robin' }],
    });
    expect(ok.status).toBe(201);
    expect((await owner.get(`/api/v1/automation/rules/${ok.body.id}`)).body.actions).toEqual([
      expect.objectContaining({ type: 'assign_round_robin' }),
    ]);
    const bad = await owner.post('/api/v1/automation/rules', {
      name: 'RR',
      trigger: { type: 'conversation_created' },
      actions: [{ type: 'assign_robin' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toEqual({ field: 'actions.0.type', message: expect.stringContaining('assign_round_robin') });
  });

  it('assigns each conversation by its account rotation (a manual account too); an assigned one keeps its assignee', async () => {
    const u1 = await member(stack.url, owner, 'agent', 'first');
    const u2 = await member(stack.url, owner, 'agent', 'second');
    const accountId = connector.account(orgId);
    // Manual: nothing is assigned on arrival, only by the rule.
    expect((await owner.put(`/api/v1/chatnet-accounts/${accountId}/assignment`, { mode: 'manual', userIds: [u1.id, u2.id] })).status).toBe(200);
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Hand out chats',
      trigger: { type: 'message_received' },
      actions: [{ type: 'assign_round_robin' }],
    });
    expect((await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).status).toBe(200);

    const completed = (n: number) =>
      eventually(async () => {
        const runs = (await owner.get(`/api/v1/automation/rules/${rule.body.id}/runs?limit=100`)).body.data;
        return runs.filter((r: any) => r.status === 'succeeded').length >= n ? runs : undefined;
      }, 20_000);
    const assigneeOf = async (threadId: string) => {
      const list = (await owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}&limit=100`)).body.data;
      return list.find((c: any) => c.threadId === threadId)?.assigneeId ?? null;
    };

    await bus.inbound(orgId, { accountId, fromUid: 'rr-x', content: 'hello' });
    await completed(1);
    expect(await assigneeOf('rr-x')).toBe(u1.id);
    // Another message in the same (assigned) conversation: it stays with u1 and the turn is not used up.
    await bus.inbound(orgId, { accountId, fromUid: 'rr-x', content: 'still there?' });
    await completed(2);
    expect(await assigneeOf('rr-x')).toBe(u1.id);
    await bus.inbound(orgId, { accountId, fromUid: 'rr-y', content: 'hi' });
    await completed(3);
    expect(await assigneeOf('rr-y')).toBe(u2.id);
    // The assignment is in the row before the outbox relay publishes its event: wait for both events.
    const events = await eventually(async () => {
      const assigned = bus.of('conversation.assigned').filter((e) => e.orgId === orgId);
      return assigned.length >= 2 ? assigned : undefined;
    });
    expect(events.map((e) => e.data.assigneeId)).toEqual([u1.id, u2.id]);
    expect(events.every((e) => e.data.assignedBy === null)).toBe(true);
  });
});
