import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { member } from './inbox-support';
import { orgWithKey } from './support';

// Issue #26 item 2: an agent (or an integration with the API key) writes first to someone who never wrote: a lead
// imported with a phone number, a bare number, or a network uid. Everything real but the chat network's far end.
describe('POST /api/v1/conversations and /api/public/conversations: starting a conversation', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let account: string;
  let otherOrgAccount: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'start-conv-'));

  async function connectedAccount(owner: Client, name: string): Promise<string> {
    const id = (await owner.post('/api/v1/chatnet-accounts', { displayName: name })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${id}/scan`, { chatnetUid: `acct-${randomUUID().slice(0, 8)}` })).body.status).toBe('connected');
    return id;
  }
  const sentTo = async (owner: Client, accountId: string, threadId: string) =>
    ((await owner.get(`/sandbox/accounts/${accountId}/sent`)).body.data as Array<{ threadId: string; content: string }>).filter(
      (m) => m.threadId === threadId,
    );

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      serviceEnv: {
        messaging: { ATTACHMENTS_DIR: dir, SEND_LIMITS: 'total=100000/day,1000/1s;ui=100000/day,1000/1s;public_api=100000/day,1000/1s' },
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500', LOOKUP_PER_ACCOUNT_PER_MINUTE: '1000' },
      },
    });
    a = await orgWithKey(stack.url, 'Hoa Mai');
    b = await orgWithKey(stack.url, 'Other shop');
    account = await connectedAccount(a.owner, 'Hoa Mai line');
    otherOrgAccount = await connectedAccount(b.owner, 'Other line');
    const phones = [
      { phone: '+84912345678', chatnetUid: 'u-mai', displayName: 'Chị Mai' },
      { phone: '+84912000001', chatnetUid: 'u-ba', displayName: 'Anh Ba' },
      { phone: '+84912000002', chatnetUid: 'u-race', displayName: 'Cô Tư' },
      { phone: '+84912000003', chatnetUid: 'u-shy', displayName: 'Anh Lâm', acceptsStrangers: false },
      { phone: '+84912000004', chatnetUid: 'u-agent', displayName: 'Chú Năm' },
      { phone: '+84912000005', chatnetUid: 'u-api', displayName: 'Bà Sáu' },
      { phone: '+84912000006', chatnetUid: 'u-send', displayName: 'Em Bảy' },
    ];
    expect((await a.owner.post('/sandbox/network/phones', { phones })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a lead imported with a phone: 201 with a new user conversation linked to the lead, assigned to the caller, and the first message sent', async () => {
    const lead = (await a.owner.post('/api/v1/contacts', { name: 'Mai (lead)', phone: '0912 345 678', status: 'lead' })).body;
    const res = await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, contactId: lead.id, content: 'Chào chị Mai!' });
    expect(res.status).toBe(201);
    expect(res.body.conversation).toEqual(
      expect.objectContaining({
        type: 'user',
        contactId: lead.id,
        chatnetAccountId: account,
        threadId: 'u-mai',
        assigneeId: a.user.id,
        contactName: 'Mai (lead)',
      }),
    );
    expect(res.body.message).toEqual(expect.objectContaining({ conversationId: res.body.conversation.id, content: 'Chào chị Mai!', status: 'sent' }));
    expect(await sentTo(a.owner, account, 'u-mai')).toEqual([expect.objectContaining({ content: 'Chào chị Mai!' })]);
    // The lead now carries the identity the lookup found: its next inbound message joins the same contact.
    expect((await a.owner.get(`/api/v1/contacts/${lead.id}`)).body.chatnetUid).toBe('u-mai');

    // Idempotent: again (by contact, phone or uid) answers 200 with the same conversation; no content, no message.
    for (const target of [{ contactId: lead.id }, { phone: '+84 912 345 678' }, { chatnetUid: 'u-mai' }]) {
      const again = await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, ...target });
      expect({ target, status: again.status, id: again.body.conversation?.id, message: again.body.message }).toEqual({
        target,
        status: 200,
        id: res.body.conversation.id,
        message: null,
      });
    }
    expect((await a.owner.get(`/api/v1/conversations?contactId=${lead.id}`)).body.pagination.total).toBe(1);
  });

  it('a bare number nobody has a contact for: a new contact named as the network names them (never the uid)', async () => {
    const res = await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, phone: '0912000001' });
    expect(res.status).toBe(201);
    expect(res.body.message).toBeNull();
    expect(res.body.conversation.contactName).toBe('Anh Ba');
    const contact = (await a.owner.get(`/api/v1/contacts/${res.body.conversation.contactId}`)).body;
    expect(contact).toEqual(expect.objectContaining({ name: 'Anh Ba', phone: '+84912000001', chatnetUid: 'u-ba' }));
  });

  it('two calls at once make one conversation (one 201, one 200) and one contact', async () => {
    const [x, y] = await Promise.all([
      a.owner.post('/api/v1/conversations', { chatnetAccountId: account, phone: '0912000002' }),
      a.owner.post('/api/v1/conversations', { chatnetAccountId: account, chatnetUid: 'u-race' }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 201]);
    expect(x.body.conversation.id).toBe(y.body.conversation.id);
    expect(x.body.conversation.contactId).toBe(y.body.conversation.contactId);
    const contacts = (await a.owner.get('/api/v1/contacts?search=C%C3%B4%20T%C6%B0')).body.data;
    expect(contacts).toHaveLength(1);
  });

  it('400 names contactId without exactly one target; chatnetAccountId is required', async () => {
    for (const body of [{ chatnetAccountId: account }, { chatnetAccountId: account, phone: '0912000001', chatnetUid: 'u-ba' }]) {
      const res = await a.owner.post('/api/v1/conversations', body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('contactId');
    }
    const res = await a.owner.post('/api/v1/conversations', { phone: '0912000001' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('chatnetAccountId');
  });

  it('422 not_on_network naming phone, and no_phone for a contact without one', async () => {
    const res = await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, phone: '0900000009', content: 'hi' });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('not_on_network');
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'phone' })]);
    const nobody = (await a.owner.post('/api/v1/contacts', { name: 'Walk-in, no phone', status: 'lead' })).body;
    const none = await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, contactId: nobody.id });
    expect(none.status).toBe(422);
    expect(none.body.error.code).toBe('no_phone');
    const lead = (await a.owner.post('/api/v1/contacts', { name: 'Not on it', phone: '0900000010' })).body;
    const off = await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, contactId: lead.id });
    expect(off.status).toBe(422);
    expect(off.body.error.details).toEqual([expect.objectContaining({ field: 'phone' })]);
  });

  it('422 friend_required for a user who takes messages only from friends: the conversation exists, empty; once they accept a request the message goes', async () => {
    const res = await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, phone: '0912000003', content: 'Chào anh Lâm' });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('friend_required');
    const list = (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${account}&limit=100`)).body.data as Array<{
      threadId: string;
      messageCount: number;
      id: string;
    }>;
    const empty = list.find((c) => c.threadId === 'u-shy')!;
    expect(empty).toEqual(expect.objectContaining({ messageCount: 0 }));
    expect(await sentTo(a.owner, account, 'u-shy')).toEqual([]);

    expect((await a.owner.post(`/api/v1/chatnet-accounts/${account}/friend-requests`, { chatnetUid: 'u-shy', message: 'Kết bạn nhé' })).status).toBe(
      202,
    );
    expect((await a.owner.post(`/sandbox/accounts/${account}/friend-requests/u-shy/accept`)).status).toBe(200);
    const after = await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, chatnetUid: 'u-shy', content: 'Chào anh Lâm' });
    expect(after.status).toBe(200);
    expect(after.body.conversation.id).toBe(empty.id);
    expect(after.body.message).toEqual(expect.objectContaining({ content: 'Chào anh Lâm' }));
    expect(await sentTo(a.owner, account, 'u-shy')).toHaveLength(1);
  });

  it('404 for another org’s account or contact; 409 account_not_connected', async () => {
    expect((await a.owner.post('/api/v1/conversations', { chatnetAccountId: otherOrgAccount, phone: '0912000001' })).status).toBe(404);
    expect((await a.owner.post('/api/v1/conversations', { chatnetAccountId: randomUUID(), phone: '0912000001' })).status).toBe(404);
    const theirs = (await b.owner.post('/api/v1/contacts', { name: 'Theirs', phone: '0912000001' })).body;
    expect((await a.owner.post('/api/v1/conversations', { chatnetAccountId: account, contactId: theirs.id })).status).toBe(404);
    const idle = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Idle line' })).body.id;
    const res = await a.owner.post('/api/v1/conversations', { chatnetAccountId: idle, phone: '0912000001' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('account_not_connected');
  });

  it('agents under `assigned` visibility: the one who starts it is its assignee and sees it; another agent gets 404 for it', async () => {
    expect((await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' })).status).toBe(200);
    const first = await member(stack.url, a.owner, 'agent', 'first agent');
    const second = await member(stack.url, a.owner, 'agent', 'second agent');
    const res = await first.api.post('/api/v1/conversations', { chatnetAccountId: account, phone: '0912000004', content: 'Chào chú' });
    expect(res.status).toBe(201);
    expect(res.body.conversation.assigneeId).toBe(first.id);
    expect((await first.api.get(`/api/v1/conversations/${res.body.conversation.id}`)).status).toBe(200);
    expect((await first.api.post('/api/v1/conversations', { chatnetAccountId: account, chatnetUid: 'u-agent' })).status).toBe(200);
    const other = await second.api.post('/api/v1/conversations', { chatnetAccountId: account, phone: '0912000004' });
    expect(other.status).toBe(404);
    expect((await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'all' })).status).toBe(200);
  });

  it('the public route with the API key: same body, same answers', async () => {
    const res = await a.pub.post('/api/public/conversations', { chatnetAccountId: account, phone: '0912000005', content: 'Xin chào' });
    expect(res.status).toBe(201);
    expect(res.body.conversation).toEqual(expect.objectContaining({ type: 'user', threadId: 'u-api', contactName: 'Bà Sáu' }));
    expect(res.body.message).toEqual(expect.objectContaining({ content: 'Xin chào' }));
    expect((await a.pub.post('/api/public/conversations', { chatnetAccountId: account, chatnetUid: 'u-api' })).status).toBe(200);
    expect((await a.pub.post('/api/public/conversations', { chatnetAccountId: account })).status).toBe(400);
    expect((await a.pub.post('/api/public/conversations', { chatnetAccountId: otherOrgAccount, phone: '0912000005' })).status).toBe(404);
    expect((await a.pub.post('/api/public/conversations', { chatnetAccountId: account, phone: '0900000011' })).status).toBe(422);
  });

  it('public send to a uid that never wrote names the new contact as the network does', async () => {
    const res = await a.pub.post('/api/public/messages/send', { chatnetAccountId: account, threadId: 'u-send', content: 'Chào em' });
    expect(res.status).toBe(200);
    const conv = (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${account}&limit=100`)).body.data.find(
      (c: { threadId: string }) => c.threadId === 'u-send',
    );
    expect(conv.contactName).toBe('Em Bảy');
    expect((await a.owner.get(`/api/v1/contacts/${conv.contactId}`)).body.name).toBe('Em Bảy');
  });
});
