import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { status } from '@crm/grpc-kit';
import { eventually, freePort } from '@crm/testing';
import { processedBy } from '../support/consumers';
import { eventContactData } from '../support/event-data';
import { connectPatiently } from '../support/patient-client';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, messagingClient, orgWithKey } from './support';

// Messages are never lost because crm is down: the conversation is stored without a contact and linked
// once crm answers. Contact changes in crm flow into the inbox; other services read conversations over gRPC.
describe('contacts from crm, and the RPCs other services call', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let grpc: ReturnType<typeof messagingClient>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let accountA: string;
  let accountB: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-contacts-'));

  beforeAll(async () => {
    connector = await fakeConnector();
    // crm's address is known but nothing listens there yet.
    crm = await fakeCrm(await freePort());
    stack = await startStack({
      services: ['messaging'],
      serviceEnv: {
        messaging: {
          CONNECTOR_ADDR: connector.addr,
          CRM_ADDR: crm.addr,
          ATTACHMENTS_DIR: dir,
          CRM_DEADLINE_MS: '500',
          EVENT_RETRY_DELAYS_MS: '200,400,800',
        },
      },
    });
    bus = await eventBus(stack);
    grpc = messagingClient(stack);
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    accountA = connector.account(a.orgId);
    accountB = connector.account(b.orgId);
  }, 60_000);
  afterAll(async () => {
    grpc?.close();
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  let convId: string;

  it('with crm unreachable, an inbound message is stored at once, in a conversation without a contact', async () => {
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-offline', fromName: 'Offline Olga', content: 'Hello?' });
    const conv = await eventually(async () => (await a.owner.get('/api/v1/conversations')).body.data[0]);
    convId = conv.id;
    expect(conv).toEqual(expect.objectContaining({ contactId: null, contactName: 'Offline Olga', messageCount: 1 }));
    expect((await a.owner.get('/api/v1/conversations?search=olga')).body.data).toHaveLength(1);
    const pub = await a.pub.get('/api/public/conversations');
    expect(pub.body.conversations[0].contact).toBeNull();
    const received = await eventually(async () => bus.of('message.received').find((e) => e.data.conversationId === convId));
    expect(received.data.contactId).toBeNull();
  });

  // Org B's inbox holds only this group, so org A's lists above and below stay as they were.
  const groupMessages = async () => {
    const conv = (await b.owner.get('/api/v1/conversations?type=group')).body.data[0];
    return conv ? ((await b.owner.get(`/api/v1/conversations/${conv.id}`)).body.messages as any[]) : [];
  };

  it('with crm unreachable, a group message is stored at once, named after its group, without its sender contact', async () => {
    await bus.inbound(b.orgId, {
      accountId: accountB,
      fromUid: 'uid-member',
      fromName: 'Member Mai',
      threadType: 'group',
      threadId: 'grp-offline',
      groupName: 'Offline club',
      content: 'anyone?',
    });
    const conv = await eventually(async () => (await b.owner.get('/api/v1/conversations?type=group')).body.data[0]);
    expect(conv).toEqual(expect.objectContaining({ contactId: null, contactName: 'Offline club', type: 'group', messageCount: 1 }));
    expect((await groupMessages()).map((m) => [m.senderName, m.senderContactId])).toEqual([['Member Mai', null]]);
  });

  it('once crm is reachable the conversation is linked to its contact by the retrying consumer', async () => {
    await crm.up();
    // The group's sender too (the group itself never: it is no contact).
    const sender = await eventually(async () => (await groupMessages()).find((m) => m.senderContactId), 20_000, 200);
    expect(sender.senderContactId).toBe(crm.contacts.get(`${b.orgId}/uid-member`)!.id);
    expect(crm.upserts.filter((u) => u.chatnetUid === 'grp-offline')).toEqual([]);
    expect((await b.owner.get('/api/v1/conversations?type=group')).body.data[0].contactId).toBeNull();
    const linked = await eventually(
      async () => {
        const c = (await a.owner.get(`/api/v1/conversations/${convId}`)).body.conversation;
        return c.contactId && c;
      },
      20_000,
      200,
    );
    const contact = crm.contacts.get(`${a.orgId}/uid-offline`)!;
    expect(linked.contactId).toBe(contact.id);
    expect(crm.upserts.filter((u) => u.chatnetUid === 'uid-offline')).toHaveLength(1);
  });

  it('contact.updated from crm refreshes name, avatar and phone in every conversation of the contact', async () => {
    const contact = crm.contacts.get(`${a.orgId}/uid-offline`)!;
    await bus.publish('contact.updated', a.orgId, {
      contact: eventContactData({ id: contact.id, name: 'Olga Petrova', phone: '+84911111111', avatar: 'https://cdn.example/olga.png', email: '' }),
      changes: ['name', 'phone', 'avatar'],
    });
    const conv = await eventually(async () => {
      const c = (await a.owner.get(`/api/v1/conversations/${convId}`)).body.conversation;
      return c.contactName === 'Olga Petrova' && c;
    });
    expect(conv.contactAvatar).toBe('https://cdn.example/olga.png');
    const pub = (await a.pub.get('/api/public/conversations')).body.conversations[0];
    expect(pub.contact).toEqual({ id: contact.id, fullName: 'Olga Petrova', phone: '+84911111111', avatarUrl: 'https://cdn.example/olga.png' });
    // The same event under another org's id changes nothing.
    await bus.publish('contact.updated', b.orgId, { contact: eventContactData({ id: contact.id, name: 'Hijacked' }), changes: ['name'] });
    await bus.publish('contact.updated', a.orgId, {
      contact: eventContactData({ id: contact.id, name: 'Olga P.', phone: '+84911111111', avatar: 'https://cdn.example/olga.png' }),
      changes: ['name'],
    });
    await eventually(async () => (await a.owner.get(`/api/v1/conversations/${convId}`)).body.conversation.contactName === 'Olga P.');
    // An update that changes none of the copied fields (a network identity linked) leaves the row unwritten.
    const db = await connectPatiently(stack.databaseUrl('messaging'));
    try {
      const version = async () => (await db.query('SELECT xmin::text AS v FROM conversations WHERE id = $1', [convId])).rows[0].v;
      const before = await version();
      const linked = randomUUID();
      const same = { name: 'Olga P.', phone: '+84911111111', avatar: 'https://cdn.example/olga.png' };
      await bus.publish(
        'contact.updated',
        a.orgId,
        { contact: eventContactData({ id: contact.id, ...same, chatnetUid: 'uid-x' }), changes: ['chatnetUid'] },
        linked,
      );
      await processedBy(db, `${stack.env.EVENTS_EXCHANGE}.messaging.contacts`, [linked]);
      expect(await version()).toBe(before);
    } finally {
      await db.end();
    }
  });

  it('ContactConversations and LatestConversationForContact answer for the org of the caller only', async () => {
    const contactId = crm.contacts.get(`${a.orgId}/uid-offline`)!.id;
    const list = await grpc.ContactConversations({ contactId }, { orgId: a.orgId });
    expect(list.conversations).toEqual([{ id: convId, chatnetAccountId: accountA, messageCount: 1, lastMessageAt: expect.any(String) }]);
    expect((await grpc.ContactConversations({ contactId }, { orgId: b.orgId })).conversations).toEqual([]);
    expect((await grpc.ContactConversations({ contactId: 'nope' }, { orgId: a.orgId })).conversations).toEqual([]);

    const latest = await grpc.LatestConversationForContact({ contactId }, { orgId: a.orgId });
    expect(latest.conversation).toEqual(
      expect.objectContaining({ id: convId, contactId, chatnetAccountId: accountA, type: 'user', status: 'active' }),
    );
    expect((await grpc.LatestConversationForContact({ contactId }, { orgId: b.orgId })).conversation).toBeNull();
  });

  it('LatestConversationsForContacts answers LatestConversationForContact for many contacts at once, for the caller’s org only', async () => {
    const contactId = crm.contacts.get(`${a.orgId}/uid-offline`)!.id;
    const without = '00000000-0000-4000-8000-000000000001';
    const ids = [contactId.toUpperCase(), without, 'nope'];
    expect((await grpc.LatestConversationsForContacts({ contactIds: ids }, { orgId: a.orgId })).conversations).toEqual([
      { contactId, conversationId: convId, chatnetAccountId: accountA },
    ]);
    expect((await grpc.LatestConversationsForContacts({ contactIds: ids }, { orgId: b.orgId })).conversations).toEqual([]);
    await expect(
      grpc.LatestConversationsForContacts({ contactIds: Array.from({ length: 1001 }, () => contactId) }, { orgId: a.orgId }),
    ).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });

  it('GetConversation returns the internal detail shape; another org gets NOT_FOUND', async () => {
    const detail = await grpc.GetConversation({ id: convId, page: 1, limit: 10 }, { orgId: a.orgId });
    expect(detail.conversation?.id).toBe(convId);
    expect(detail.messages).toHaveLength(1);
    expect(detail.pagination).toEqual({ total: 1, page: 1, limit: 10, pages: 1 });
    const err = await grpc.GetConversation({ id: convId }, { orgId: b.orgId }).catch((e) => e);
    expect(err.code).toBe(5);
  });

  it('contact.deleted unlinks the conversation, and the next message links a new contact', async () => {
    const old = crm.contacts.get(`${a.orgId}/uid-offline`)!;
    await bus.publish('contact.deleted', a.orgId, { id: old.id });
    await eventually(async () => (await a.owner.get(`/api/v1/conversations/${convId}`)).body.conversation.contactId === null);
    expect((await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages).toHaveLength(1);
    expect((await grpc.ContactConversations({ contactId: old.id }, { orgId: a.orgId })).conversations).toEqual([]);
    crm.contacts.delete(`${a.orgId}/uid-offline`);
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-offline', fromName: 'Olga again', content: 'me again' });
    const relinked = await eventually(async () => {
      const c = (await a.owner.get(`/api/v1/conversations/${convId}`)).body.conversation;
      return c.contactId && c;
    });
    expect(relinked.contactId).toBe(crm.contacts.get(`${a.orgId}/uid-offline`)!.id);
    expect(relinked.contactId).not.toBe(old.id);
  });

  it('contact.deleted unlinks a group sender from their messages', async () => {
    const member = crm.contacts.get(`${b.orgId}/uid-member`)!;
    // Another org's delete of the same id changes nothing.
    await bus.publish('contact.deleted', a.orgId, { id: member.id });
    await bus.publish('contact.deleted', b.orgId, { id: member.id });
    await eventually(async () => (await groupMessages())[0].senderContactId === null);
  });

  it('a burst on new threads: each thread gets one conversation and one crm lookup, its messages stored and announced in order', async () => {
    const threads = ['uid-burst-1', 'uid-burst-2', 'uid-burst-3', 'uid-burst-4'];
    // Interleaved, as a busy account receives them; published back to back so they share batches.
    const sends: Array<Promise<unknown>> = [];
    for (let n = 0; n < 10; n++) {
      for (const fromUid of threads)
        sends.push(bus.inbound(a.orgId, { accountId: accountA, fromUid, fromName: fromUid, content: `${fromUid} #${n}` }));
    }
    await Promise.all(sends);
    const burst = () => bus.of('message.received').filter((e) => threads.includes(e.data.threadId));
    await eventually(async () => burst().length >= 40, 15_000);

    for (const fromUid of threads) {
      const announced = burst().filter((e) => e.data.threadId === fromUid);
      expect(announced.map((e) => e.data.content)).toEqual(Array.from({ length: 10 }, (_, n) => `${fromUid} #${n}`));
      expect(new Set(announced.map((e) => e.data.conversationId)).size).toBe(1);
      expect(announced.every((e) => e.data.contactId === crm.contacts.get(`${a.orgId}/${fromUid}`)!.id)).toBe(true);
      expect(crm.upserts.filter((u) => u.chatnetUid === fromUid)).toHaveLength(1);
      const conv = await a.owner.get(`/api/v1/conversations/${announced[0].data.conversationId}`);
      expect(conv.body.conversation.messageCount).toBe(10);
    }
  });

  it('SendMessage without an org in the metadata is refused', async () => {
    const err = await grpc.SendMessage({ conversationId: convId, content: 'x' }, {}).catch((e) => e);
    expect(err.code).toBe(16);
  });
});
