import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { io as connectSocket, Socket } from 'socket.io-client';
import { createServiceClient, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { eventually, testAuth } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { orgWithKey } from './support';

// The whole chat flow through the gateway with the real connector (sandbox network) and crm:
// create account → QR over socket.io → scan → connected → inbound → visible in both APIs → reply via both APIs.
describe('chat end to end: sandbox network → connector → messaging → gateway', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let socket: Socket;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-e2e-'));
  const socketEvents: Array<{ event: string; payload: any }> = [];

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      serviceEnv: { messaging: { ATTACHMENTS_DIR: dir }, 'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' } },
    });
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    socket = await new Promise<Socket>((resolve, reject) => {
      const s = connectSocket(stack.url, { auth: { token: a.token }, transports: ['websocket'], reconnection: false });
      s.once('connect', () => resolve(s));
      s.once('connect_error', reject);
    });
    for (const event of ['qr', 'account_status', 'message']) socket.on(event, (payload) => socketEvents.push({ event, payload }));
  }, 90_000);
  afterAll(async () => {
    socket?.disconnect();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let accountId: string;
  let convId: string;

  it('an account is created, its QR arrives over socket.io, and the sandbox scan connects it', async () => {
    const created = await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' });
    expect(created.status).toBe(201);
    accountId = created.body.id;
    const joined = await new Promise<{ ok: boolean }>((resolve) => socket.emit('join', `account:${accountId}`, resolve));
    expect(joined.ok).toBe(true);
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    const qr = await eventually(async () => socketEvents.find((e) => e.event === 'qr' && e.payload.accountId === accountId));
    expect(qr.payload.qr).toMatch(/^data:image\/png;base64,/);
    const scan = await a.owner.post(`/sandbox/accounts/${accountId}/scan`, {});
    expect(scan.status).toBe(200);
    expect(scan.body.status).toBe('connected');
    await eventually(async () =>
      socketEvents.find((e) => e.event === 'account_status' && e.payload.accountId === accountId && e.payload.status === 'connected'),
    );
  });

  it('an inbound message becomes a contact in crm, a conversation and a message in both APIs, and a socket event', async () => {
    const res = await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, {
      fromUid: 'uid-e2e',
      fromName: 'Mai Tran',
      content: 'Do you ship to Hanoi?',
    });
    expect(res.status).toBe(200);
    const pushed = await eventually(async () => socketEvents.find((e) => e.event === 'message' && e.payload.type === 'message.received'));
    expect(pushed.payload).toEqual(
      expect.objectContaining({ chatnetAccountId: accountId, senderName: 'Mai Tran', content: 'Do you ship to Hanoi?' }),
    );

    const conv = (await a.owner.get('/api/v1/conversations')).body.data[0];
    convId = conv.id;
    expect(conv).toEqual(
      expect.objectContaining({
        chatnetAccountId: accountId,
        threadId: 'uid-e2e',
        contactName: 'Mai Tran',
        unreadCount: 1,
        contactId: expect.any(String),
      }),
    );
    expect(pushed.payload.conversationId).toBe(convId);
    const contact = await a.owner.get(`/api/v1/contacts/${conv.contactId}`);
    expect(contact.status).toBe(200);
    expect(contact.body.name).toBe('Mai Tran');

    const pub = await a.pub.get('/api/public/conversations');
    expect(pub.body.conversations).toEqual([
      expect.objectContaining({
        id: convId,
        threadType: 'user',
        externalThreadId: 'uid-e2e',
        contact: expect.objectContaining({ fullName: 'Mai Tran' }),
      }),
    ]);
    const msgs = await a.pub.get(`/api/public/conversations/${convId}/messages`);
    expect(msgs.body.messages).toEqual([
      expect.objectContaining({ senderType: 'contact', senderName: 'Mai Tran', content: 'Do you ship to Hanoi?' }),
    ]);
    expect((await b.owner.get('/api/v1/conversations')).body.data).toEqual([]);
  });

  it('the network delivering the same message id twice stores it once', async () => {
    const body = { fromUid: 'uid-e2e', fromName: 'Mai Tran', content: 'repeat', chatnetMessageId: 'net-e2e-dup' };
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, body)).status).toBe(200);
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, body)).status).toBe(200);
    await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { ...body, chatnetMessageId: 'net-e2e-after', content: 'after' });
    await eventually(async () => (await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages.some((m: any) => m.content === 'after'));
    const msgs = (await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages;
    expect(msgs.filter((m: any) => m.content === 'repeat')).toHaveLength(1);
  });

  it('replies go out through both APIs and reach the network through the live session', async () => {
    const internal = await a.owner.post(`/api/v1/conversations/${convId}/messages`, { content: 'Yes, in 2 days' }, { 'idempotency-key': 'e2e-1' });
    expect(internal.status).toBe(201);
    expect(internal.body.status).toBe('sent');
    const pub = await a.pub.post('/api/public/messages/send', { chatnetAccountId: accountId, threadId: 'uid-e2e', content: 'Order #7 confirmed' });
    expect(pub.status).toBe(200);
    expect(pub.body).toEqual({ success: true, messageId: expect.any(String), status: 'sent' });
    // A retried request with the same key does not send again.
    expect(
      (await a.owner.post(`/api/v1/conversations/${convId}/messages`, { content: 'Yes, in 2 days' }, { 'idempotency-key': 'e2e-1' })).status,
    ).toBe(201);

    const connector = createServiceClient(
      serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorService'),
      stack.addr('chatnet-connector'),
      testAuth('gateway'),
    );
    try {
      const sent = await connector.SandboxSentMessages({ id: accountId }, { orgId: a.orgId, userId: a.user.id, role: 'owner' });
      expect(sent.data.map((m: any) => [m.threadId, m.content]).sort()).toEqual([
        ['uid-e2e', 'Order #7 confirmed'],
        ['uid-e2e', 'Yes, in 2 days'],
      ]);
    } finally {
      connector.close();
    }
    const detail = (await a.owner.get(`/api/v1/conversations/${convId}`)).body;
    expect(detail.messages.slice(0, 2).map((m: any) => [m.content, m.isFromChatnet])).toEqual([
      ['Order #7 confirmed', false],
      ['Yes, in 2 days', false],
    ]);
    await eventually(async () => socketEvents.filter((e) => e.event === 'message' && e.payload.type === 'message.sent').length === 2);
  });

  it('the customer opens the chat: the network read receipt shows both replies as seen, and a socket event says so', async () => {
    const replies = (await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages.filter((m: any) => !m.isFromChatnet);
    expect(replies.map((m: any) => [m.status, m.seenAt])).toEqual([
      ['sent', null],
      ['sent', null],
    ]);
    const res = await a.owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: 'uid-e2e' });
    expect(res.status).toBe(200);
    expect(res.body.chatnetMessageIds).toHaveLength(2);
    const pushed = await eventually(async () => socketEvents.find((e) => e.event === 'message' && e.payload.type === 'message.seen'));
    expect(pushed.payload).toEqual(expect.objectContaining({ conversationId: convId, chatnetAccountId: accountId, seenAt: res.body.seenAt }));
    expect([...pushed.payload.messageIds].sort()).toEqual(replies.map((m: any) => m.id).sort());
    const after = (await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages.filter((m: any) => !m.isFromChatnet);
    expect(after.map((m: any) => [m.status, m.seenAt])).toEqual([
      ['seen', res.body.seenAt],
      ['seen', res.body.seenAt],
    ]);
  });

  it('with the connection dropped, sending is 422 through both APIs; an unknown account is 404', async () => {
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/drop`, { expireSession: true })).status).toBe(200);
    await eventually(async () => (await a.owner.get(`/api/v1/chatnet-accounts/${accountId}/status`)).body.liveStatus.state !== 'connected');
    const internal = await a.owner.post(`/api/v1/conversations/${convId}/messages`, { content: 'still there?' });
    expect(internal.status).toBe(422);
    const pub = await a.pub.post('/api/public/messages/send', { chatnetAccountId: accountId, threadId: 'uid-e2e', content: 'still there?' });
    expect(pub.status).toBe(422);
    expect((await b.pub.post('/api/public/messages/send', { chatnetAccountId: accountId, threadId: 'uid-e2e', content: 'x' })).status).toBe(404);
  });
});
