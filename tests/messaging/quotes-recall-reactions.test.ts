import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Pool } from '@crm/db';
import { eventually, testPool } from '@crm/testing';
import { io as connectSocket, Socket } from 'socket.io-client';
import { addUser } from '../chatnet-connector/support';
import { client, type Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, orgWithKey } from './support';

// Issue #26 items 7-9: quoted replies, recall and reactions, through the gateway with the real connector on the sandbox
// network. A send names the message it replies to (replyToMessageId), an inbound reply the network id it quotes; an
// outbound message is recalled on the network within RECALL_WINDOW_MINUTES, a contact's recall arrives from it;
// agents and contacts react, one reaction per person. Agents under `assigned` visibility reach none of it for a
// conversation they cannot see, and never read what a contact recalled.
describe('quoted replies, recall and reactions', () => {
  let stack: Stack;
  let db: Pool;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let lead: Client;
  let leadId: string;
  let agent: Client;
  let agentId: string;
  let outsider: Client;
  let accountId: string;
  let socket: Socket;
  const socketEvents: Array<{ type: string; messageId: string; data: any }> = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-quotes-'));

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      serviceEnv: { messaging: { ATTACHMENTS_DIR: dir }, 'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' } },
    });
    db = testPool(stack.databaseUrl('messaging'), 2);
    bus = await eventBus(stack);
    a = await orgWithKey(stack.url, 'Quotes A');
    b = await orgWithKey(stack.url, 'Quotes B');
    const api = client(stack.url);
    ({
      client: lead,
      user: { id: leadId },
    } = await addUser(api, a.owner, 'team_lead', 'Lena Lead'));
    ({
      client: agent,
      user: { id: agentId },
    } = await addUser(api, a.owner, 'agent', 'Andy Agent'));
    ({ client: outsider } = await addUser(api, a.owner, 'agent', 'Olga Other'));
    expect((await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' })).status).toBe(200);
    accountId = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' })).body.id;
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    await eventually(
      async () => (await a.owner.post(`/sandbox/accounts/${accountId}/scan`, { chatnetUid: '9100000001' })).status === 200 || undefined,
    );
    socket = await new Promise<Socket>((resolve, reject) => {
      const s = connectSocket(stack.url, { auth: { token: a.token }, transports: ['websocket'], reconnection: false });
      s.once('connect', () => resolve(s));
      s.once('connect_error', reject);
    });
    socket.on('message', (payload) => socketEvents.push({ type: payload.type, messageId: payload.messageId, data: payload }));
  }, 120_000);
  afterAll(async () => {
    socket?.disconnect();
    await bus?.close();
    await db?.end();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const messagesOf = async (convId: string, who: Client = a.owner) => {
    const res = await who.get(`/api/v1/conversations/${convId}?limit=100`);
    expect(res.status).toBe(200);
    return res.body.messages as any[];
  };
  const sent = async () => (await a.owner.get(`/sandbox/accounts/${accountId}/sent`)).body.data as any[];
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;

  /** The contact writes (optionally quoting a network id); resolves once messaging stored it. */
  async function inbound(fromUid: string, content: string, extra: object = {}) {
    const res = await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid, fromName: 'Mai Tran', content, ...extra });
    expect(res.status).toBe(200);
    const found = await eventually(async () => {
      const list = (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data as any[];
      const conv = list.find((c) => c.threadId === fromUid);
      const m = conv ? (await messagesOf(conv.id)).find((x) => x.content === content) : undefined;
      return m ? { conv, message: m } : undefined;
    });
    return { ...found, chatnetMessageId: res.body.chatnetMessageId as string };
  }

  /** A thread with the contact, assigned to the agent (so the agent sees it and the other agent does not). */
  async function thread(fromUid: string) {
    const first = await inbound(fromUid, `hello from ${fromUid}`);
    expect((await a.owner.put(`/api/v1/conversations/${first.conv.id}/assignee`, { userId: agentId })).status).toBe(200);
    return first;
  }

  async function reply(convId: string, content: string, extra: object = {}) {
    const res = await a.owner.post(`/api/v1/conversations/${convId}/messages`, { content, ...extra });
    expect(res.status).toBe(201);
    const onNetwork = (await sent()).find((m) => m.content === content);
    return { body: res.body, chatnetMessageId: onNetwork.chatnetMessageId as string };
  }

  it('a reply quotes a message of its conversation: the send, the conversation, the network and message.sent show it', async () => {
    const t = await thread('uid-quote-1');
    const plain = await reply(t.conv.id, 'no quote here');
    expect(plain.body).toMatchObject({ quote: null, reactions: [], recalledAt: null, status: 'sent' });

    const r = await reply(t.conv.id, 'yes, in stock', { replyToMessageId: t.message.id });
    expect(r.body.quote).toEqual({ messageId: t.message.id, content: 'hello from uid-quote-1', senderName: 'Mai Tran' });
    const stored = (await messagesOf(t.conv.id)).find((m) => m.id === r.body.id);
    expect(stored).toMatchObject({ quote: r.body.quote, reactions: [], recalledAt: null });
    // The network got the quote by the quoted message's network id.
    const item = (await sent()).find((m) => m.chatnetMessageId === r.chatnetMessageId);
    expect(item).toMatchObject({ quote: { chatnetMessageId: t.chatnetMessageId }, recalledAt: null });
    expect((await sent()).find((m) => m.chatnetMessageId === plain.chatnetMessageId).quote).toBeNull();
    const event = await eventually(async () => bus.seen.find((e) => e.type === 'message.sent' && e.data.messageId === r.body.id));
    expect(event.data.quote).toEqual(r.body.quote);

    // The public API's send and message carry it too.
    const pub = await a.pub.post('/api/public/messages/send', {
      chatnetAccountId: accountId,
      threadId: 'uid-quote-1',
      content: 'via the API',
      replyToMessageId: t.message.id,
    });
    expect(pub.status).toBe(200);
    const read = await a.pub.get(`/api/public/messages/${pub.body.messageId}`);
    expect(read.body).toMatchObject({
      quote: { messageId: t.message.id, content: 'hello from uid-quote-1', senderName: 'Mai Tran' },
      reactions: [],
      recalledAt: null,
    });
  });

  it('replyToMessageId must be a message of the same conversation: 400 naming it otherwise, nothing sent', async () => {
    const t = await thread('uid-quote-2');
    const other = await thread('uid-quote-3');
    const before = (await sent()).length;
    for (const replyToMessageId of [other.message.id, 'not-an-id', '00000000-0000-4000-8000-000000000000']) {
      const res = await a.owner.post(`/api/v1/conversations/${t.conv.id}/messages`, { content: 'quoting the wrong one', replyToMessageId });
      expect(res.status).toBe(400);
      expect(fieldOf(res)).toBe('replyToMessageId');
    }
    // Another org cannot quote (or even see) A's message from its own thread.
    const pub = await b.pub.post('/api/public/messages/send', {
      chatnetAccountId: accountId,
      threadId: 'uid-quote-2',
      content: 'x',
      replyToMessageId: t.message.id,
    });
    expect(pub.status).toBe(400);
    expect(fieldOf(pub)).toBe('replyToMessageId');
    expect((await sent()).length).toBe(before);
  });

  it('an inbound reply quoting a network id is stored with its quote, and message.received carries it', async () => {
    const t = await thread('uid-quote-4');
    const r = await reply(t.conv.id, 'which colour?');
    const answer = await inbound('uid-quote-4', 'the blue one', { quoteChatnetMessageId: r.chatnetMessageId });
    expect(answer.message.quote).toEqual({ messageId: r.body.id, content: 'which colour?', senderName: r.body.senderName });
    const event = await eventually(async () => bus.seen.find((e) => e.type === 'message.received' && e.data.messageId === answer.message.id));
    expect(event.data.quote).toEqual({ messageId: r.body.id, content: 'which colour?', senderName: r.body.senderName });
    // The network quotes only a message of the same thread.
    const bad = await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, {
      fromUid: 'uid-quote-5',
      content: 'hm',
      quoteChatnetMessageId: r.chatnetMessageId,
    });
    expect(bad.status).toBe(400);
    expect(fieldOf(bad)).toBe('quoteChatnetMessageId');
  });

  it('POST /messages/:id/recall recalls an outbound message on the network: status recalled, recalledAt, message.recalled', async () => {
    const t = await thread('uid-recall-1');
    const r = await reply(t.conv.id, 'oops, wrong price');
    const res = await agent.post(`/api/v1/messages/${r.body.id}/recall`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: r.body.id, status: 'recalled', content: 'oops, wrong price', recalledAt: expect.any(String) });
    expect((await messagesOf(t.conv.id)).find((m) => m.id === r.body.id)).toMatchObject({ status: 'recalled', recalledAt: res.body.recalledAt });
    const item = (await sent()).find((m) => m.chatnetMessageId === r.chatnetMessageId);
    expect(item.recalledAt).toEqual(expect.any(String));
    const event = await eventually(async () => bus.seen.find((e) => e.type === 'message.recalled' && e.data.messageId === r.body.id));
    expect(event.orgId).toBe(a.orgId);
    expect(event.data).toEqual({
      messageId: r.body.id,
      conversationId: t.conv.id,
      contactId: t.conv.contactId,
      chatnetAccountId: accountId,
      assigneeId: agentId,
      recalledAt: res.body.recalledAt,
      recalledBy: 'agent',
      userId: agentId,
      fromUid: null,
    });
    // Sockets of the org hear of it as a `message` event.
    const pushed = await eventually(async () => socketEvents.find((e) => e.type === 'message.recalled' && e.messageId === r.body.id));
    expect(pushed.data).toMatchObject({ recalledBy: 'agent', recalledAt: res.body.recalledAt, conversationId: t.conv.id });
    // Again: the message as it is, announced once.
    const again = await a.owner.post(`/api/v1/messages/${r.body.id}/recall`);
    expect(again.status).toBe(200);
    expect(again.body.recalledAt).toBe(res.body.recalledAt);
    await new Promise((done) => setTimeout(done, 300));
    expect(bus.seen.filter((e) => e.type === 'message.recalled' && e.data.messageId === r.body.id)).toHaveLength(1);
  });

  it('recall: 400 not_recallable for a contact’s message, 409 recall_window_passed after the window, 404 across orgs and outside visibility', async () => {
    const t = await thread('uid-recall-2');
    const contactsOwn = await a.owner.post(`/api/v1/messages/${t.message.id}/recall`);
    expect(contactsOwn.status).toBe(400);
    expect(contactsOwn.body.error.code).toBe('not_recallable');

    const old = await reply(t.conv.id, 'sent long ago');
    // Back-dated past the default window of 1440 minutes.
    await db.query(`UPDATE messages SET sent_at = now() - interval '1441 minutes' WHERE id = $1`, [old.body.id]);
    const late = await a.owner.post(`/api/v1/messages/${old.body.id}/recall`);
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('recall_window_passed');
    expect((await sent()).find((m) => m.chatnetMessageId === old.chatnetMessageId).recalledAt).toBeNull();

    const fresh = await reply(t.conv.id, 'still fresh');
    expect((await b.owner.post(`/api/v1/messages/${fresh.body.id}/recall`)).status).toBe(404);
    expect((await outsider.post(`/api/v1/messages/${fresh.body.id}/recall`)).status).toBe(404);
    expect((await a.owner.post('/api/v1/messages/not-an-id/recall')).status).toBe(404);
    expect((await a.owner.get(`/api/v1/conversations/${t.conv.id}`)).body.messages.find((m: any) => m.id === fresh.body.id).status).toBe('sent');
  });

  it('a contact’s recall of the last message leaves the inbox list preview empty for everyone (agents may not read it)', async () => {
    const t = await thread('uid-recall-4');
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/recall`, { chatnetMessageId: t.chatnetMessageId })).status).toBe(200);
    await eventually(async () => bus.seen.find((e) => e.type === 'message.recalled' && e.data.messageId === t.message.id));
    for (const who of [agent, lead]) {
      const item = (await who.get('/api/v1/conversations?limit=100')).body.data.find((c: any) => c.id === t.conv.id);
      expect(item.lastMessage).toMatchObject({ id: t.message.id, content: '' });
    }
  });

  it('a contact’s recall marks the stored message recalled; agents read its content (and quotes of it) as null, team leads still read it', async () => {
    const t = await thread('uid-recall-3');
    const q = await reply(t.conv.id, 'about your question', { replyToMessageId: t.message.id });
    const res = await a.owner.post(`/sandbox/accounts/${accountId}/recall`, { chatnetMessageId: t.chatnetMessageId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accountId, chatnetMessageId: t.chatnetMessageId, threadId: 'uid-recall-3', threadType: 'user' });
    const event = await eventually(async () => bus.seen.find((e) => e.type === 'message.recalled' && e.data.messageId === t.message.id));
    expect(event.data).toMatchObject({ recalledBy: 'contact', fromUid: 'uid-recall-3', userId: null, conversationId: t.conv.id });

    const asAgent = await messagesOf(t.conv.id, agent);
    expect(asAgent.find((m) => m.id === t.message.id)).toMatchObject({ status: 'recalled', content: null, recalledAt: expect.any(String) });
    expect(asAgent.find((m) => m.id === q.body.id).quote).toEqual({ messageId: t.message.id, content: null, senderName: 'Mai Tran' });
    for (const who of [lead, a.owner]) {
      const list = await messagesOf(t.conv.id, who);
      expect(list.find((m) => m.id === t.message.id)).toMatchObject({ status: 'recalled', content: 'hello from uid-recall-3' });
      expect(list.find((m) => m.id === q.body.id).quote.content).toBe('hello from uid-recall-3');
    }
    // Nor does a search find it for the agent: its words would show what they may not read.
    const hits = async (who: Client) => (await who.get('/api/v1/messages/search?q=uid-recall-3')).body.data.map((h: any) => h.id);
    expect(await hits(agent)).not.toContain(t.message.id);
    expect(await hits(lead)).toContain(t.message.id);
    // The network knows only the contact's own messages for this: the account's own or an unknown id is 400.
    const own = await a.owner.post(`/sandbox/accounts/${accountId}/recall`, { chatnetMessageId: q.chatnetMessageId });
    expect(own.status).toBe(400);
    expect(fieldOf(own)).toBe('chatnetMessageId');
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/recall`, { chatnetMessageId: 'no-such-message' })).status).toBe(400);
    expect(fieldOf(await a.owner.post(`/sandbox/accounts/${accountId}/recall`, {}))).toBe('chatnetMessageId');
    expect((await b.owner.post(`/sandbox/accounts/${accountId}/recall`, { chatnetMessageId: t.chatnetMessageId })).status).toBe(404);
    expect((await agent.post(`/sandbox/accounts/${accountId}/recall`, { chatnetMessageId: t.chatnetMessageId })).status).toBe(403);
  });

  it('PUT /messages/:id/reactions: one reaction per user (a new one replaces it), DELETE takes the caller’s back; message.reaction each time', async () => {
    const t = await thread('uid-react-1');
    const put = await agent.put(`/api/v1/messages/${t.message.id}/reactions`, { emoji: '👍' });
    expect(put.status).toBe(200);
    expect(put.body.reactions).toEqual([{ emoji: '👍', by: 'agent', userId: agentId, at: expect.any(String) }]);
    const replaced = await agent.put(`/api/v1/messages/${t.message.id}/reactions`, { emoji: '❤️' });
    expect(replaced.body.reactions).toEqual([{ emoji: '❤️', by: 'agent', userId: agentId, at: expect.any(String) }]);
    const second = await lead.put(`/api/v1/messages/${t.message.id}/reactions`, { emoji: '😆' });
    expect(second.body.reactions.map((r: any) => [r.emoji, r.userId])).toEqual([
      ['❤️', agentId],
      ['😆', leadId],
    ]);
    const events = await eventually(async () => {
      const list = bus.seen.filter((e) => e.type === 'message.reaction' && e.data.messageId === t.message.id);
      return list.length >= 3 ? list : undefined;
    });
    expect(events.map((e) => [e.data.emoji, e.data.by, e.data.userId, e.data.fromUid])).toEqual([
      ['👍', 'agent', agentId, null],
      ['❤️', 'agent', agentId, null],
      ['😆', 'agent', leadId, null],
    ]);
    expect(events[0].data).toMatchObject({
      conversationId: t.conv.id,
      chatnetAccountId: accountId,
      assigneeId: agentId,
      contactId: t.conv.contactId,
    });
    await eventually(async () =>
      socketEvents.filter((e) => e.type === 'message.reaction' && e.messageId === t.message.id).length >= 3 ? true : undefined,
    );

    const del = await agent.del(`/api/v1/messages/${t.message.id}/reactions`);
    expect(del.status).toBe(200);
    expect(del.body.reactions.map((r: any) => r.userId)).toEqual([leadId]);
    const removed = await eventually(async () =>
      bus.seen.find((e) => e.type === 'message.reaction' && e.data.messageId === t.message.id && e.data.emoji === null),
    );
    expect(removed.data).toMatchObject({ by: 'agent', userId: agentId });
    // Nothing of the caller's left: the same message, no event.
    const again = await agent.del(`/api/v1/messages/${t.message.id}/reactions`);
    expect(again.status).toBe(200);
    expect(again.body.reactions).toHaveLength(1);
    expect((await messagesOf(t.conv.id)).find((m) => m.id === t.message.id).reactions.map((r: any) => r.emoji)).toEqual(['😆']);
  });

  it('reactions: 400 naming emoji, 404 across orgs and outside visibility, 422 on a recalled message', async () => {
    const t = await thread('uid-react-2');
    for (const bad of [{}, { emoji: '' }, { emoji: 'two words' }, { emoji: 'x'.repeat(33) }, { emoji: 5 }]) {
      const res = await a.owner.put(`/api/v1/messages/${t.message.id}/reactions`, bad);
      expect(res.status).toBe(400);
      expect(fieldOf(res)).toBe('emoji');
    }
    expect((await b.owner.put(`/api/v1/messages/${t.message.id}/reactions`, { emoji: '👍' })).status).toBe(404);
    expect((await b.owner.del(`/api/v1/messages/${t.message.id}/reactions`)).status).toBe(404);
    expect((await outsider.put(`/api/v1/messages/${t.message.id}/reactions`, { emoji: '👍' })).status).toBe(404);
    expect((await outsider.del(`/api/v1/messages/${t.message.id}/reactions`)).status).toBe(404);
    expect((await a.owner.put('/api/v1/messages/00000000-0000-4000-8000-000000000000/reactions', { emoji: '👍' })).status).toBe(404);
    expect((await messagesOf(t.conv.id)).find((m) => m.id === t.message.id).reactions).toEqual([]);

    const r = await reply(t.conv.id, 'to be recalled');
    expect((await a.owner.post(`/api/v1/messages/${r.body.id}/recall`)).status).toBe(200);
    const onRecalled = await a.owner.put(`/api/v1/messages/${r.body.id}/reactions`, { emoji: '👍' });
    expect(onRecalled.status).toBe(422);
    expect(onRecalled.body.error.code).toBe('message_recalled');
  });

  it('the contact’s reactions arrive from the network (by contact, userId their uid) and can be taken back', async () => {
    const t = await thread('uid-react-3');
    const r = await reply(t.conv.id, 'how about this one?');
    const res = await a.owner.post(`/sandbox/accounts/${accountId}/react`, {
      chatnetMessageId: r.chatnetMessageId,
      fromUid: 'uid-react-3',
      emoji: '😮',
    });
    expect(res.status).toBe(200);
    const shown = await eventually(async () => {
      const m = (await messagesOf(t.conv.id)).find((x) => x.id === r.body.id);
      return m.reactions.length ? m : undefined;
    });
    expect(shown.reactions).toEqual([{ emoji: '😮', by: 'contact', userId: 'uid-react-3', at: expect.any(String) }]);
    const event = await eventually(async () => bus.seen.find((e) => e.type === 'message.reaction' && e.data.messageId === r.body.id));
    expect(event.data).toMatchObject({ emoji: '😮', by: 'contact', userId: null, fromUid: 'uid-react-3' });

    expect(
      (await a.owner.post(`/sandbox/accounts/${accountId}/react`, { chatnetMessageId: r.chatnetMessageId, fromUid: 'uid-react-3', emoji: '' }))
        .status,
    ).toBe(200);
    await eventually(async () => ((await messagesOf(t.conv.id)).find((x) => x.id === r.body.id).reactions.length === 0 ? true : undefined));

    const unknown = await a.owner.post(`/sandbox/accounts/${accountId}/react`, {
      chatnetMessageId: 'no-such-message',
      fromUid: 'uid-react-3',
      emoji: '😮',
    });
    expect(unknown.status).toBe(400);
    expect(fieldOf(unknown)).toBe('chatnetMessageId');
    expect(fieldOf(await a.owner.post(`/sandbox/accounts/${accountId}/react`, { chatnetMessageId: r.chatnetMessageId, emoji: '😮' }))).toBe(
      'fromUid',
    );
    expect(
      (await b.owner.post(`/sandbox/accounts/${accountId}/react`, { chatnetMessageId: r.chatnetMessageId, fromUid: 'uid-react-3', emoji: '😮' }))
        .status,
    ).toBe(404);
  });

  it('with the account disconnected, recall and reactions reach nothing: 422 and nothing stored', async () => {
    const t = await thread('uid-offline-1');
    const r = await reply(t.conv.id, 'sent while connected');
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/drop`, { reason: 'test', expireSession: true })).status).toBe(200);
    await eventually(async () => ((await a.owner.get(`/api/v1/chatnet-accounts/${accountId}`)).body.status === 'disconnected' ? true : undefined));
    const recall = await a.owner.post(`/api/v1/messages/${r.body.id}/recall`);
    expect(recall.status).toBe(422);
    const react = await a.owner.put(`/api/v1/messages/${t.message.id}/reactions`, { emoji: '👍' });
    expect(react.status).toBe(422);
    const list = await messagesOf(t.conv.id);
    expect(list.find((m) => m.id === r.body.id)).toMatchObject({ status: 'sent', recalledAt: null });
    expect(list.find((m) => m.id === t.message.id).reactions).toEqual([]);
  });
});
