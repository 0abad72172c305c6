import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { addUser } from '../chatnet-connector/support';
import { client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { orgWithKey } from './support';

// An agent marking a conversation read tells the network too (zca sendSeenEvent), naming each message by both of its
// ids: the network's id and the sender's own cliMsgId, which messaging keeps from chatnet.inbound. Through the
// gateway with the real connector on the sandbox network, which records what the account marked seen.
describe('mark read on the network: conversation read → MarkThreadSeen → the network sees it', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let accountId: string;
  let accountB: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-seen-net-'));

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      serviceEnv: { messaging: { ATTACHMENTS_DIR: dir }, 'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' } },
    });
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    accountId = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' })).body.id;
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    await eventually(
      async () => (await a.owner.post(`/sandbox/accounts/${accountId}/scan`, { chatnetUid: '9000000001' })).status === 200 || undefined,
    );
    accountB = (await b.owner.post('/api/v1/chatnet-accounts', { displayName: 'Other shop' })).body.id;
    expect((await b.owner.post(`/api/v1/chatnet-accounts/${accountB}/login`)).status).toBe(200);
    await eventually(
      async () => (await b.owner.post(`/sandbox/accounts/${accountB}/scan`, { chatnetUid: '9000000002' })).status === 200 || undefined,
    );
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const seenByAgent = async (org = a, account = accountId) => {
    const res = await org.owner.get(`/sandbox/accounts/${account}/seen-by-agent`);
    expect(res.status).toBe(200);
    return res.body.data as any[];
  };

  /** Push a customer's message and wait until messaging stored it; the sandbox's answer names both of its ids. */
  async function inbound(fromUid: string, content: string, org = a, account = accountId) {
    const res = await org.owner.post(`/sandbox/accounts/${account}/inbound`, { fromUid, fromName: 'Mai Tran', content });
    expect(res.status).toBe(200);
    expect(res.body.cliMsgId).toMatch(/^\d+$/);
    const conv = await eventually(async () => {
      const list = (await org.owner.get(`/api/v1/conversations?chatnetAccountId=${account}`)).body.data as any[];
      const c = list.find((x) => x.threadId === fromUid);
      const msgs = c ? (await org.owner.get(`/api/v1/conversations/${c.id}`)).body.messages : [];
      return msgs.some((m: any) => m.content === content) ? c : undefined;
    });
    return { conv, chatnetMessageId: res.body.chatnetMessageId as string, cliMsgId: res.body.cliMsgId as string, sentAt: res.body.sentAt as string };
  }

  it('marking read sends the unread messages, oldest first, with their cliMsgId; a later mark names only what is new', async () => {
    const m1 = await inbound('uid-read-1', 'first');
    const m2 = await inbound('uid-read-1', 'second');
    const read = await a.owner.post(`/api/v1/conversations/${m1.conv.id}/read`);
    expect(read.status).toBe(200);
    expect(read.body.conversation.unreadCount).toBe(0);

    const [rec] = await eventually(async () => ((await seenByAgent()).length ? seenByAgent() : undefined));
    expect(rec).toEqual({
      threadId: 'uid-read-1',
      threadType: 'user',
      messages: [
        { chatnetMessageId: m1.chatnetMessageId, cliMsgId: m1.cliMsgId, fromUid: 'uid-read-1', sentAt: new Date(m1.sentAt).toISOString() },
        { chatnetMessageId: m2.chatnetMessageId, cliMsgId: m2.cliMsgId, fromUid: 'uid-read-1', sentAt: new Date(m2.sentAt).toISOString() },
      ],
      at: expect.any(String),
    });

    // Read again with nothing new: nothing goes to the network. A new message read afterwards goes alone.
    expect((await a.owner.post(`/api/v1/conversations/${m1.conv.id}/read`)).status).toBe(200);
    const m3 = await inbound('uid-read-1', 'third');
    expect((await a.owner.post(`/api/v1/conversations/${m1.conv.id}/read`)).status).toBe(200);
    const list = await eventually(async () => {
      const l = await seenByAgent();
      return l.length >= 2 ? l : undefined;
    });
    expect(list).toHaveLength(2);
    expect(list[0].messages.map((m: any) => [m.chatnetMessageId, m.cliMsgId])).toEqual([[m3.chatnetMessageId, m3.cliMsgId]]);
  });

  it("bulk read tells the network for each conversation it marked; another org's conversation in the request is neither marked nor sent", async () => {
    const x = await inbound('uid-bulk-1', 'bulk one');
    const y1 = await inbound('uid-bulk-2', 'bulk two');
    const y2 = await inbound('uid-bulk-2', 'bulk two again');
    const theirs = await inbound('uid-bulk-b', 'for org B', b, accountB);
    const before = (await seenByAgent()).length;

    const res = await a.owner.post('/api/v1/conversations/bulk', { ids: [x.conv.id, y1.conv.id, theirs.conv.id], action: 'read' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 2, failed: [{ id: theirs.conv.id, code: 'not_found' }] });
    for (const id of [x.conv.id, y1.conv.id]) expect((await a.owner.get(`/api/v1/conversations/${id}`)).body.conversation.unreadCount).toBe(0);

    const list = await eventually(async () => {
      const l = await seenByAgent();
      return l.length >= before + 2 ? l : undefined;
    });
    expect(list).toHaveLength(before + 2);
    const ids = (m: { chatnetMessageId: string; cliMsgId: string }) => [m.chatnetMessageId, m.cliMsgId];
    const byThread = Object.fromEntries(list.slice(0, 2).map((r) => [r.threadId, r.messages.map(ids)]));
    expect(byThread).toEqual({ 'uid-bulk-1': [ids(x)], 'uid-bulk-2': [ids(y1), ids(y2)] });

    // Org B's conversation stays unread and its account told the network nothing.
    expect((await b.owner.get(`/api/v1/conversations/${theirs.conv.id}`)).body.conversation.unreadCount).toBe(1);
    expect(await seenByAgent(b, accountB)).toEqual([]);

    // A second bulk read finds nothing new: nothing more reaches the network. The marker is a read that does: once
    // the network has it, a call the bulk read started before it would have arrived too.
    expect((await a.owner.post('/api/v1/conversations/bulk', { ids: [x.conv.id, y1.conv.id], action: 'read' })).body).toEqual({
      updated: 2,
      failed: [],
    });
    const marker = await inbound('uid-bulk-marker', 'marker');
    expect((await a.owner.post(`/api/v1/conversations/${marker.conv.id}/read`)).status).toBe(200);
    const after = await eventually(async () => {
      const l = await seenByAgent();
      return l[0]?.threadId === 'uid-bulk-marker' ? l : undefined;
    });
    expect(after).toHaveLength(before + 3);
  });

  it('another org cannot see what the account marked seen (404); the route needs a token (401) and sandbox control (403)', async () => {
    const other = await b.owner.get(`/sandbox/accounts/${accountId}/seen-by-agent`);
    expect(other.status).toBe(404);
    expect((await client(stack.url).get(`/sandbox/accounts/${accountId}/seen-by-agent`)).status).toBe(401);
    const agent = await addUser(client(stack.url), a.owner, 'agent');
    expect((await agent.client.get(`/sandbox/accounts/${accountId}/seen-by-agent`)).status).toBe(403);
    expect((await a.owner.get('/sandbox/accounts/not-an-id/seen-by-agent')).status).toBe(404);
  });

  it('marking read while the account is offline still succeeds; the network is told nothing', async () => {
    const m = await inbound('uid-read-2', 'while online');
    const before = (await seenByAgent()).length;
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/drop`, { expireSession: true })).status).toBe(200);
    await eventually(async () => (await a.owner.get(`/api/v1/chatnet-accounts/${accountId}`)).body.status === 'disconnected' || undefined);
    const read = await a.owner.post(`/api/v1/conversations/${m.conv.id}/read`);
    expect(read.status).toBe(200);
    expect(read.body.conversation.unreadCount).toBe(0);
    // The marker: back online, a read of a new message reaches the network; the offline read, which the network
    // was not told, is not waiting to be told either (nothing of it arrives before or with the marker).
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    await eventually(
      async () => (await a.owner.post(`/sandbox/accounts/${accountId}/scan`, { chatnetUid: '9000000001' })).status === 200 || undefined,
    );
    const marker = await inbound('uid-read-3', 'after reconnecting');
    expect((await a.owner.post(`/api/v1/conversations/${marker.conv.id}/read`)).status).toBe(200);
    const after = await eventually(async () => {
      const l = await seenByAgent();
      return l[0]?.threadId === 'uid-read-3' ? l : undefined;
    });
    expect(after).toHaveLength(before + 1);
  });
});
