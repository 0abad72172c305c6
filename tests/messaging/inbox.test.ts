import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventData } from '../support/event-data';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// The shared inbox: messages from the network become conversations and messages (once each), visible
// and manageable through the internal API and readable through the public API, never across orgs.
describe('inbox: inbound messages, conversations, state moves, public reads', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let accountA: string;
  let accountB: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-inbox-'));

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
    b = await orgWithKey(stack.url, 'Org B');
    accountA = connector.account(a.orgId);
    accountB = connector.account(b.orgId);
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  const conversationOf = async (owner = a.owner, accountId = accountA, threadId?: string) => {
    const res = await owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}&limit=100`);
    return res.body.data.find((c: any) => !threadId || c.threadId === threadId);
  };
  const messagesOf = async (id: string, owner = a.owner) => (await owner.get(`/api/v1/conversations/${id}?limit=100`)).body.messages as any[];

  let convId: string;

  it('chatnet.inbound from a new contact creates the contact in crm, the conversation and the message', async () => {
    const sentAt = new Date(Date.now() - 1000).toISOString();
    const msg = await bus.inbound(a.orgId, {
      accountId: accountA,
      fromUid: 'uid-lan',
      fromName: 'Lan Nguyen',
      fromAvatar: 'https://cdn.example/lan.png',
      content: 'Hi, is it in stock?',
      sentAt,
    });
    const conv = await eventually(() => conversationOf(a.owner, accountA, 'uid-lan'));
    convId = conv.id;
    const contact = crm.contacts.get(`${a.orgId}/uid-lan`)!;
    expect(crm.upserts).toContainEqual({ orgId: a.orgId, chatnetUid: 'uid-lan', displayName: 'Lan Nguyen', threadType: 'user' });
    expect(conv).toEqual({
      id: expect.any(String),
      contactId: contact.id,
      contactName: 'Lan Nguyen',
      contactAvatar: 'https://cdn.example/lan.png',
      type: 'user',
      chatnetAccountId: accountA,
      threadId: 'uid-lan',
      messageCount: 1,
      unreadCount: 1,
      lastMessage: { id: expect.any(String), content: 'Hi, is it in stock?', contentType: 'text', senderName: 'Lan Nguyen', sentAt },
      status: 'active',
      createdAt: expect.any(String),
      lastActivityAt: expect.any(String),
      isReplied: false,
      folderIds: [],
      assigneeId: null,
      teamId: null,
      snoozedUntil: null,
      priority: null,
      // Its account follows no SLA policy.
      sla: null,
      csat: null,
    });
    const detail = await a.owner.get(`/api/v1/conversations/${convId}`);
    expect(detail.status).toBe(200);
    expect(detail.body.conversation).toEqual(
      expect.objectContaining({
        id: convId,
        contactId: contact.id,
        contactName: 'Lan Nguyen',
        type: 'user',
        chatnetAccountId: accountA,
        status: 'active',
        createdAt: conv.createdAt,
      }),
    );
    expect(detail.body.messages).toEqual([
      {
        id: conv.lastMessage.id,
        conversationId: convId,
        content: 'Hi, is it in stock?',
        contentType: 'text',
        senderUid: 'uid-lan',
        senderName: 'Lan Nguyen',
        isFromChatnet: true,
        isRead: false,
        isReplied: false,
        sentAt,
        status: 'sent',
        sentByUserId: null,
        seenAt: null,
        senderContactId: null,
        source: 'chatnet',
        attachments: [],
        quote: null,
        reactions: [],
        recalledAt: null,
      },
    ]);
    expect(detail.body.pagination).toEqual({ total: 1, page: 1, limit: 30, pages: 1 });

    // Events for the rest of the system (webhooks, automation, sockets), after the rows are committed.
    const created = await eventually(async () => bus.of('conversation.created').find((e) => e.data.id === convId));
    expect(created.orgId).toBe(a.orgId);
    expect(created.data).toEqual({ id: convId, contactId: contact.id, chatnetAccountId: accountA, type: 'user', threadId: 'uid-lan' });
    const received = await eventually(async () => bus.of('message.received').find((e) => e.data.conversationId === convId));
    expect(received.data).toEqual({
      messageId: conv.lastMessage.id,
      conversationId: convId,
      contactId: contact.id,
      chatnetAccountId: accountA,
      threadId: 'uid-lan',
      threadType: 'user',
      senderUid: 'uid-lan',
      senderName: 'Lan Nguyen',
      // Only a group message has a sender contact of its own.
      senderContactId: null,
      content: 'Hi, is it in stock?',
      contentType: 'text',
      sentAt: msg.sentAt,
      // Unassigned, on an account with no assignment settings: nobody to alert.
      assigneeId: null,
      eligibleUserIds: [],
      // It quotes no earlier message.
      quote: null,
    });
  });

  it('the same network message delivered twice (new event id, or the same event again) is stored once', async () => {
    const eventsBefore = bus.of('message.received').length;
    const first = await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-lan', content: 'twice', chatnetMessageId: 'net-dup-1' }, undefined);
    await bus.inbound(a.orgId, { ...first, content: 'twice' });
    const eventId = await bus.publish('chatnet.inbound', a.orgId, { ...first, chatnetMessageId: 'net-dup-2', content: 'same event' });
    await bus.publish('chatnet.inbound', a.orgId, { ...first, chatnetMessageId: 'net-dup-2', content: 'same event' }, eventId);
    // A later message proves the duplicates were consumed before we count.
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-lan', content: 'marker' });
    await eventually(async () => (await messagesOf(convId)).some((m) => m.content === 'marker'));
    const msgs = await messagesOf(convId);
    expect(msgs.filter((m) => m.content === 'twice')).toHaveLength(1);
    expect(msgs.filter((m) => m.content === 'same event')).toHaveLength(1);
    await eventually(async () => bus.of('message.received').length >= eventsBefore + 3);
    expect(bus.of('message.received').filter((e) => e.data.content === 'twice')).toHaveLength(1);
    const conv = await conversationOf(a.owner, accountA, 'uid-lan');
    expect(conv.messageCount).toBe(4);
    expect(conv.unreadCount).toBe(4);
  });

  it('a group thread is one conversation of type group with no contact; each message links its sender', async () => {
    await bus.inbound(a.orgId, {
      accountId: accountA,
      fromUid: 'uid-minh',
      fromName: 'Minh',
      threadType: 'group',
      threadId: 'grp-1',
      content: 'Hello group',
    });
    await bus.inbound(a.orgId, {
      accountId: accountA,
      fromUid: 'uid-hoa',
      fromName: 'Hoa',
      threadType: 'group',
      threadId: 'grp-1',
      content: 'Hi all',
    });
    const conv = await eventually(async () => {
      const c = await conversationOf(a.owner, accountA, 'grp-1');
      return c?.messageCount === 2 && c;
    });
    expect(conv.type).toBe('group');
    expect(conv.contactId).toBeNull();
    // The network named no group: "Group" and the end of its id.
    expect(conv.contactName).toBe('Group grp-1');
    expect(crm.upserts.filter((u) => u.chatnetUid === 'grp-1')).toEqual([]);
    // The senders, as people seen in a group thread.
    expect(crm.upserts).toContainEqual({ orgId: a.orgId, chatnetUid: 'uid-minh', displayName: 'Minh', threadType: 'group' });
    const msgs = await messagesOf(conv.id);
    expect(msgs.map((m) => [m.senderName, m.senderContactId]).sort()).toEqual([
      ['Hoa', crm.contacts.get(`${a.orgId}/uid-hoa`)!.id],
      ['Minh', crm.contacts.get(`${a.orgId}/uid-minh`)!.id],
    ]);
  });

  it('a contact already in crm is reused, with its name and phone', async () => {
    const known = crm.add(a.orgId, 'uid-known', 'Known Customer', '+84900000001');
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-known', fromName: 'network name', content: 'back again' });
    const conv = await eventually(() => conversationOf(a.owner, accountA, 'uid-known'));
    expect(conv.contactId).toBe(known.id);
    expect(conv.contactName).toBe('Known Customer');
    const pub = await a.pub.get('/api/public/conversations');
    expect(pub.body.conversations.find((c: any) => c.id === conv.id).contact).toEqual({
      id: known.id,
      fullName: 'Known Customer',
      phone: '+84900000001',
      avatarUrl: null,
    });
  });

  it('GET /conversations/:id pages messages newest first, 30 by default', async () => {
    const base = Date.now() - 3_600_000;
    for (let i = 0; i < 35; i++) {
      await bus.inbound(a.orgId, {
        accountId: accountA,
        fromUid: 'uid-chatty',
        fromName: 'Chatty',
        content: `m${i}`,
        sentAt: new Date(base + i * 1000).toISOString(),
      });
    }
    const conv = await eventually(async () => {
      const c = await conversationOf(a.owner, accountA, 'uid-chatty');
      return c?.messageCount === 35 && c;
    });
    expect(conv.lastMessage.content).toBe('m34');
    const p1 = await a.owner.get(`/api/v1/conversations/${conv.id}`);
    expect(p1.body.messages).toHaveLength(30);
    expect(p1.body.messages[0].content).toBe('m34');
    expect(p1.body.pagination).toEqual({ total: 35, page: 1, limit: 30, pages: 2 });
    const p2 = await a.owner.get(`/api/v1/conversations/${conv.id}?page=2`);
    expect(p2.body.messages.map((m: any) => m.content)).toEqual(['m4', 'm3', 'm2', 'm1', 'm0']);
    const clamped = await a.owner.get(`/api/v1/conversations/${conv.id}?limit=5000`);
    expect(clamped.body.pagination.limit).toBe(100);
    const bad = await a.owner.get(`/api/v1/conversations/${conv.id}?limit=ten`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('limit');
  });

  it('an older message arriving late never replaces the newer preview', async () => {
    await bus.inbound(a.orgId, {
      accountId: accountA,
      fromUid: 'uid-chatty',
      content: 'very old',
      sentAt: new Date(Date.now() - 86_400_000).toISOString(),
    });
    const conv = await eventually(async () => {
      const c = await conversationOf(a.owner, accountA, 'uid-chatty');
      return c?.messageCount === 36 && c;
    });
    expect(conv.lastMessage.content).toBe('m34');
  });

  it('GET /conversations filters by status, type and contact name, sorts, and paginates (50 default, 100 max)', async () => {
    const all = await a.owner.get('/api/v1/conversations');
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ total: 4, page: 1, limit: 50, pages: 1 });
    // Default order: most recent message first.
    const times = all.body.data.map((c: any) => c.lastMessage.sentAt);
    expect([...times].sort().reverse()).toEqual(times);

    const groups = await a.owner.get('/api/v1/conversations?type=group');
    expect(groups.body.data.map((c: any) => c.threadId)).toEqual(['grp-1']);
    const byName = await a.owner.get('/api/v1/conversations?search=known');
    expect(byName.body.data.map((c: any) => c.contactName)).toEqual(['Known Customer']);
    const literal = await a.owner.get('/api/v1/conversations?search=%25');
    expect(literal.body.data).toEqual([]);

    const created = await a.owner.get('/api/v1/conversations?sortBy=createdAt&direction=asc');
    expect(created.body.data[0].id).toBe(convId);
    const paged = await a.owner.get('/api/v1/conversations?sortBy=createdAt&direction=asc&limit=2&page=2');
    expect(paged.body.pagination).toEqual({ total: 4, page: 2, limit: 2, pages: 2 });
    expect(paged.body.data.map((c: any) => c.id)).toEqual(created.body.data.slice(2, 4).map((c: any) => c.id));
    expect((await a.owner.get('/api/v1/conversations?limit=1000')).body.pagination.limit).toBe(100);

    for (const q of ['status=open', 'type=channel', 'sortBy=name', 'direction=up', 'page=x', 'folderId=nope']) {
      const res = await a.owner.get(`/api/v1/conversations?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe(q.split('=')[0]);
    }
  });

  it('GET /conversations/counts counts total, unread, unreplied, archived, mine and unassigned', async () => {
    const res = await a.owner.get('/api/v1/conversations/counts');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ total: 4, unread: 4, unreplied: 4, archived: 0, mine: 0, unassigned: 4, views: {} });
  });

  it('POST /:id/read marks everything read; /unread marks the latest message unread again; PUT a message sets its flags', async () => {
    const read = await a.owner.post(`/api/v1/conversations/${convId}/read`);
    expect(read.status).toBe(200);
    expect(read.body.message).toEqual(expect.any(String));
    expect(read.body.conversation.unreadCount).toBe(0);
    expect((await messagesOf(convId)).every((m) => m.isRead)).toBe(true);
    expect((await a.owner.get('/api/v1/conversations/counts')).body.unread).toBe(3);
    expect((await a.owner.get('/api/v1/conversations?unread=true')).body.data.map((c: any) => c.id)).not.toContain(convId);

    const unread = await a.owner.post(`/api/v1/conversations/${convId}/unread`);
    expect(unread.body.conversation.unreadCount).toBe(1);
    const [latest] = await messagesOf(convId);
    expect(latest.isRead).toBe(false);

    const flagged = await a.owner.put(`/api/v1/conversations/${convId}/messages/${latest.id}`, { isRead: true, isReplied: true });
    expect(flagged.status).toBe(200);
    expect(flagged.body).toEqual(expect.objectContaining({ id: latest.id, isRead: true, isReplied: true }));
    const conv = await conversationOf(a.owner, accountA, 'uid-lan');
    expect(conv.unreadCount).toBe(0);
    expect(conv.isReplied).toBe(false);

    expect((await a.owner.put(`/api/v1/conversations/${convId}/messages/${latest.id}`, {})).status).toBe(400);
    expect((await a.owner.put(`/api/v1/conversations/${convId}/messages/${latest.id}`, { isRead: 'yes' })).status).toBe(400);
    expect((await a.owner.put(`/api/v1/conversations/${convId}/messages/00000000-0000-4000-8000-000000000000`, { isRead: true })).status).toBe(404);
  });

  it('archive, close and reopen move the status; archive publishes conversation.archived; a new message reopens', async () => {
    const archived = await a.owner.post(`/api/v1/conversations/${convId}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body.message).toBe('Conversation archived');
    expect(archived.body.conversation.status).toBe('archived');
    await eventually(async () => bus.of('conversation.archived').find((e) => e.data.id === convId && e.orgId === a.orgId));
    expect((await a.owner.get('/api/v1/conversations/counts')).body).toEqual(expect.objectContaining({ total: 4, archived: 1 }));
    expect((await a.owner.get('/api/v1/conversations?status=archived')).body.data.map((c: any) => c.id)).toEqual([convId]);
    // Archiving twice is harmless and announces nothing new.
    expect((await a.owner.post(`/api/v1/conversations/${convId}/archive`)).status).toBe(200);

    const closed = await a.owner.post(`/api/v1/conversations/${convId}/close`);
    expect(closed.body.conversation.status).toBe('closed');
    const reopened = await a.owner.post(`/api/v1/conversations/${convId}/reopen`);
    expect(reopened.body).toEqual({ message: 'Conversation reopened', conversation: expect.objectContaining({ id: convId, status: 'active' }) });

    await a.owner.post(`/api/v1/conversations/${convId}/archive`);
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-lan', content: 'are you there?' });
    await eventually(async () => (await conversationOf(a.owner, accountA, 'uid-lan')).status === 'active');
    expect(bus.of('conversation.archived').filter((e) => e.data.id === convId)).toHaveLength(2);
  });

  it('/unread on a conversation the contact never wrote in is 422', async () => {
    // Org B's first conversation starts with our own message (through the public API).
    const sent = await b.pub.post('/api/public/messages/send', { chatnetAccountId: accountB, threadId: 'uid-b1', content: 'Hello from B' });
    expect(sent.status).toBe(200);
    const conv = await eventually(() => conversationOf(b.owner, accountB, 'uid-b1'));
    const res = await b.owner.post(`/api/v1/conversations/${conv.id}/unread`);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('no_inbound_message');
  });

  it("another org's conversation, message or a malformed id is 404 everywhere; lists never show other orgs' rows", async () => {
    const [latest] = await messagesOf(convId);
    const paths = [
      ['get', `/api/v1/conversations/${convId}`],
      ['post', `/api/v1/conversations/${convId}/archive`],
      ['post', `/api/v1/conversations/${convId}/close`],
      ['post', `/api/v1/conversations/${convId}/reopen`],
      ['post', `/api/v1/conversations/${convId}/read`],
      ['post', `/api/v1/conversations/${convId}/unread`],
      ['post', `/api/v1/conversations/${convId}/messages`],
      ['put', `/api/v1/conversations/${convId}/messages/${latest.id}`],
      ['get', '/api/v1/conversations/not-a-uuid'],
      ['post', '/api/v1/conversations/not-a-uuid/archive'],
    ] as const;
    for (const [method, p] of paths) {
      const res = await (b.owner as any)[method](p, method === 'get' ? undefined : { content: 'x', isRead: true });
      expect([p, res.status]).toEqual([p, 404]);
    }
    expect((await a.owner.get(`/api/v1/conversations/${convId}`)).body.conversation.status).toBe('active');
    const listB = await b.owner.get('/api/v1/conversations');
    expect(listB.body.data.every((c: any) => c.chatnetAccountId === accountB)).toBe(true);
    expect((await b.owner.get('/api/v1/conversations/counts')).body.total).toBe(1);
    expect((await b.pub.get(`/api/public/conversations/${convId}/messages`)).status).toBe(404);
    expect((await b.pub.get('/api/public/conversations')).body.conversations.map((c: any) => c.externalThreadId)).toEqual(['uid-b1']);
  });

  it('GET /api/public/conversations returns the public shape, 20 by default and 100 at most', async () => {
    const res = await a.pub.get('/api/public/conversations');
    expect(res.status).toBe(200);
    const lan = res.body.conversations.find((c: any) => c.id === convId);
    const contact = crm.contacts.get(`${a.orgId}/uid-lan`)!;
    expect(lan).toEqual({
      id: convId,
      threadType: 'user',
      externalThreadId: 'uid-lan',
      lastMessageAt: expect.any(String),
      unreadCount: 1,
      isReplied: false,
      assigneeId: null,
      contact: { id: contact.id, fullName: 'Lan Nguyen', phone: null, avatarUrl: 'https://cdn.example/lan.png' },
      updatedAt: expect.any(String),
      csat: null,
    });
    for (let i = 0; i < 22; i++) await bus.inbound(a.orgId, { accountId: accountA, fromUid: `uid-many-${i}`, fromName: `Many ${i}` });
    await eventually(async () => (await a.owner.get('/api/v1/conversations/counts')).body.total === 26);
    expect((await a.pub.get('/api/public/conversations')).body.conversations).toHaveLength(20);
    expect((await a.pub.get('/api/public/conversations?limit=500')).body.conversations).toHaveLength(26);
    expect((await a.pub.get('/api/public/conversations?limit=3')).body.conversations).toHaveLength(3);
    expect((await a.pub.get('/api/public/conversations?limit=abc')).status).toBe(400);
  });

  it('GET /api/public/conversations/:id/messages returns the public message shape, 50 by default and 200 at most', async () => {
    const chatty = await conversationOf(a.owner, accountA, 'uid-chatty');
    for (let i = 35; i < 215; i++) await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-chatty', fromName: 'Chatty', content: `m${i}` });
    await eventually(async () => (await a.owner.get(`/api/v1/conversations/${chatty.id}`)).body.pagination.total === 216, 20_000);
    const res = await a.pub.get(`/api/public/conversations/${chatty.id}/messages`);
    expect(res.status).toBe(200);
    expect(res.body.messages).toHaveLength(50);
    expect(res.body.messages[0]).toEqual({
      id: expect.any(String),
      senderType: 'contact',
      senderName: 'Chatty',
      content: expect.stringMatching(/^m\d+$/),
      contentType: 'text',
      sentAt: expect.any(String),
      attachments: [],
      conversationId: chatty.id,
      status: 'sent',
      quote: null,
      reactions: [],
      recalledAt: null,
    });
    expect((await a.pub.get(`/api/public/conversations/${chatty.id}/messages?limit=1000`)).body.messages).toHaveLength(200);
    expect((await a.pub.get('/api/public/conversations/not-a-uuid/messages')).status).toBe(404);
    expect((await a.pub.get('/api/public/conversations/00000000-0000-4000-8000-000000000000/messages')).status).toBe(404);
  });

  it('the public API needs a valid key; the internal API a bearer token', async () => {
    expect((await client(stack.url).get('/api/public/conversations')).status).toBe(401);
    expect((await client(stack.url).withKey('crm_live_wrong').get('/api/public/conversations')).status).toBe(401);
    expect((await client(stack.url).get('/api/v1/conversations')).status).toBe(401);
  });

  it('a chatnet.inbound whose data does not fit its schema is dead-lettered with the fields named, without blocking the queue', async () => {
    const broken = await bus.publish('chatnet.inbound', a.orgId, {
      ...eventData('chatnet.inbound'),
      accountId: 'nope',
      fromUid: 'uid-broken',
      threadId: 'uid-broken',
      sentAt: 'yesterday',
    });
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-after-broken', content: 'still flowing' });
    await eventually(() => conversationOf(a.owner, accountA, 'uid-after-broken'));
    const parked = await bus.deadLettered('inbound');
    expect(parked.event.id).toBe(broken);
    expect(parked.headers['x-crm-attempt']).toBe(1);
    expect(parked.headers['x-crm-error']).toBe(
      'chatnet.inbound v1 data does not match its schema: accountId: Invalid GUID; sentAt: Invalid ISO datetime',
    );
    expect(crm.upserts.filter((u) => u.chatnetUid === 'uid-broken')).toEqual([]);
  });
});
