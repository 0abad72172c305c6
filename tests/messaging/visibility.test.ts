import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { io as connectSocket, Socket } from 'socket.io-client';
import { Pool } from '@crm/db';
import { eventually, testPool } from '@crm/testing';
import { auditEntryFor } from '../support/audit';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { eventBus, fakeConnector, fakeCrm, messagingClient, orgWithKey } from './support';

// Inbox visibility: PUT/GET /api/v1/settings/inbox, and under "assigned" an agent works only the conversations
// assigned to them and the unassigned ones of the accounts whose assignment lists them. Everything else is 404 on
// every route, missing from lists, counts and searches, and silent on the agent's socket. Team leads see all.
describe('inbox visibility: settings, agents under "assigned", sockets', () => {
  let stack: Stack;
  let db: Pool;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let lead: { api: Client; id: string; token: string };
  let admin: { api: Client; id: string };
  let agent: { api: Client; id: string; token: string };
  let agent2: { api: Client; id: string };
  let listedAccount: string;
  let otherAccount: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-vis-'));
  // mine: assigned to agent; theirs: assigned to agent2; pool: unassigned on the account listing agent;
  // elsewhere: unassigned on an account that does not list agent.
  const conv: Record<'mine' | 'theirs' | 'pool' | 'elsewhere', string> = {} as never;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging'],
      serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir } },
    });
    db = testPool(stack.databaseUrl('messaging'), 2);
    bus = await eventBus(stack);
    a = await orgWithKey(stack.url, 'Vis A');
    b = await orgWithKey(stack.url, 'Vis B');
    lead = await member(stack.url, a.owner, 'team_lead', 'vis lead');
    admin = await member(stack.url, a.owner, 'admin', 'vis admin');
    agent = await member(stack.url, a.owner, 'agent', 'vis agent');
    agent2 = await member(stack.url, a.owner, 'agent', 'vis agent two');

    listedAccount = connector.account(a.orgId);
    otherAccount = connector.account(a.orgId);
    // The assignment API is another change's; the table is what visibility reads.
    await db.query(`INSERT INTO account_assignments (org_id, chatnet_account_id, mode, user_ids) VALUES ($1, $2, 'manual', $3)`, [
      a.orgId,
      listedAccount,
      [agent.id, agent2.id],
    ]);
    await bus.inbound(a.orgId, { accountId: listedAccount, fromUid: 'mine', content: 'bao gia mine' });
    await bus.inbound(a.orgId, { accountId: listedAccount, fromUid: 'theirs', content: 'bao gia theirs' });
    await bus.inbound(a.orgId, { accountId: listedAccount, fromUid: 'pool', content: 'hello pool' });
    await bus.inbound(a.orgId, { accountId: otherAccount, fromUid: 'elsewhere', content: 'bao gia elsewhere' });
    const list = await eventually(async () => {
      const res = await a.owner.get('/api/v1/conversations?limit=100');
      return res.body.data.length === 4 ? res.body.data : undefined;
    });
    for (const c of list) conv[c.threadId as keyof typeof conv] = c.id;
    expect((await a.owner.put(`/api/v1/conversations/${conv.mine}/assignee`, { userId: agent.id })).status).toBe(200);
    expect((await a.owner.put(`/api/v1/conversations/${conv.theirs}/assignee`, { userId: agent2.id })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    for (const s of sockets) s.disconnect();
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  const ids = (res: { body: any }) => res.body.data.map((c: any) => c.id).sort();
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const setVisibility = async (value: string) => expect((await a.owner.put('/api/v1/settings/inbox', { agentVisibility: value })).status).toBe(200);

  function socketOf(token: string): Promise<{ socket: Socket; messages: any[] }> {
    return new Promise((resolve, reject) => {
      const messages: any[] = [];
      const socket = connectSocket(stack.url, { auth: { token }, transports: ['websocket'], reconnection: false });
      sockets.push(socket);
      socket.on('message', (m) => messages.push(m));
      socket.on('connect', () => resolve({ socket, messages }));
      socket.on('connect_error', reject);
    });
  }

  it('GET /settings/inbox is "all" by default, for any role', async () => {
    for (const as of [agent.api, lead.api, a.owner]) {
      const res = await as.get('/api/v1/settings/inbox');
      expect(res.status).toBe(200);
      // The other inbox settings (auto-close, out-of-hours, CSAT) are tests/messaging/auto-close.test.ts's.
      expect(res.body).toEqual(expect.objectContaining({ agentVisibility: 'all' }));
    }
  });

  it('under "all" an agent sees every conversation of the org, as before', async () => {
    const list = await agent.api.get('/api/v1/conversations?limit=100');
    expect(ids(list)).toEqual(Object.values(conv).sort());
    expect((await agent.api.get(`/api/v1/conversations/${conv.theirs}`)).status).toBe(200);
    expect((await agent.api.get('/api/v1/conversations/counts')).body.total).toBe(4);
  });

  it('PUT /settings/inbox: 403 for agents and team leads, 400 naming agentVisibility, 200 for admins and owners, audited', async () => {
    for (const as of [agent.api, lead.api]) {
      const res = await as.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' });
      expect(res.status).toBe(403);
    }
    for (const bad of [{}, { agentVisibility: 'mine' }, { agentVisibility: 1 }]) {
      const res = await a.owner.put('/api/v1/settings/inbox', bad);
      expect(res.status).toBe(400);
      expect(fieldOf(res)).toBe('agentVisibility');
    }
    expect((await agent.api.get('/api/v1/settings/inbox')).body.agentVisibility).toBe('all');

    const put = await admin.api.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' });
    expect(put.status).toBe(200);
    expect(put.body).toEqual(expect.objectContaining({ agentVisibility: 'assigned' }));
    expect((await agent.api.get('/api/v1/settings/inbox')).body).toEqual(expect.objectContaining({ agentVisibility: 'assigned' }));
    // Another organization keeps its own setting.
    expect((await b.owner.get('/api/v1/settings/inbox')).body).toEqual(expect.objectContaining({ agentVisibility: 'all' }));

    const entry = await auditEntryFor(a.owner, 'settings.inbox_updated', null);
    expect(entry).toEqual(
      expect.objectContaining({
        actorId: admin.id,
        actorType: 'user',
        resourceType: 'inbox_settings',
        details: { agentVisibility: { from: 'all', to: 'assigned' } },
      }),
    );
  });

  it('under "assigned" an agent lists their own and the unassigned ones of accounts listing them; counts agree', async () => {
    const list = await agent.api.get('/api/v1/conversations?limit=100');
    expect(list.status).toBe(200);
    expect(ids(list)).toEqual([conv.mine, conv.pool].sort());
    expect(list.body.pagination.total).toBe(2);
    expect(ids(await agent.api.get('/api/v1/conversations?assigneeId=unassigned'))).toEqual([conv.pool]);
    // Filtering by another's id finds nothing rather than their conversations.
    expect(ids(await agent.api.get(`/api/v1/conversations?assigneeId=${agent2.id}`))).toEqual([]);
    const counts = await agent.api.get('/api/v1/conversations/counts');
    expect(counts.body).toEqual(expect.objectContaining({ total: 2, mine: 1, unassigned: 1 }));
  });

  it('under "assigned" searches cover only what the agent may see (list search and message search)', async () => {
    expect(ids(await agent.api.get('/api/v1/conversations?search=bao%20gia'))).toEqual([conv.mine]);
    const found = await agent.api.get('/api/v1/messages/search?q=bao%20gia');
    expect(found.status).toBe(200);
    expect(found.body.data.map((m: any) => m.conversationId)).toEqual([conv.mine]);
    expect(found.body.pagination.total).toBe(1);
    expect((await agent.api.get(`/api/v1/messages/search?q=bao%20gia&conversationId=${conv.theirs}`)).status).toBe(404);
    // A team lead's search is not narrowed.
    expect((await lead.api.get('/api/v1/messages/search?q=bao%20gia')).body.pagination.total).toBe(3);
  });

  it('under "assigned" every route answers 404 for a conversation the agent may not see', async () => {
    const folder = await agent.api.post('/api/v1/chat/folders', { name: 'Vis folder' });
    expect(folder.status).toBe(201);
    // Filed by a team lead: the agent may not take them out either.
    expect(
      (await lead.api.post(`/api/v1/chat/folders/${folder.body.id}/conversations`, { conversationIds: [conv.theirs, conv.elsewhere] })).status,
    ).toBe(200);
    const theirMessage = (await lead.api.get(`/api/v1/conversations/${conv.theirs}`)).body.messages[0].id;
    for (const id of [conv.theirs, conv.elsewhere]) {
      const routes: Array<[string, () => Promise<{ status: number; body: any }>]> = [
        ['detail', () => agent.api.get(`/api/v1/conversations/${id}`)],
        ['send', () => agent.api.post(`/api/v1/conversations/${id}/messages`, { content: 'hi' })],
        ['notes list', () => agent.api.get(`/api/v1/conversations/${id}/notes`)],
        ['note create', () => agent.api.post(`/api/v1/conversations/${id}/notes`, { content: 'psst' })],
        ['status', () => agent.api.put(`/api/v1/conversations/${id}/status`, { status: 'closed' })],
        ['assignee', () => agent.api.put(`/api/v1/conversations/${id}/assignee`, { userId: agent.id })],
        ['read', () => agent.api.post(`/api/v1/conversations/${id}/read`)],
        ['unread', () => agent.api.post(`/api/v1/conversations/${id}/unread`)],
        ['archive', () => agent.api.post(`/api/v1/conversations/${id}/archive`)],
        ['close', () => agent.api.post(`/api/v1/conversations/${id}/close`)],
        ['reopen', () => agent.api.post(`/api/v1/conversations/${id}/reopen`)],
        ['folder', () => agent.api.post(`/api/v1/chat/folders/${folder.body.id}/conversations`, { conversationIds: [id] })],
        ['folder removal', () => agent.api.del(`/api/v1/chat/folders/${folder.body.id}/conversations/${id}`)],
      ];
      if (id === conv.theirs)
        routes.push(['message flags', () => agent.api.put(`/api/v1/conversations/${id}/messages/${theirMessage}`, { isRead: true })]);
      for (const [name, call] of routes) {
        const res = await call();
        expect({ name, id, status: res.status }).toEqual({ name, id, status: 404 });
        expect(res.body.error.code).toBe('not_found');
      }
    }
    // Nothing reached the network or changed.
    expect(connector.sent.filter((s) => s.content === 'hi')).toEqual([]);
    const theirs = await lead.api.get(`/api/v1/conversations/${conv.theirs}`);
    expect(theirs.body.conversation).toEqual(expect.objectContaining({ assigneeId: agent2.id, status: 'active' }));
    expect(theirs.body.timeline.filter((t: any) => t.kind === 'note')).toEqual([]);
    expect(theirs.body.conversation.folderIds).toEqual([folder.body.id]);
  });

  it('under "assigned" a bulk request fails with not_found for the conversations the agent may not see', async () => {
    const res = await agent.api.post('/api/v1/conversations/bulk', { ids: [conv.mine, conv.theirs, conv.elsewhere], action: 'read' });
    expect(res.status).toBe(200);
    expect(res.body.updated).toBe(1);
    expect(res.body.failed).toEqual(
      expect.arrayContaining([
        { id: conv.theirs, code: 'not_found' },
        { id: conv.elsewhere, code: 'not_found' },
      ]),
    );
  });

  it('under "assigned" the agent works their own and their account\'s unassigned conversations', async () => {
    expect((await agent.api.get(`/api/v1/conversations/${conv.mine}`)).status).toBe(200);
    expect((await agent.api.get(`/api/v1/conversations/${conv.pool}`)).status).toBe(200);
    expect((await agent.api.post(`/api/v1/conversations/${conv.mine}/messages`, { content: 'on it' })).status).toBe(201);
    expect((await agent.api.post(`/api/v1/conversations/${conv.pool}/notes`, { content: 'mine next' })).status).toBe(201);
    expect((await agent.api.post(`/api/v1/conversations/${conv.pool}/read`)).status).toBe(200);
    expect((await agent.api.get(`/api/v1/messages/search?q=hello&conversationId=${conv.pool}`)).body.data).toHaveLength(1);
  });

  it("ContactConversations (crm's contact detail, called with the user's role) lists only what the agent may see", async () => {
    const grpc = messagingClient(stack);
    try {
      const theirsContact = crm.contacts.get(`${a.orgId}/theirs`)!.id;
      const mineContact = crm.contacts.get(`${a.orgId}/mine`)!.id;
      const asAgent = { orgId: a.orgId, userId: agent.id, role: 'agent' };
      expect((await grpc.ContactConversations({ contactId: theirsContact }, asAgent)).conversations).toEqual([]);
      expect((await grpc.ContactConversations({ contactId: mineContact }, asAgent)).conversations.map((c: any) => c.id)).toEqual([conv.mine]);
      const asLead = { orgId: a.orgId, userId: lead.id, role: 'team_lead' };
      expect((await grpc.ContactConversations({ contactId: theirsContact }, asLead)).conversations.map((c: any) => c.id)).toEqual([conv.theirs]);
    } finally {
      grpc.close();
    }
  });

  it("ContactConversations called at once (a batch of calls, read in one query) keeps each caller's view and org", async () => {
    const grpc = messagingClient(stack);
    try {
      const theirsContact = crm.contacts.get(`${a.orgId}/theirs`)!.id;
      const mineContact = crm.contacts.get(`${a.orgId}/mine`)!.id;
      const asAgent = { orgId: a.orgId, userId: agent.id, role: 'agent' };
      const asLead = { orgId: a.orgId, userId: lead.id, role: 'team_lead' };
      const asOtherOrg = { orgId: b.orgId, userId: b.user.id, role: 'owner' };
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all([
          grpc.ContactConversations({ contactId: theirsContact }, asAgent),
          grpc.ContactConversations({ contactId: mineContact }, asAgent),
          grpc.ContactConversations({ contactId: theirsContact }, asLead),
          grpc.ContactConversations({ contactId: mineContact }, asLead),
          grpc.ContactConversations({ contactId: mineContact }, asOtherOrg),
        ]);
        expect(answers.map((r) => r.conversations.map((c: any) => c.id))).toEqual([[], [conv.mine], [conv.theirs], [conv.mine], []]);
      }
    } finally {
      grpc.close();
    }
  });

  it('team leads and above still see every conversation; another org sees none of them', async () => {
    for (const as of [lead.api, admin.api, a.owner]) {
      expect(ids(await as.get('/api/v1/conversations?limit=100'))).toEqual(Object.values(conv).sort());
      expect((await as.get(`/api/v1/conversations/${conv.theirs}`)).status).toBe(200);
    }
    expect((await lead.api.get('/api/v1/conversations/counts')).body.total).toBe(4);
    expect((await b.owner.get(`/api/v1/conversations/${conv.mine}`)).status).toBe(404);
  });

  it('message events carry assigneeId and chatnetAccountId', async () => {
    const sent = await eventually(async () => bus.of('message.sent').find((e) => e.data.conversationId === conv.mine && e.data.content === 'on it'));
    expect(sent.data).toEqual(expect.objectContaining({ assigneeId: agent.id, chatnetAccountId: listedAccount }));
    await bus.inbound(a.orgId, { accountId: listedAccount, fromUid: 'theirs', content: 'events carry' });
    const received = await eventually(async () => bus.of('message.received').find((e) => e.data.content === 'events carry'));
    expect(received.data).toEqual(expect.objectContaining({ conversationId: conv.theirs, assigneeId: agent2.id, chatnetAccountId: listedAccount }));
    const unassigned = bus.of('message.received').find((e) => e.data.conversationId === conv.pool);
    expect(unassigned?.data.assigneeId).toBeNull();
  });

  it('socket: under "assigned" an agent gets message events only of conversations they may see', async () => {
    const agentSocket = await socketOf(agent.token);
    const leadSocket = await socketOf(lead.token);
    for (const uid of ['theirs', 'elsewhere', 'pool', 'mine']) {
      await bus.inbound(a.orgId, { accountId: uid === 'elsewhere' ? otherAccount : listedAccount, fromUid: uid, content: `socket ${uid}` });
    }
    const socketInbound = (list: any[]) =>
      list.filter((m) => m.type === 'message.received' && String(m.content).startsWith('socket ')).map((m) => m.conversationId);
    // The lead hears all four: the gateway has routed each of them. Then one more message the agent may see: a
    // socket delivers in order, so once the agent has it, nothing routed to them before it is still on its way.
    await eventually(async () => (socketInbound(leadSocket.messages).length === 4 ? true : undefined));
    await bus.inbound(a.orgId, { accountId: listedAccount, fromUid: 'mine', content: 'marker after socket' });
    await eventually(async () => agentSocket.messages.find((m) => m.content === 'marker after socket'));
    expect(socketInbound(agentSocket.messages).sort()).toEqual([conv.mine, conv.pool].sort());
  });

  it('socket: conversation events follow the same rule; a reassignment also reaches the previous assignee', async () => {
    const agentSocket = await socketOf(agent.token);
    const leadSocket = await socketOf(lead.token);
    const agentEvents: any[] = [];
    const leadEvents: any[] = [];
    agentSocket.socket.on('conversation', (m) => agentEvents.push(m));
    leadSocket.socket.on('conversation', (m) => leadEvents.push(m));
    expect((await lead.api.put(`/api/v1/conversations/${conv.theirs}/assignee`, { userId: agent.id })).status).toBe(200);
    expect((await lead.api.put(`/api/v1/conversations/${conv.theirs}/assignee`, { userId: agent2.id })).status).toBe(200);
    expect((await lead.api.put(`/api/v1/conversations/${conv.elsewhere}/status`, { status: 'pending' })).status).toBe(200);
    expect((await lead.api.put(`/api/v1/conversations/${conv.mine}/status`, { status: 'pending' })).status).toBe(200);
    // The lead hears all four: the gateway has routed each of them. Putting `mine` back to active is one more event
    // the agent may see; a socket delivers in order, so once the agent has it nothing routed before it is in flight.
    await eventually(async () => (leadEvents.length === 4 ? true : undefined));
    for (const id of [conv.elsewhere, conv.mine])
      expect((await lead.api.put(`/api/v1/conversations/${id}/status`, { status: 'active' })).status).toBe(200);
    await eventually(async () => agentEvents.find((e) => e.conversationId === conv.mine && e.status === 'active'));
    expect(leadEvents.slice(0, 4).map((e) => [e.type, e.conversationId])).toEqual([
      ['conversation.assigned', conv.theirs],
      ['conversation.assigned', conv.theirs],
      ['conversation.status_changed', conv.elsewhere],
      ['conversation.status_changed', conv.mine],
    ]);
    expect(agentEvents.map((e) => [e.type, e.conversationId, e.assigneeId ?? null])).toEqual([
      ['conversation.assigned', conv.theirs, agent.id],
      ['conversation.assigned', conv.theirs, agent2.id],
      ['conversation.status_changed', conv.mine, agent.id],
      ['conversation.status_changed', conv.mine, agent.id],
    ]);
    expect(agentEvents[2]).toEqual(expect.objectContaining({ status: 'pending', previousStatus: 'active', chatnetAccountId: listedAccount }));
  });

  it('under "assigned" a file sent in a conversation the agent may not see is 404 for them; an unsent upload is its uploader\'s', async () => {
    const upload = async (token: string, name: string) => {
      const fd = new FormData();
      fd.append('file', new Blob([Buffer.from(`bytes of ${name}`)], { type: 'text/plain' }), name);
      const res = await fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: fd });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const download = async (token: string, id: string) =>
      (await fetch(`${stack.url}/api/v1/chat/attachments/${id}`, { headers: { authorization: `Bearer ${token}` } })).status;
    const theirsFile = await upload(lead.token, 'theirs.txt');
    expect((await lead.api.post(`/api/v1/conversations/${conv.theirs}/messages`, { content: 'the quote', attachments: [theirsFile] })).status).toBe(
      201,
    );
    const mineFile = await upload(agent.token, 'mine.txt');
    expect((await agent.api.post(`/api/v1/conversations/${conv.mine}/messages`, { content: 'my quote', attachments: [mineFile] })).status).toBe(201);
    const draft = await upload(agent.token, 'draft.txt');
    const leadDraft = await upload(lead.token, 'lead-draft.txt');

    expect(await download(agent.token, theirsFile)).toBe(404);
    expect(await download(agent.token, leadDraft)).toBe(404);
    expect(await download(agent.token, mineFile)).toBe(200);
    expect(await download(agent.token, draft)).toBe(200);
    for (const token of [lead.token, a.token]) {
      for (const id of [theirsFile, mineFile, draft, leadDraft]) expect(await download(token, id)).toBe(200);
    }
    expect(await download(b.token, mineFile)).toBe(404);
  });

  it('back to "all": the agent sees everything again, sockets included', async () => {
    await setVisibility('all');
    expect(ids(await agent.api.get('/api/v1/conversations?limit=100'))).toEqual(Object.values(conv).sort());
    expect((await agent.api.get(`/api/v1/conversations/${conv.theirs}`)).status).toBe(200);
    const agentSocket = await socketOf(agent.token);
    // The gateway drops its cached setting when inbox_settings.updated arrives: within moments.
    const heard = await eventually(async () => {
      await bus.inbound(a.orgId, { accountId: listedAccount, fromUid: 'theirs', content: 'socket again' });
      await new Promise((r) => setTimeout(r, 500));
      return agentSocket.messages.find((m) => m.conversationId === conv.theirs && m.content === 'socket again');
    }, 15_000);
    expect(heard).toBeDefined();
  });
});
