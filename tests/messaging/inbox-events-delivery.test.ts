import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { startReceiver, verifySignature, type Receiver } from '../webhooks/support';
import { member } from './inbox-support';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// conversation.assigned, conversation.status_changed and conversation.priority_changed leave messaging through its
// outbox and reach the rest of the system: a signed webhook to the org's endpoint, and automation rules triggered by them.
describe('conversation.assigned, conversation.status_changed and conversation.priority_changed: webhooks and automation triggers', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let rx: Receiver;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let convId: string;
  let accountId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-events-'));

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging', 'webhooks', 'automation'],
      serviceEnv: {
        messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir },
        webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_POLL_MS: '100' },
        automation: { CRM_ADDR: crm.addr, RUN_POLL_MS: '100' },
      },
    });
    bus = await eventBus(stack);
    rx = await startReceiver();
    a = await orgWithKey(stack.url, 'Org A');
    accountId = connector.account(a.orgId);
    await bus.inbound(a.orgId, { accountId, fromUid: 'uid-hook', fromName: 'Hook Contact' });
    convId = (await eventually(async () => (await a.owner.get('/api/v1/conversations')).body.data[0])).id;
  }, 90_000);
  afterAll(async () => {
    await bus?.close();
    await rx?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('all three are offered as webhook event types', async () => {
    const types = await a.owner.get('/api/v1/webhook-settings/event-types');
    expect(types.body.events).toEqual(
      expect.arrayContaining(['conversation.assigned', 'conversation.status_changed', 'conversation.priority_changed']),
    );
  });

  it('PUT priority → a signed conversation.priority_changed webhook (issue #29)', async () => {
    const hook = await a.owner.post('/api/v1/webhook-settings', { url: rx.url('/priority'), events: ['conversation.priority_changed'] });
    expect(hook.status).toBe(201);
    expect((await a.owner.put(`/api/v1/conversations/${convId}/priority`, { priority: 'high' })).status).toBe(200);

    const got = await eventually(async () => rx.at('/priority')[0]);
    expect(verifySignature(hook.body.secret, got)).toBe(true);
    expect(got.json.type).toBe('conversation.priority_changed');
    expect(got.json.data).toEqual({
      conversationId: convId,
      contactId: crm.contacts.get(`${a.orgId}/uid-hook`)!.id,
      chatnetAccountId: accountId,
      assigneeId: null,
      priority: 'high',
      previousPriority: null,
      changedBy: a.user.id,
    });
  });

  it('PUT assignee → a signed conversation.assigned webhook with the assignment', async () => {
    const hook = await a.owner.post('/api/v1/webhook-settings', { url: rx.url('/assigned'), events: ['conversation.assigned'] });
    expect(hook.status).toBe(201);
    const agent = await member(stack.url, a.owner, 'agent');
    expect((await a.owner.put(`/api/v1/conversations/${convId}/assignee`, { userId: agent.id })).status).toBe(200);

    const got = await eventually(async () => rx.at('/assigned')[0]);
    expect(verifySignature(hook.body.secret, got)).toBe(true);
    expect(got.json.type).toBe('conversation.assigned');
    expect(got.json.data).toEqual({
      conversationId: convId,
      contactId: crm.contacts.get(`${a.orgId}/uid-hook`)!.id,
      chatnetAccountId: accountId,
      assigneeId: agent.id,
      teamId: null,
      previousAssigneeId: null,
      assignedBy: a.user.id,
      reason: null,
    });
  });

  it('an automation rule on conversation_status_changed (status equals closed) fires on PUT status, and not on other statuses', async () => {
    const rule = await a.owner.post('/api/v1/automation/rules', {
      name: 'Closed chats',
      trigger: { type: 'conversation_status_changed', conditions: [{ field: 'status', operator: 'equals', value: 'closed' }] },
      actions: [
        {
          type: 'send_notification',
          title: 'Conversation closed',
          message: 'Closed, was {{conversation.previousStatus}}',
          notificationType: 'conversation_closed',
        },
      ],
    });
    expect(rule.status).toBe(201);
    expect((await a.owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).status).toBe(200);
    // A field the event does not have is refused when the rule is written.
    const bad = await a.owner.post('/api/v1/automation/rules', {
      name: 'x',
      trigger: { type: 'conversation_assigned', conditions: [{ field: 'content', operator: 'equals', value: 'x' }] },
    });
    expect([bad.status, bad.body.error.details[0].field]).toEqual([400, 'trigger.conditions.0.field']);

    expect((await a.owner.put(`/api/v1/conversations/${convId}/status`, { status: 'pending' })).status).toBe(200);
    expect((await a.owner.put(`/api/v1/conversations/${convId}/status`, { status: 'closed' })).status).toBe(200);
    const note = await eventually(async () =>
      (await a.owner.get('/api/v1/notifications')).body.data.find((n: any) => n.type === 'conversation_closed'),
    );
    expect(note).toEqual(expect.objectContaining({ title: 'Conversation closed', message: 'Closed, was pending' }));
    const runs = await eventually(async () => {
      const r = await a.owner.get(`/api/v1/automation/rules/${rule.body.id}/runs`);
      return r.body.data.length > 0 && r.body.data.every((x: any) => x.status === 'succeeded') ? r.body : undefined;
    });
    // Only the change to closed started a run.
    expect(runs.pagination.total).toBe(1);
    expect(runs.data[0]).toEqual(
      expect.objectContaining({ eventType: 'conversation.status_changed', contactId: crm.contacts.get(`${a.orgId}/uid-hook`)!.id }),
    );
  });
});
