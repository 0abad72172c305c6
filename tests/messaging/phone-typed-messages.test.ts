import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { addUser, captureEvents } from '../chatnet-connector/support';
import { client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { orgWithKey } from './support';

// What the agent types on the account's phone (the network's `selfListen`) shows in the conversation as outbound,
// written by no CRM user, once: the echo of a message the CRM sent is not stored again. Through the gateway with the
// real connector on the sandbox network (POST /sandbox/accounts/:id/self).
describe("phone-typed messages: the account's own messages → outbound in the conversation", () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let bus: Awaited<ReturnType<typeof captureEvents>>;
  let accountId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-self-'));

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      serviceEnv: { messaging: { ATTACHMENTS_DIR: dir }, 'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' } },
    });
    bus = await captureEvents(stack.env.EVENTS_EXCHANGE, 'message.#');
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    accountId = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop phone' })).body.id;
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    await eventually(
      async () =>
        (await a.owner.post(`/sandbox/accounts/${accountId}/scan`, { chatnetUid: '9000000002', displayName: 'Hoa Mai shop' })).status === 200 ||
        undefined,
    );
  }, 90_000);
  afterAll(async () => {
    await bus?.stop();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const convOf = async (threadId: string) =>
    ((await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data as any[]).find((c) => c.threadId === threadId);
  const messagesOf = async (convId: string) => (await a.owner.get(`/api/v1/conversations/${convId}?limit=100`)).body.messages as any[];

  it('a message typed on the phone in an existing conversation appears once as outbound, sent by no CRM user; no message.received', async () => {
    expect(
      (await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-self-1', fromName: 'Lan', content: 'Còn hàng không?' })).status,
    ).toBe(200);
    const conv = await eventually(() => convOf('uid-self-1'));
    const self = await a.owner.post(`/sandbox/accounts/${accountId}/self`, { threadId: 'uid-self-1', content: 'Dạ còn ạ' });
    expect(self.status).toBe(200);
    expect(self.body).toEqual(expect.objectContaining({ accountId, threadId: 'uid-self-1', chatnetMessageId: expect.any(String) }));
    // The network handing the same message over again (reconnect, catch-up) stores nothing more.
    expect(
      (
        await a.owner.post(`/sandbox/accounts/${accountId}/self`, {
          threadId: 'uid-self-1',
          content: 'Dạ còn ạ',
          chatnetMessageId: self.body.chatnetMessageId,
        })
      ).status,
    ).toBe(200);

    const sent = await eventually(async () => bus.events.find((e) => e.type === 'message.sent' && e.data.conversationId === conv.id));
    expect(sent.data).toEqual(
      expect.objectContaining({ source: 'phone', sentByUserId: null, senderName: 'Shop phone', content: 'Dạ còn ạ', chatnetAccountId: accountId }),
    );
    // The marker: one more message typed on the phone in the same thread. Messaging takes a thread's messages in
    // order, so once it is stored the copy handed over before it has been dealt with too.
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/self`, { threadId: 'uid-self-1', content: 'Em gửi ảnh nhé' })).status).toBe(200);
    await eventually(async () => (await messagesOf(conv.id)).some((m) => m.content === 'Em gửi ảnh nhé') || undefined);
    const msgs = await messagesOf(conv.id);
    const mine = msgs.filter((m) => m.content === 'Dạ còn ạ');
    expect(mine).toEqual([expect.objectContaining({ isFromChatnet: false, source: 'phone', senderName: 'Shop phone', isRead: true })]);
    expect(mine[0].sentByUserId ?? null).toBeNull();
    // It answers the contact: the conversation is replied, its last message is the phone's (the marker, also typed
    // on the phone), and the contact's message is still the only unread one.
    const after = await convOf('uid-self-1');
    expect(after).toEqual(expect.objectContaining({ lastMessage: expect.objectContaining({ content: 'Em gửi ảnh nhé' }), unreadCount: 1 }));
    const marker = await eventually(async () =>
      bus.events.find((e) => e.type === 'message.sent' && e.data.conversationId === conv.id && e.data.content === 'Em gửi ảnh nhé'),
    );
    expect(marker).toBeDefined();
    expect(bus.events.filter((e) => e.type === 'message.received' && e.data.conversationId === conv.id)).toHaveLength(1);
    expect(bus.events.filter((e) => e.type === 'message.sent' && e.data.conversationId === conv.id).map((e) => e.data.content)).toEqual([
      'Dạ còn ạ',
      'Em gửi ảnh nhé',
    ]);

    // The public API calls its writer a user of the org.
    const pub = await a.pub.get(`/api/public/conversations/${conv.id}/messages`);
    expect(pub.body.messages.find((m: any) => m.content === 'Dạ còn ạ')).toEqual(
      expect.objectContaining({ senderType: 'user', senderName: 'Shop phone' }),
    );
  });

  it('a phone message to a thread with no conversation yet opens one, named after the contact, not the account', async () => {
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/self`, { threadId: 'uid-self-new', content: 'Chào chị' })).status).toBe(200);
    const conv = await eventually(() => convOf('uid-self-new'));
    expect(conv.contactName).not.toBe('Shop phone');
    expect(await messagesOf(conv.id)).toEqual([expect.objectContaining({ content: 'Chào chị', isFromChatnet: false, source: 'phone' })]);
  });

  it("the echo of a message the CRM sent (its network id comes back as the account's own) is not stored twice", async () => {
    const conv = await convOf('uid-self-1');
    const reply = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Giao trong 2 ngày' });
    expect(reply.status).toBe(201);
    const networkId = (await a.owner.get(`/sandbox/accounts/${accountId}/sent`)).body.data.find(
      (m: any) => m.content === 'Giao trong 2 ngày',
    ).chatnetMessageId;
    expect(
      (
        await a.owner.post(`/sandbox/accounts/${accountId}/self`, {
          threadId: 'uid-self-1',
          content: 'Giao trong 2 ngày',
          chatnetMessageId: networkId,
        })
      ).status,
    ).toBe(200);
    // A later phone message on the same thread shows the echo was handled before it.
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/self`, { threadId: 'uid-self-1', content: 'after the echo' })).status).toBe(200);
    await eventually(async () => (await messagesOf(conv.id)).some((m) => m.content === 'after the echo') || undefined);
    const copies = (await messagesOf(conv.id)).filter((m) => m.content === 'Giao trong 2 ngày');
    expect(copies).toEqual([expect.objectContaining({ id: reply.body.id, source: 'ui', sentByUserId: a.user.id })]);
  });

  it("400 naming the field; 404 for another org's account; 401 without a token; 403 without sandbox control", async () => {
    const bad = async (payload: object, field: string) => {
      const res = await a.owner.post(`/sandbox/accounts/${accountId}/self`, payload);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    };
    await bad({ content: 'x' }, 'threadId');
    await bad({ threadId: 'uid-self-1' }, 'content');
    await bad({ threadId: 'uid-self-1', content: '   ' }, 'content');
    await bad({ threadId: 'uid-self-1', content: 'x', threadType: 'channel' }, 'threadType');
    await bad({ threadId: 'uid-self-1', content: 'x'.repeat(20_001) }, 'content');
    await bad({ threadId: 'u'.repeat(65), content: 'x' }, 'threadId');
    expect((await b.owner.post(`/sandbox/accounts/${accountId}/self`, { threadId: 'uid-self-1', content: 'x' })).status).toBe(404);
    expect((await a.owner.post('/sandbox/accounts/00000000-0000-4000-8000-000000000000/self', { threadId: 'uid-self-1', content: 'x' })).status).toBe(
      404,
    );
    expect((await client(stack.url).post(`/sandbox/accounts/${accountId}/self`, { threadId: 'uid-self-1', content: 'x' })).status).toBe(401);
    const agent = await addUser(client(stack.url), a.owner, 'agent');
    expect((await agent.client.post(`/sandbox/accounts/${accountId}/self`, { threadId: 'uid-self-1', content: 'x' })).status).toBe(403);
  });
});
