import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { startReceiver, verifySignature, type Receiver } from '../webhooks/support';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// conversation.csat_received (issue #29 item 6) leaves messaging through its outbox and reaches the rest of the system:
// a signed webhook to the org's endpoint, and automation rules on the trigger conversation_csat_received.
describe('conversation.csat_received: webhook and automation trigger', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let rx: Receiver;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let convId: string;
  let accountId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-csat-events-'));
  const QUESTION = 'Rate us from 1 to 5';

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
    await bus.inbound(a.orgId, { accountId, fromUid: 'uid-rater', fromName: 'Rater' });
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

  it('a rating → a signed conversation.csat_received webhook and a run of a rule on conversation_csat_received (rating ≤ 2)', async () => {
    expect((await a.owner.get('/api/v1/webhook-settings/event-types')).body.events).toContain('conversation.csat_received');
    const hook = await a.owner.post('/api/v1/webhook-settings', { url: rx.url('/csat'), events: ['conversation.csat_received'] });
    expect(hook.status).toBe(201);
    const rule = await a.owner.post('/api/v1/automation/rules', {
      name: 'Unhappy customers',
      trigger: { type: 'conversation_csat_received', conditions: [{ field: 'csat.rating', operator: 'lte', value: 2 }] },
      actions: [{ type: 'send_notification', title: 'Low rating', message: 'Rated {{csat.rating}}: {{csat.comment}}', notificationType: 'csat_low' }],
    });
    expect(rule.status).toBe(201);
    expect((await a.owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).status).toBe(200);
    expect((await a.owner.put('/api/v1/settings/inbox', { csat: { enabled: true, message: QUESTION } })).status).toBe(200);

    expect((await a.owner.post(`/api/v1/conversations/${convId}/close`, {})).status).toBe(200);
    await eventually(async () => connector.sent.find((s) => s.content === QUESTION));
    await eventually(async () =>
      (await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages.some((m: any) => m.content === QUESTION) ? true : undefined,
    );
    await bus.inbound(a.orgId, { accountId, fromUid: 'uid-rater', content: '1 nobody answered' });

    const got = await eventually(async () => rx.at('/csat')[0]);
    expect(verifySignature(hook.body.secret, got)).toBe(true);
    expect(got.json.type).toBe('conversation.csat_received');
    expect(got.json.data).toEqual({
      conversationId: convId,
      contactId: crm.contacts.get(`${a.orgId}/uid-rater`)!.id,
      chatnetAccountId: accountId,
      assigneeId: null,
      rating: 1,
      comment: 'nobody answered',
      respondedAt: expect.any(String),
    });
    const note = await eventually(async () => (await a.owner.get('/api/v1/notifications')).body.data.find((n: any) => n.type === 'csat_low'));
    expect(note).toEqual(expect.objectContaining({ title: 'Low rating', message: 'Rated 1: nobody answered' }));
    const runs = (await a.owner.get(`/api/v1/automation/rules/${rule.body.id}/runs`)).body;
    expect(runs.data[0]).toEqual(
      expect.objectContaining({ eventType: 'conversation.csat_received', contactId: crm.contacts.get(`${a.orgId}/uid-rater`)!.id }),
    );
  }, 40_000);
});
