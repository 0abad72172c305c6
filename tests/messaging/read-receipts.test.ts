import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// Read receipts: the connector's chatnet.seen (the network says the recipient read messages the account
// sent) moves those outbound messages, and every earlier one of the thread, from sent to seen (never back,
// once), shows them as seen in the API and announces message.seen.
describe('read receipts: chatnet.seen → messages seen → message.seen', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-seen-'));

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
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A conversation started by a contact on a fresh account, and `n` replies sent into it through the API. */
  async function threadWithReplies(n: number, opts: { threadType?: 'user' | 'group'; threadId?: string } = {}) {
    const accountId = connector.account(a.orgId);
    const uid = `uid-${randomUUID().slice(0, 8)}`;
    const threadType = opts.threadType ?? 'user';
    const threadId = opts.threadId ?? uid;
    await bus.inbound(a.orgId, { accountId, fromUid: uid, threadId, threadType, fromName: 'Lan Nguyen', content: 'Hi there' });
    const conv = await eventually(async () => (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data[0]);
    const replies: Array<{ id: string; networkId: string }> = [];
    for (let i = 1; i <= n; i++) {
      const res = await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: `reply ${i}` });
      expect(res.status).toBe(201);
      const networkId = connector.sent.find((s) => s.accountId === accountId && s.content === `reply ${i}`)!.chatnetMessageId;
      replies.push({ id: res.body.id, networkId });
    }
    return { accountId, conv, threadId, threadType, replies };
  }

  const messagesOf = async (convId: string, owner = a.owner) => (await owner.get(`/api/v1/conversations/${convId}?limit=100`)).body.messages as any[];
  const byId = (list: any[], id: string) => list.find((m) => m.id === id);
  const seenEvents = (conversationId: string) => bus.of('message.seen').filter((e) => e.data.conversationId === conversationId);

  function receipt(
    orgId: string,
    t: { accountId: string; threadId: string; threadType: string },
    chatnetMessageIds: string[],
    extra: object = {},
    eventId?: ReturnType<typeof randomUUID>,
  ) {
    const data = {
      accountId: t.accountId,
      threadId: t.threadId,
      threadType: t.threadType,
      chatnetMessageIds,
      seenByUid: t.threadId,
      seenAt: new Date().toISOString(),
      ...extra,
    };
    return bus.publish('chatnet.seen', orgId, data, eventId);
  }

  it('a receipt for a reply marks it and every earlier reply seen, later ones stay sent; message.seen names them', async () => {
    const t = await threadWithReplies(3);
    const [r1, r2, r3] = t.replies;
    const seenAt = new Date().toISOString();
    await receipt(a.orgId, t, [r2.networkId], { seenAt });

    const event = await eventually(async () => seenEvents(t.conv.id)[0]);
    expect(event.orgId).toBe(a.orgId);
    expect(event.data).toEqual({
      messageIds: [r1.id, r2.id],
      conversationId: t.conv.id,
      contactId: t.conv.contactId,
      chatnetAccountId: t.accountId,
      assigneeId: null,
      seenAt,
      messages: [
        { id: r1.id, source: 'ui', sentAt: expect.any(String) },
        { id: r2.id, source: 'ui', sentAt: expect.any(String) },
      ],
    });

    const list = await messagesOf(t.conv.id);
    // status is the delivery state the recipient's side reports; isRead stays the inbox's own read flag.
    expect(byId(list, r1.id)).toEqual(expect.objectContaining({ status: 'seen', seenAt, isRead: true, isFromChatnet: false }));
    expect(byId(list, r2.id)).toEqual(expect.objectContaining({ status: 'seen', seenAt }));
    expect(byId(list, r3.id).status).toBe('sent');
    expect(byId(list, r3.id).seenAt).toBeNull();
    const inbound = list.find((m) => m.isFromChatnet);
    expect(inbound.status).toBe('sent');
    expect(inbound.seenAt).toBeNull();
  });

  it('applies once: the same event redelivered, the same receipt again and an older receipt change nothing', async () => {
    const t = await threadWithReplies(2);
    const [r1, r2] = t.replies;
    const eventId = randomUUID();
    const firstSeenAt = new Date().toISOString();
    await receipt(a.orgId, t, [r2.networkId], { seenAt: firstSeenAt }, eventId);
    await eventually(async () => seenEvents(t.conv.id)[0]);
    // Redelivery of the same event, the network repeating the receipt later, and a receipt for the older reply.
    await receipt(a.orgId, t, [r2.networkId], { seenAt: firstSeenAt }, eventId);
    await receipt(a.orgId, t, [r2.networkId]);
    await receipt(a.orgId, t, [r1.networkId]);
    // A third reply and its receipt: whatever order the consumer takes them in, this is the only other message.seen.
    const r3 = await a.owner.post(`/api/v1/conversations/${t.conv.id}/messages`, { content: 'reply 3' });
    const r3Network = connector.sent.find((s) => s.accountId === t.accountId && s.content === 'reply 3')!.chatnetMessageId;
    await receipt(a.orgId, t, [r3Network]);
    await eventually(async () => seenEvents(t.conv.id).some((e) => e.data.messageIds.includes(r3.body.id)));
    await eventually(async () => (await messagesOf(t.conv.id)).every((m) => m.isFromChatnet || m.status === 'seen'));

    const events = seenEvents(t.conv.id);
    expect(events.map((e) => e.data.messageIds)).toEqual([[r1.id, r2.id], [r3.body.id]]);
    const list = await messagesOf(t.conv.id);
    // Never moved back, and the first receipt's time is kept.
    expect(byId(list, r1.id)).toEqual(expect.objectContaining({ status: 'seen', seenAt: firstSeenAt }));
    expect(byId(list, r2.id)).toEqual(expect.objectContaining({ status: 'seen', seenAt: firstSeenAt }));
  });

  it('group threads: a member reading a later message of the group sees the replies before it', async () => {
    const t = await threadWithReplies(1, { threadType: 'group', threadId: `grp-${randomUUID().slice(0, 8)}` });
    // Another member writes after our reply; the receipt names that newer message.
    const later = await bus.inbound(a.orgId, {
      accountId: t.accountId,
      fromUid: 'uid-member',
      threadId: t.threadId,
      threadType: 'group',
      content: 'me too',
    });
    await eventually(async () => (await messagesOf(t.conv.id)).some((m) => m.content === 'me too'));
    await receipt(a.orgId, t, [later.chatnetMessageId], { seenByUid: 'uid-other-member' });
    const event = await eventually(async () => seenEvents(t.conv.id)[0]);
    expect(event.data.messageIds).toEqual([t.replies[0].id]);
    expect(byId(await messagesOf(t.conv.id), t.replies[0].id).status).toBe('seen');
  });

  it('receipts stay in their org, and unknown threads, unknown ids or malformed events change nothing', async () => {
    const t = await threadWithReplies(1);
    const [r1] = t.replies;
    // Org B's event naming org A's account and network id; a thread without a conversation; ids never stored; no ids;
    // an account that is no id (dead-lettered by its schema, with the field named).
    await receipt(b.orgId, t, [r1.networkId]);
    await receipt(a.orgId, { ...t, threadId: 'no-such-thread' }, [r1.networkId]);
    await receipt(a.orgId, t, ['net-unknown']);
    await receipt(a.orgId, t, []);
    const malformed = await receipt(a.orgId, { ...t, accountId: 'not-an-id' }, [r1.networkId]);
    const parked = await bus.deadLettered('seen');
    expect(parked.event.id).toBe(malformed);
    expect(parked.headers['x-crm-error']).toBe('chatnet.seen v1 data does not match its schema: accountId: Invalid GUID');
    // Then a real one, applied like any other.
    const r2 = await a.owner.post(`/api/v1/conversations/${t.conv.id}/messages`, { content: 'reply 2' });
    const r2Network = connector.sent.find((s) => s.accountId === t.accountId && s.content === 'reply 2')!.chatnetMessageId;
    await receipt(a.orgId, t, [r2Network]);
    const event = await eventually(async () => seenEvents(t.conv.id)[0]);
    // r1 is seen only now, through r2's receipt (read up to r2); nothing before touched it.
    expect(event.data.messageIds).toEqual([r1.id, r2.body.id]);
    expect(seenEvents(t.conv.id)).toHaveLength(1);
    expect(bus.of('message.seen').filter((e) => e.orgId === b.orgId)).toEqual([]);
    // Org B cannot read org A's conversation.
    expect((await b.owner.get(`/api/v1/conversations/${t.conv.id}`)).status).toBe(404);
  });
});
