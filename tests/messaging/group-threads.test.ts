import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { orgWithKey } from './support';

// Issue #15: a group thread is a conversation, not a contact. Through the gateway with the sandbox network, the real
// connector, messaging, crm and automation: the group's name from the network names the conversation (and follows a
// rename), each sender is a crm contact linked on their messages, no "Group …" contact exists, and a campaign to
// every contact never reaches the group.
describe('group threads: conversations named after the group, senders as contacts, never a campaign target', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let accountId: string;
  let groupConvId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-groups-'));
  const GROUP = 'grp-4500000000000000077';

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging', 'automation'],
      serviceEnv: {
        messaging: { ATTACHMENTS_DIR: dir, SEND_LIMITS: 'total=100000/day,1000/1s;campaign=100000/day,1000/1s' },
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' },
        automation: { CAMPAIGN_POLL_MS: '100', CAMPAIGN_SEND_PER_MINUTE: '12000' },
      },
    });
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    accountId = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' })).body.id;
    const login = await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`);
    expect([login.status, login.body]).toEqual([200, expect.anything()]);
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const groupMessage = (fromUid: string, fromName: string, content: string, groupName?: string) =>
    a.owner.post(`/sandbox/accounts/${accountId}/inbound`, {
      fromUid,
      fromName,
      content,
      threadType: 'group',
      threadId: GROUP,
      ...(groupName ? { groupName } : {}),
    });
  const groupConversation = async () => (await a.owner.get('/api/v1/conversations?type=group')).body.data[0];
  const searchNames = async (term: string) =>
    ((await a.owner.get(`/api/v1/conversations?search=${encodeURIComponent(term)}`)).body.data as any[]).map((c) => c.contactName);
  const contactsNamed = async (term: string) => (await a.owner.get(`/api/v1/contacts?search=${encodeURIComponent(term)}`)).body.data as any[];

  it('a group message names the conversation after the group; its sender is a crm contact linked on the message; no group contact', async () => {
    const res = await groupMessage('uid-lan-member', 'Lan Thành Viên', 'Shop ơi, còn áo không?', 'Hội chợ mùa xuân');
    expect(res.status).toBe(200);
    const conv = await eventually(groupConversation);
    groupConvId = conv.id;
    expect(conv).toEqual(
      expect.objectContaining({ type: 'group', threadId: GROUP, contactName: 'Hội chợ mùa xuân', contactId: null, messageCount: 1 }),
    );
    expect(await searchNames('mua xuan')).toEqual(['Hội chợ mùa xuân']);

    const detail = await a.owner.get(`/api/v1/conversations/${groupConvId}`);
    expect(detail.body.conversation).toEqual(expect.objectContaining({ contactId: null, contactName: 'Hội chợ mùa xuân', type: 'group' }));
    const [message] = detail.body.messages;
    expect(message).toEqual(
      expect.objectContaining({ senderUid: 'uid-lan-member', senderName: 'Lan Thành Viên', senderContactId: expect.any(String) }),
    );
    const sender = await contactsNamed('Lan Thành Viên');
    expect(sender.map((c) => [c.id, c.chatnetUid, c.threadTypes])).toEqual([[message.senderContactId, 'uid-lan-member', ['group']]]);

    // Nothing in crm stands for the group itself.
    expect(await contactsNamed('Group')).toEqual([]);
    expect(await contactsNamed(GROUP)).toEqual([]);
    expect((await a.owner.get('/api/v1/contacts')).body.data.map((c: any) => c.name)).toEqual(['Lan Thành Viên']);
  });

  it('a new name from the network renames the conversation and its search; a message without a name keeps it', async () => {
    expect((await groupMessage('uid-hoa-member', 'Hoa Thành Viên', 'Mình cũng hỏi', 'Khách quen Quận 1')).status).toBe(200);
    await eventually(async () => (await groupConversation()).contactName === 'Khách quen Quận 1');
    expect(await searchNames('quen quan')).toEqual(['Khách quen Quận 1']);
    expect(await searchNames('mua xuan')).toEqual([]);

    expect((await groupMessage('uid-lan-member', 'Lan Thành Viên', 'Cảm ơn shop')).status).toBe(200);
    const conv = await eventually(async () => {
      const c = await groupConversation();
      return c.messageCount === 3 && c;
    });
    expect(conv.contactName).toBe('Khách quen Quận 1');
    // Each message links its own sender; the same person is the same contact.
    const messages = (await a.owner.get(`/api/v1/conversations/${groupConvId}`)).body.messages as any[];
    const bySender = new Map(messages.map((m) => [m.senderUid, m.senderContactId]));
    expect(new Set(messages.map((m) => m.senderContactId)).size).toBe(2);
    expect(bySender.get('uid-hoa-member')).toBe((await contactsNamed('Hoa Thành Viên'))[0].id);
  });

  it('400 names groupName on a user thread or when too long; the sandbox needs a token; another org sees nothing', async () => {
    const user = await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-x', content: 'hi', groupName: 'Not a group' });
    expect(user.status).toBe(400);
    expect(user.body.error.details.map((d: any) => d.field)).toEqual(['groupName']);
    const long = await groupMessage('uid-x', 'X', 'hi', 'n'.repeat(201));
    expect(long.status).toBe(400);
    expect(long.body.error.details.map((d: any) => d.field)).toEqual(['groupName']);

    expect((await client(stack.url).post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-x', content: 'hi' })).status).toBe(401);
    expect(
      (
        await b.owner.post(`/sandbox/accounts/${accountId}/inbound`, {
          fromUid: 'uid-x',
          content: 'hi',
          threadType: 'group',
          threadId: GROUP,
          groupName: 'Taken over',
        })
      ).status,
    ).toBe(404);
    expect((await b.owner.get(`/api/v1/conversations/${groupConvId}`)).status).toBe(404);
    expect((await b.owner.get('/api/v1/conversations?search=quen')).body.data).toEqual([]);
    expect((await groupConversation()).contactName).toBe('Khách quen Quận 1');
  });

  it('a campaign to every contact reaches the one-to-one customer, never the group (its members have no conversation of their own)', async () => {
    expect(
      (await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-solo', fromName: 'Solo Customer', content: 'Hello' })).status,
    ).toBe(200);
    await eventually(async () => (await a.owner.get('/api/v1/contacts')).body.pagination.total === 3);

    const list = await a.owner.post('/api/v1/customer-lists', { name: 'Everyone', criteria: { filters: [] } });
    expect(list.status).toBe(201);
    const template = (await a.owner.post('/api/v1/automation/templates', { name: 'Promo', content: 'Chào {{name}}!' })).body;
    const campaign = await a.owner.post('/api/v1/campaigns', { name: 'To everyone', listId: list.body.id, templateId: template.id });
    expect(campaign.status).toBe(201);
    expect((await a.owner.post(`/api/v1/campaigns/${campaign.body.id}/activate`)).status).toBe(200);
    const done = await eventually(
      async () => {
        const c = (await a.owner.get(`/api/v1/campaigns/${campaign.body.id}`)).body;
        return c.status === 'completed' ? c : undefined;
      },
      60_000,
      200,
    );
    expect(done.counts).toEqual(expect.objectContaining({ total: 3, sent: 1, skipped: 2, failed: 0 }));

    const sent = (await a.owner.get(`/sandbox/accounts/${accountId}/sent`)).body.data as Array<{
      threadId: string;
      threadType: string;
      content: string;
    }>;
    expect(sent.map((m) => [m.threadType, m.threadId, m.content])).toEqual([['user', 'uid-solo', 'Chào Solo Customer!']]);
  }, 90_000);
});
