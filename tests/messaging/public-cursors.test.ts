import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { client } from '../support/http';
import { cursorBody, forgedCursor, pageThrough } from '../support/cursor-paging';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

// Issue #15: public conversations and messages page by opaque cursor and sync with updatedSince; a public send
// answers with the stored message's id and status, which GET /api/public/messages/:id reads back.
describe('public API: conversation and message cursors, send → messageId → GET', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let accountA: string;
  /** Org A's conversations in the order they were started (each settled before the next). */
  const convs: string[] = [];

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({ services: ['messaging'], serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr } } });
    bus = await eventBus(stack);
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    accountA = connector.account(a.orgId);
    for (let i = 0; i < 5; i++) convs.push(await say(`uid-cur-${i}`, `hello ${i}`));
    const accountB = connector.account(b.orgId);
    await bus.inbound(b.orgId, { accountId: accountB, fromUid: 'uid-b', content: 'from b' });
    await eventually(async () => (await b.pub.get('/api/public/conversations')).body.conversations.length === 1);
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
  });

  /** An inbound message on org A's thread; resolves with the conversation once the message is stored. */
  async function say(uid: string, content: string): Promise<string> {
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: uid, content });
    return eventually(async () => {
      const conv = (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountA}&limit=100`)).body.data.find((c: any) => c.threadId === uid);
      return conv?.lastMessage?.content === content ? (conv.id as string) : undefined;
    });
  }

  it('GET /api/public/conversations pages most recent first with no overlap or gap', async () => {
    const all = await a.pub.get('/api/public/conversations?limit=100');
    expect(all.body.nextCursor).toBeNull();
    expect(ids(all.body.conversations)).toEqual([...convs].reverse());
    const pages = await pageThrough(a.pub, '/api/public/conversations?limit=2', 'conversations');
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual([...convs].reverse());
  });

  it('updatedSince syncs changes oldest first; a conversation with a new message while paging comes again at the end', async () => {
    const first = (await a.pub.get('/api/public/conversations?limit=100')).body.conversations.find((c: any) => c.id === convs[0]);
    const since = first.updatedAt;
    const pages = await pageThrough(
      a.pub,
      `/api/public/conversations?updatedSince=${encodeURIComponent(since)}&limit=2`,
      'conversations',
      async (i) => {
        if (i === 0) {
          // One not read yet and one already read get a message.
          await say('uid-cur-2', 'news for 2');
          await say('uid-cur-0', 'news for 0');
        }
      },
    );
    expect(pages.flat()).toEqual([convs[0], convs[1], convs[3], convs[4], convs[2], convs[0]]);
    // A read is a change too (unreadCount moves).
    const before = (await a.pub.get('/api/public/conversations?limit=100')).body.conversations.find((c: any) => c.id === convs[4]).updatedAt;
    expect((await a.owner.post(`/api/v1/conversations/${convs[4]}/read`)).status).toBe(200);
    const after = await a.pub.get(`/api/public/conversations?updatedSince=${encodeURIComponent(before)}`);
    expect(ids(after.body.conversations).slice(-1)).toEqual([convs[4]]);
    expect(after.body.conversations.slice(-1)[0]).toEqual(expect.objectContaining({ unreadCount: 0, updatedAt: expect.any(String) }));
  });

  it('GET /api/public/conversations/:id/messages pages newest first, and oldest first with updatedSince (sentAt)', async () => {
    const base = Date.parse('2030-03-01T08:00:00.000Z');
    for (let i = 0; i < 7; i++)
      await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-long', content: `long ${i}`, sentAt: new Date(base + i * 1000).toISOString() });
    const conv = await eventually(async () => {
      const c = (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountA}&limit=100`)).body.data.find(
        (x: any) => x.threadId === 'uid-long',
      );
      return c?.messageCount === 7 ? (c.id as string) : undefined;
    });
    const all = (await a.pub.get(`/api/public/conversations/${conv}/messages?limit=200`)).body;
    expect(all.nextCursor).toBeNull();
    expect(all.messages.map((m: any) => m.content)).toEqual(['long 6', 'long 5', 'long 4', 'long 3', 'long 2', 'long 1', 'long 0']);
    const pages = await pageThrough(a.pub, `/api/public/conversations/${conv}/messages?limit=3`, 'messages');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(ids(all.messages));

    const since = new Date(base + 2000).toISOString();
    const synced = await pageThrough(a.pub, `/api/public/conversations/${conv}/messages?limit=2&updatedSince=${since}`, 'messages');
    expect(synced.flat()).toEqual(ids(all.messages).slice(0, 5).reverse());

    // A conversations cursor does not continue a message list; a malformed one is 400 naming cursor.
    const convCursor = (await a.pub.get('/api/public/conversations?limit=1')).body.nextCursor;
    for (const cursor of [convCursor, 'garbage!', forgedCursor({ ...cursorBody(convCursor), k: 'messages.sentAtDesc', v: '' })]) {
      const res = await a.pub.get(`/api/public/conversations/${conv}/messages?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('cursor');
    }
    expect((await a.pub.get(`/api/public/conversations/${conv}/messages?updatedSince=soon`)).body.error.details[0].field).toBe('updatedSince');
    // Another org cannot read the conversation, with or without a cursor.
    const msgCursor = (await a.pub.get(`/api/public/conversations/${conv}/messages?limit=1`)).body.nextCursor;
    expect((await b.pub.get(`/api/public/conversations/${conv}/messages?cursor=${encodeURIComponent(msgCursor)}`)).status).toBe(404);
  });

  it("another org's conversations cursor lists only the caller's conversations", async () => {
    const aCursor = (await a.pub.get('/api/public/conversations?limit=1&updatedSince=2000-01-01')).body.nextCursor;
    const res = await b.pub.get(`/api/public/conversations?cursor=${encodeURIComponent(aCursor)}`);
    expect(res.status).toBe(200);
    expect(res.body.conversations.map((c: any) => c.externalThreadId)).toEqual(['uid-b']);
  });

  it('POST /api/public/messages/send returns {success, messageId, status}; GET /api/public/messages/:id reads it', async () => {
    const res = await a.pub.post('/api/public/messages/send', { chatnetAccountId: accountA, threadId: 'uid-cur-1', content: 'Your order shipped' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, messageId: expect.any(String), status: 'sent' });
    const got = await a.pub.get(`/api/public/messages/${res.body.messageId}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: res.body.messageId,
      conversationId: convs[1],
      senderType: 'system',
      senderName: 'API',
      content: 'Your order shipped',
      contentType: 'text',
      sentAt: expect.any(String),
      status: 'sent',
      attachments: [],
      quote: null,
      reactions: [],
      recalledAt: null,
    });
    // The same shape as in the conversation's message list.
    const listed = (await a.pub.get(`/api/public/conversations/${convs[1]}/messages`)).body.messages;
    expect(listed[0]).toEqual(got.body);

    expect((await b.pub.get(`/api/public/messages/${res.body.messageId}`)).status).toBe(404);
    expect((await a.pub.get(`/api/public/messages/${randomUUID()}`)).status).toBe(404);
    const malformed = await a.pub.get('/api/public/messages/not-an-id');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details[0].field).toBe('id');
    expect((await client(stack.url).get(`/api/public/messages/${res.body.messageId}`)).status).toBe(401);
  });

  it('zaloAccountId is another name for chatnetAccountId; both given must agree', async () => {
    const alias = await a.pub.post('/api/public/messages/send', { zaloAccountId: accountA, threadId: 'uid-cur-3', content: 'via alias' });
    expect(alias.status).toBe(200);
    expect((await a.pub.get(`/api/public/messages/${alias.body.messageId}`)).body).toEqual(
      expect.objectContaining({ conversationId: convs[3], content: 'via alias' }),
    );
    expect(
      (await a.pub.post('/api/public/messages/send', { zaloAccountId: accountA, chatnetAccountId: accountA, threadId: 'uid-cur-3', content: 'both' }))
        .status,
    ).toBe(200);
    const differ = await a.pub.post('/api/public/messages/send', {
      zaloAccountId: randomUUID(),
      chatnetAccountId: accountA,
      threadId: 'uid-cur-3',
      content: 'x',
    });
    expect(differ.status).toBe(400);
    expect(differ.body.error.details[0].field).toBe('zaloAccountId');
    const neither = await a.pub.post('/api/public/messages/send', { threadId: 'uid-cur-3', content: 'x' });
    expect(neither.status).toBe(400);
    expect(neither.body.error.details[0].field).toBe('chatnetAccountId');
    // Another org's account under the alias is as unknown as under its own name.
    expect((await b.pub.post('/api/public/messages/send', { zaloAccountId: accountA, threadId: 'uid-cur-3', content: 'x' })).status).toBe(404);
  });
});
