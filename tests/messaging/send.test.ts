import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, messagingClient, orgWithKey } from './support';

// Every send (UI, public API, automation, campaigns) goes through one pipeline: it reaches the network
// once per idempotency key, respects the account's send governor, and fails clearly when it cannot send.
describe('sending: one pipeline with governor and idempotency', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let grpc: ReturnType<typeof messagingClient>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-send-'));
  // Small budgets so the limits are reachable in a test: ui 3 per minute, public API 2 per day, automation 2 per minute.
  const SEND_LIMITS = 'total=10000/day,100/10s;ui=1000/day,3/60s;public_api=2/day,100/10s;automation=100/day,2/60s';

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging'],
      serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir, SEND_LIMITS } },
    });
    bus = await eventBus(stack);
    grpc = messagingClient(stack);
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
  }, 60_000);
  afterAll(async () => {
    grpc?.close();
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh account (its own governor budget) with one conversation started by a contact. */
  async function thread(org = a, uid = `uid-${Math.random().toString(36).slice(2, 8)}`) {
    const accountId = connector.account(org.orgId);
    await bus.inbound(org.orgId, { accountId, fromUid: uid, fromName: 'Lan Nguyen', content: 'Hi there' });
    const conv = await eventually(async () => (await org.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data[0]);
    return { accountId, conv, uid };
  }
  const sentTo = (accountId: string) => connector.sent.filter((s) => s.accountId === accountId);

  it('POST /conversations/:id/messages sends through the connector: 201 with status sent, reply flags and message.sent', async () => {
    const { accountId, conv, uid } = await thread();
    const res = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Yes, it is in stock', contentType: 'text' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      conversationId: conv.id,
      content: 'Yes, it is in stock',
      contentType: 'text',
      senderName: 'Olive Owner',
      sentAt: expect.any(String),
      status: 'sent',
      attachments: [],
      quote: null,
      reactions: [],
      recalledAt: null,
    });
    expect(sentTo(accountId)).toEqual([
      expect.objectContaining({ orgId: a.orgId, threadId: uid, threadType: 'user', content: 'Yes, it is in stock', contentType: 'text' }),
    ]);

    const detail = await a.owner.get(`/api/v1/conversations/${conv.id}`);
    const [reply, question] = detail.body.messages;
    expect(reply).toEqual(
      expect.objectContaining({
        id: res.body.id,
        isFromChatnet: false,
        isRead: true,
        senderName: 'Olive Owner',
        sentByUserId: a.user.id,
        source: 'ui',
        status: 'sent',
      }),
    );
    expect(question.isReplied).toBe(true);
    const listed = (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data[0];
    expect(listed).toEqual(
      expect.objectContaining({
        isReplied: true,
        messageCount: 2,
        lastMessage: expect.objectContaining({ id: res.body.id, senderName: 'Olive Owner' }),
      }),
    );
    expect((await a.owner.get(`/api/v1/conversations?unreplied=true&chatnetAccountId=${accountId}`)).body.data).toEqual([]);

    const event = await eventually(async () => bus.of('message.sent').find((e) => e.data.messageId === res.body.id));
    expect(event.orgId).toBe(a.orgId);
    expect(event.data).toEqual({
      messageId: res.body.id,
      conversationId: conv.id,
      contactId: conv.contactId,
      chatnetAccountId: accountId,
      assigneeId: null,
      threadId: uid,
      threadType: 'user',
      senderUid: '',
      senderName: 'Olive Owner',
      content: 'Yes, it is in stock',
      contentType: 'text',
      sentAt: res.body.sentAt,
      sentByUserId: a.user.id,
      source: 'ui',
      // It replies to no message in particular.
      quote: null,
    });
  });

  it('a send with a missing or bad field is 400 naming it; nothing reaches the network', async () => {
    const { accountId, conv } = await thread();
    const cases: Array<[unknown, string]> = [
      [{}, 'content'],
      [{ content: '   ' }, 'content'],
      [{ content: 42 }, 'content'],
      [{ content: 'x'.repeat(20_001) }, 'content'],
      [{ content: 'hi', attachments: 'file' }, 'attachments'],
      [{ content: 'hi', attachments: ['not-an-id'] }, 'attachments'],
      [{ content: 'hi', attachments: ['00000000-0000-4000-8000-000000000000'] }, 'attachments'],
    ];
    for (const [bodyIn, field] of cases) {
      const res = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, bodyIn);
      expect([field, res.status]).toEqual([field, 400]);
      expect(res.body.error.details[0].field).toBe(field);
    }
    const longKey = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'hi' }, { 'idempotency-key': 'k'.repeat(256) });
    expect(longKey.status).toBe(400);
    expect(longKey.body.error.details[0].field).toBe('Idempotency-Key');
    expect(sentTo(accountId)).toEqual([]);
  });

  it('sending on an account that is not connected is 422 with a clear message, and costs no send budget', async () => {
    const { accountId, conv } = await thread();
    connector.setConnected(accountId, false);
    for (let i = 0; i < 5; i++) {
      const res = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'anyone?' });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('account_not_connected');
      expect(res.body.error.message).toMatch(/not connected/);
    }
    connector.setConnected(accountId, true);
    // The burst cap is 3 per minute for the UI: the five failures above took none of it.
    for (let i = 0; i < 3; i++) expect((await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: `ok ${i}` })).status).toBe(201);
    expect(sentTo(accountId)).toHaveLength(3);
  });

  it('the same Idempotency-Key never sends twice: the repeat answers 201 with the first message', async () => {
    const { accountId, conv } = await thread();
    const headers = { 'idempotency-key': 'order-42-reply' };
    const first = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Your order shipped' }, headers);
    const again = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Your order shipped' }, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(sentTo(accountId)).toHaveLength(1);
    expect((await a.owner.get(`/api/v1/conversations/${conv.id}`)).body.pagination.total).toBe(2);

    const reused = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Something else' }, headers);
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');

    // clientMessageId in the body works the same way.
    const viaBody = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Thanks!', clientMessageId: 'cm-1' });
    const viaBodyAgain = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Thanks!', clientMessageId: 'cm-1' });
    expect(viaBodyAgain.body.id).toBe(viaBody.body.id);
    expect(sentTo(accountId)).toHaveLength(2);
    // Keys belong to one organization: org B's identical key is its own.
    const other = await thread(b);
    expect((await b.owner.post(`/api/v1/conversations/${other.conv.id}/messages`, { content: 'Your order shipped' }, headers)).status).toBe(201);
    expect(sentTo(other.accountId)).toHaveLength(1);
  });

  it('two concurrent requests with one key send once', async () => {
    const { accountId, conv } = await thread();
    const headers = { 'idempotency-key': 'race-1' };
    const results = await Promise.all([0, 1, 2].map(() => a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'once' }, headers)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(sentTo(accountId)).toHaveLength(1);
    const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(ids.size).toBe(1);
  });

  it('a key whose send failed can be retried and then sends', async () => {
    const { accountId, conv } = await thread();
    connector.setConnected(accountId, false);
    const headers = { 'idempotency-key': 'retry-after-failure' };
    expect((await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'later' }, headers)).status).toBe(422);
    connector.setConnected(accountId, true);
    const ok = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'later' }, headers);
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
    expect(sentTo(accountId)).toHaveLength(1);
  });

  it('the burst cap is per account: past it, 429 with Retry-After; another account is unaffected', async () => {
    const one = await thread();
    const two = await thread();
    for (let i = 0; i < 3; i++)
      expect((await a.owner.post(`/api/v1/conversations/${one.conv.id}/messages`, { content: `burst ${i}` })).status).toBe(201);
    const limited = await a.owner.post(`/api/v1/conversations/${one.conv.id}/messages`, { content: 'one too many' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('send_limit_reached');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(sentTo(one.accountId)).toHaveLength(3);
    expect((await a.owner.post(`/api/v1/conversations/${two.conv.id}/messages`, { content: 'fine' })).status).toBe(201);
    // A replay of an earlier send is not a new send: it answers even while the account is limited.
    const key = { 'idempotency-key': 'replay-while-limited' };
    expect((await a.owner.post(`/api/v1/conversations/${two.conv.id}/messages`, { content: 'k' }, key)).status).toBe(201);
    for (let i = 0; i < 2; i++) await a.owner.post(`/api/v1/conversations/${two.conv.id}/messages`, { content: `fill ${i}` });
    expect((await a.owner.post(`/api/v1/conversations/${two.conv.id}/messages`, { content: 'k' }, key)).status).toBe(201);
  });

  it('operation types have separate budgets: automation (SendMessage over gRPC) has its own cap', async () => {
    const { accountId, conv } = await thread();
    const ctx = { orgId: a.orgId };
    const first = await grpc.SendMessage(
      { conversationId: conv.id, content: 'Welcome!', contentType: 'text', clientMessageId: 'auto-1', source: 'automation' },
      ctx,
    );
    expect(first).toEqual(
      expect.objectContaining({ conversationId: conv.id, content: 'Welcome!', senderName: 'Automation', status: 'sent', replayed: false }),
    );
    const replay = await grpc.SendMessage(
      { conversationId: conv.id, content: 'Welcome!', contentType: 'text', clientMessageId: 'auto-1', source: 'automation' },
      ctx,
    );
    expect(replay).toEqual(expect.objectContaining({ id: first.id, replayed: true }));
    await grpc.SendMessage({ conversationId: conv.id, content: 'Second', contentType: 'text', clientMessageId: 'auto-2', source: 'automation' }, ctx);
    const err = await grpc
      .SendMessage({ conversationId: conv.id, content: 'Third', contentType: 'text', clientMessageId: 'auto-3', source: 'automation' }, ctx)
      .catch((e) => e);
    expect(err.code).toBe(8); // RESOURCE_EXHAUSTED → 429 at the gateway
    expect(Number(err.metadata.get('x-retry-after')[0])).toBeGreaterThan(0);
    // The UI budget of the same account is untouched.
    expect((await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'agent reply' })).status).toBe(201);
    expect(sentTo(accountId).map((s) => s.content)).toEqual(['Welcome!', 'Second', 'agent reply']);
    const message = (await a.owner.get(`/api/v1/conversations/${conv.id}`)).body.messages.find((m: any) => m.id === first.id);
    expect(message).toEqual(expect.objectContaining({ source: 'automation', sentByUserId: null, senderName: 'Automation' }));
    const sent = await eventually(async () => bus.of('message.sent').find((e) => e.data.messageId === first.id));
    expect(sent.data).toEqual(expect.objectContaining({ source: 'automation', sentByUserId: null }));
  });

  it('POST /api/public/messages/send: 200 {success, messageId, status}; the conversation is created for a new thread', async () => {
    const accountId = connector.account(a.orgId);
    const res = await a.pub.post('/api/public/messages/send', {
      chatnetAccountId: accountId,
      threadId: 'uid-new-lead',
      content: 'Hello from our shop',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, messageId: expect.any(String), status: 'sent' });
    expect(sentTo(accountId)).toEqual([expect.objectContaining({ threadId: 'uid-new-lead', threadType: 'user', content: 'Hello from our shop' })]);
    const conv = await eventually(async () => (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data[0]);
    expect(conv).toEqual(
      expect.objectContaining({ threadId: 'uid-new-lead', type: 'user', messageCount: 1, unreadCount: 0, contactId: expect.any(String) }),
    );
    const created = await eventually(async () => bus.of('conversation.created').find((e) => e.data.id === conv.id));
    expect(created.data.threadId).toBe('uid-new-lead');
    const msgs = await a.pub.get(`/api/public/conversations/${conv.id}/messages`);
    expect(msgs.body.messages).toEqual([expect.objectContaining({ senderType: 'system', senderName: 'API', content: 'Hello from our shop' })]);

    const group = await a.pub.post('/api/public/messages/send', {
      chatnetAccountId: accountId,
      threadId: 'grp-7',
      threadType: 'group',
      content: 'Hi group',
    });
    expect(group.status).toBe(200);
    expect(sentTo(accountId)[1]).toEqual(expect.objectContaining({ threadId: 'grp-7', threadType: 'group' }));
    // Writing first to a group opens its conversation without a contact, named until the group's name arrives.
    const groupConv = (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}&type=group`)).body.data[0];
    expect(groupConv).toEqual(expect.objectContaining({ threadId: 'grp-7', type: 'group', contactId: null, contactName: 'Group grp-7' }));
    expect(crm.upserts.filter((u) => u.chatnetUid === 'grp-7')).toEqual([]);
  });

  it('public send: 400 for a missing field, 404 for an unknown account, 422 when not connected', async () => {
    const accountId = connector.account(a.orgId);
    const full = { chatnetAccountId: accountId, threadId: 'uid-x', content: 'hi' };
    for (const field of ['chatnetAccountId', 'threadId', 'content'] as const) {
      const { [field]: _gone, ...rest } = full;
      const res = await a.pub.post('/api/public/messages/send', rest);
      expect([field, res.status]).toEqual([field, 400]);
      expect(res.body.error.details[0].field).toBe(field);
    }
    expect((await a.pub.post('/api/public/messages/send', { ...full, threadType: 'channel' })).status).toBe(400);
    const unknown = await a.pub.post('/api/public/messages/send', { ...full, chatnetAccountId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect((await a.pub.post('/api/public/messages/send', { ...full, chatnetAccountId: 'zalo-1' })).status).toBe(404);
    // Another org's account does not exist for this key.
    expect((await b.pub.post('/api/public/messages/send', full)).status).toBe(404);
    connector.setConnected(accountId, false);
    const down = await a.pub.post('/api/public/messages/send', full);
    expect(down.status).toBe(422);
    expect(down.body.error.message).toMatch(/not connected/);
    expect(sentTo(accountId)).toEqual([]);
  });

  it('public send honours Idempotency-Key and the public API daily cap (429 with Retry-After)', async () => {
    const accountId = connector.account(a.orgId);
    const msg = { chatnetAccountId: accountId, threadId: 'uid-daily', content: 'Promo' };
    const key = { 'idempotency-key': 'promo-1' };
    expect((await a.pub.post('/api/public/messages/send', msg, key)).status).toBe(200);
    expect((await a.pub.post('/api/public/messages/send', msg, key)).status).toBe(200);
    expect(sentTo(accountId)).toHaveLength(1);
    expect((await a.pub.post('/api/public/messages/send', { ...msg, content: 'Promo 2' })).status).toBe(200);
    const limited = await a.pub.post('/api/public/messages/send', { ...msg, content: 'Promo 3' });
    expect(limited.status).toBe(429);
    // The daily window is rolling 24 h: the first slot frees up in about a day.
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(86_000);
    expect(sentTo(accountId)).toHaveLength(2);
  });

  it('the connector being unreachable is 503 and sends nothing; the key stays usable', async () => {
    const { accountId, conv } = await thread();
    await connector.down();
    try {
      const res = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'hello?' }, { 'idempotency-key': 'during-outage' });
      expect(res.status).toBe(503);
    } finally {
      await connector.up();
    }
    const ok = await eventually(
      async () => {
        const r = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'hello?' }, { 'idempotency-key': 'during-outage' });
        return r.status === 201 && r;
      },
      15_000,
      500,
    );
    expect(ok.body.content).toBe('hello?');
    expect(sentTo(accountId)).toHaveLength(1);
  });
});
