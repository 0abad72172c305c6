import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// The echo of a CRM send (the account's own message, chatnet.inbound fromSelf) may reach messaging before the send
// is answered: it is stored first as typed on the phone, and the send then takes that row as its own, so the
// conversation shows one message, sent by the user who sent it.
describe('phone-typed messages: the echo of a CRM send that arrives before the send returned', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-echo-'));

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging'],
      serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir } },
    });
    bus = await eventBus(stack);
    a = await orgWithKey(stack.url, 'Org A');
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it("one message, the sender's, with its idempotency key", async () => {
    const accountId = connector.account(a.orgId);
    await bus.inbound(a.orgId, { accountId, fromUid: 'uid-echo', content: 'Hi' });
    const conv = await eventually(async () => (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data[0]);
    const messagesOf = async () => (await a.owner.get(`/api/v1/conversations/${conv.id}?limit=100`)).body.messages as any[];
    connector.hooks.beforeReply = async (s) => {
      await bus.inbound(a.orgId, {
        accountId,
        fromUid: '9000000003',
        fromName: 'Shop',
        threadId: 'uid-echo',
        chatnetMessageId: s.chatnetMessageId,
        content: s.content,
        fromSelf: true,
      });
      await eventually(async () => (await messagesOf()).find((m) => m.content === s.content && m.source === 'phone'));
    };
    try {
      const res = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Echo first' }, { 'idempotency-key': 'echo-race-1' });
      expect(res.status).toBe(201);
      const copies = (await messagesOf()).filter((m) => m.content === 'Echo first');
      expect(copies).toEqual([expect.objectContaining({ id: res.body.id, source: 'ui', sentByUserId: a.user.id, isFromChatnet: false })]);
      // The replay of the key answers the same message.
      const again = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Echo first' }, { 'idempotency-key': 'echo-race-1' });
      expect(again.body.id).toBe(res.body.id);
      // Counted once: the contact's message and this one.
      const listed = (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data[0];
      expect(listed).toEqual(expect.objectContaining({ messageCount: 2, lastMessage: expect.objectContaining({ content: 'Echo first' }) }));
    } finally {
      connector.hooks.beforeReply = undefined;
    }
  });
});
