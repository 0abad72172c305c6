import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// Who owns a conversation: PUT /conversations/:id/assignee with the agent rules (take an unassigned one,
// release your own), team leads and up assigning anyone active in the org, identity vouching for users and
// teams, the list filters and counts, and conversation.assigned on the bus.
describe('conversation ownership: assignee, team, filters, counts, conversation.assigned', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let lead: { api: Client; id: string };
  let agent: { api: Client; id: string };
  let agent2: { api: Client; id: string };
  let gone: { api: Client; id: string };
  let outsider: { api: Client; id: string };
  let teamId: string;
  let accountA: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-owner-'));
  const conv: Record<string, string> = {};

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
    lead = await member(stack.url, a.owner, 'team_lead', 'lead');
    agent = await member(stack.url, a.owner, 'agent', 'agent one');
    agent2 = await member(stack.url, a.owner, 'agent', 'agent two');
    gone = await member(stack.url, a.owner, 'agent', 'leaver');
    expect((await a.owner.del(`/api/v1/users/${gone.id}`)).status).toBe(204);
    outsider = await member(stack.url, b.owner, 'agent', 'outsider');
    const team = await a.owner.post('/api/v1/teams', { name: 'Sales North', memberIds: [agent.id] });
    expect(team.status).toBe(201);
    teamId = team.body.id;

    accountA = connector.account(a.orgId);
    const accountB = connector.account(b.orgId);
    for (const uid of ['uid-1', 'uid-2', 'uid-3']) await bus.inbound(a.orgId, { accountId: accountA, fromUid: uid, fromName: uid });
    await bus.inbound(b.orgId, { accountId: accountB, fromUid: 'uid-b', fromName: 'B contact' });
    const listA = await eventually(async () => {
      const res = await a.owner.get('/api/v1/conversations?limit=100');
      return res.body.data.length === 3 ? res.body.data : undefined;
    });
    for (const c of listA) conv[c.threadId] = c.id;
    conv.b = (await eventually(async () => (await b.owner.get('/api/v1/conversations')).body.data[0])).id;
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  const assign = (as: Client, id: string, body: object) => as.put(`/api/v1/conversations/${id}/assignee`, body);
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;

  it('a new conversation is unassigned, without a team, in every shape (list, detail, public)', async () => {
    const list = await a.owner.get('/api/v1/conversations?limit=100');
    expect(list.body.data.every((c: any) => c.assigneeId === null && c.teamId === null && c.snoozedUntil === null)).toBe(true);
    const detail = await a.owner.get(`/api/v1/conversations/${conv['uid-1']}`);
    expect(detail.body.conversation).toEqual(expect.objectContaining({ assigneeId: null, teamId: null, snoozedUntil: null }));
    const pub = await a.pub.get('/api/public/conversations');
    expect(pub.body.conversations.every((c: any) => c.assigneeId === null)).toBe(true);
  });

  it('an agent takes an unassigned conversation (200 with the conversation) and conversation.assigned is published', async () => {
    const res = await assign(agent.api, conv['uid-1'], { userId: agent.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      expect.objectContaining({ id: conv['uid-1'], assigneeId: agent.id, teamId: null, status: 'active', snoozedUntil: null }),
    );
    const event = await eventually(async () => bus.of('conversation.assigned').find((e) => e.data.conversationId === conv['uid-1']));
    expect(event.orgId).toBe(a.orgId);
    expect(event.data).toEqual({
      conversationId: conv['uid-1'],
      contactId: crm.contacts.get(`${a.orgId}/uid-1`)!.id,
      chatnetAccountId: accountA,
      assigneeId: agent.id,
      teamId: null,
      previousAssigneeId: null,
      assignedBy: agent.id,
      // A person's move: no system reason.
      reason: null,
    });
    // The public shape shows the owner too.
    const pub = await a.pub.get('/api/public/conversations');
    expect(pub.body.conversations.find((c: any) => c.id === conv['uid-1']).assigneeId).toBe(agent.id);
  });

  it('agents: 403 taking a conversation assigned to another, assigning someone else, or changing the team', async () => {
    const taken = await assign(agent2.api, conv['uid-1'], { userId: agent2.id });
    expect(taken.status).toBe(403);
    expect(taken.body.error.code).toBe('permission_denied');
    expect((await assign(agent2.api, conv['uid-1'], { userId: null })).status).toBe(403);
    expect((await assign(agent.api, conv['uid-2'], { userId: agent2.id })).status).toBe(403);
    expect((await assign(agent.api, conv['uid-1'], { userId: agent2.id })).status).toBe(403);
    expect((await assign(agent.api, conv['uid-1'], { userId: agent.id, teamId })).status).toBe(403);
    const detail = await a.owner.get(`/api/v1/conversations/${conv['uid-1']}`);
    expect(detail.body.conversation.assigneeId).toBe(agent.id);
  });

  it('an agent releases their own conversation (userId null)', async () => {
    const res = await assign(agent.api, conv['uid-1'], { userId: null });
    expect(res.status).toBe(200);
    expect(res.body.assigneeId).toBeNull();
    const event = await eventually(async () =>
      bus.of('conversation.assigned').find((e) => e.data.conversationId === conv['uid-1'] && e.data.previousAssigneeId === agent.id),
    );
    expect(event.data).toEqual(expect.objectContaining({ assigneeId: null, assignedBy: agent.id }));
  });

  it('a team lead assigns anyone active with a team; leaving teamId out keeps the team; repeating it publishes nothing', async () => {
    const res = await assign(lead.api, conv['uid-2'], { userId: agent2.id, teamId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ assigneeId: agent2.id, teamId }));
    const moved = await assign(lead.api, conv['uid-2'], { userId: agent.id });
    expect(moved.body).toEqual(expect.objectContaining({ assigneeId: agent.id, teamId }));
    const event = await eventually(async () =>
      bus.of('conversation.assigned').find((e) => e.data.conversationId === conv['uid-2'] && e.data.assigneeId === agent.id),
    );
    expect(event.data).toEqual(expect.objectContaining({ teamId, previousAssigneeId: agent2.id, assignedBy: lead.id }));

    const before = bus.of('conversation.assigned').length;
    expect((await assign(lead.api, conv['uid-2'], { userId: agent.id, teamId })).status).toBe(200);
    // Admins and owners may too; the team alone can be cleared.
    const owned = await assign(a.owner, conv['uid-3'], { userId: lead.id, teamId: null });
    expect(owned.body).toEqual(expect.objectContaining({ assigneeId: lead.id, teamId: null }));
    await eventually(async () => bus.of('conversation.assigned').find((e) => e.data.conversationId === conv['uid-3']));
    // The no-op above added no event: only uid-3's assignment arrived since.
    expect(bus.of('conversation.assigned').length).toBe(before + 1);
  });

  it('400 naming userId for an unknown, inactive or other-org user, or a malformed or missing one; 400 naming teamId for an unknown team', async () => {
    const unknown = await assign(lead.api, conv['uid-3'], { userId: '6f1c1d3e-4b7a-4c2e-9a51-3f0e8d2b7c10' });
    expect([unknown.status, fieldOf(unknown)]).toEqual([400, 'userId']);
    const inactive = await assign(lead.api, conv['uid-3'], { userId: gone.id });
    expect([inactive.status, fieldOf(inactive)]).toEqual([400, 'userId']);
    expect(inactive.body.error.details[0].message).toMatch(/active/);
    const foreign = await assign(a.owner, conv['uid-3'], { userId: outsider.id });
    expect([foreign.status, fieldOf(foreign)]).toEqual([400, 'userId']);
    const malformed = await assign(a.owner, conv['uid-3'], { userId: 'nobody' });
    expect([malformed.status, fieldOf(malformed)]).toEqual([400, 'userId']);
    const missing = await assign(a.owner, conv['uid-3'], { teamId });
    expect([missing.status, fieldOf(missing)]).toEqual([400, 'userId']);
    const team = await assign(a.owner, conv['uid-3'], { userId: lead.id, teamId: '6f1c1d3e-4b7a-4c2e-9a51-3f0e8d2b7c10' });
    expect([team.status, fieldOf(team)]).toEqual([400, 'teamId']);
    const badTeam = await assign(a.owner, conv['uid-3'], { userId: lead.id, teamId: 7 });
    expect([badTeam.status, fieldOf(badTeam)]).toEqual([400, 'teamId']);
    // Nothing changed.
    expect((await a.owner.get(`/api/v1/conversations/${conv['uid-3']}`)).body.conversation).toEqual(
      expect.objectContaining({ assigneeId: lead.id, teamId: null }),
    );
  });

  it("another org's conversation is 404 for everyone, and its own users cannot be given org A's conversations", async () => {
    expect((await assign(a.owner, conv.b, { userId: a.user.id })).status).toBe(404);
    expect((await assign(agent.api, conv.b, { userId: agent.id })).status).toBe(404);
    expect((await assign(a.owner, 'not-an-id', { userId: null })).status).toBe(404);
    expect((await b.owner.get(`/api/v1/conversations/${conv.b}`)).body.conversation.assigneeId).toBeNull();
  });

  it('the list filters by assigneeId (id, me, unassigned) and teamId; counts add mine and unassigned', async () => {
    // Now: uid-1 unassigned, uid-2 agent (team), uid-3 lead.
    const ids = async (as: Client, q: string) => (await as.get(`/api/v1/conversations?${q}`)).body.data.map((c: any) => c.id).sort();
    expect(await ids(a.owner, `assigneeId=${agent.id}`)).toEqual([conv['uid-2']]);
    expect(await ids(agent.api, 'assigneeId=me')).toEqual([conv['uid-2']]);
    expect(await ids(lead.api, 'assigneeId=me')).toEqual([conv['uid-3']]);
    expect(await ids(a.owner, 'assigneeId=unassigned')).toEqual([conv['uid-1']]);
    expect(await ids(a.owner, `teamId=${teamId}`)).toEqual([conv['uid-2']]);
    expect(await ids(a.owner, `teamId=${teamId}&assigneeId=unassigned`)).toEqual([]);
    const bad = await a.owner.get('/api/v1/conversations?assigneeId=someone');
    expect([bad.status, fieldOf(bad)]).toEqual([400, 'assigneeId']);
    const badTeam = await a.owner.get('/api/v1/conversations?teamId=x');
    expect([badTeam.status, fieldOf(badTeam)]).toEqual([400, 'teamId']);

    expect((await agent.api.get('/api/v1/conversations/counts')).body).toEqual({
      total: 3,
      unread: 3,
      unreplied: 3,
      archived: 0,
      mine: 1,
      unassigned: 1,
      views: {},
    });
    expect((await agent2.api.get('/api/v1/conversations/counts')).body).toEqual(expect.objectContaining({ mine: 0, unassigned: 1 }));
    // Archived conversations count in neither.
    expect((await agent.api.post(`/api/v1/conversations/${conv['uid-2']}/archive`)).status).toBe(200);
    expect((await a.owner.post(`/api/v1/conversations/${conv['uid-1']}/archive`)).status).toBe(200);
    expect((await agent.api.get('/api/v1/conversations/counts')).body).toEqual({
      total: 3,
      unread: 1,
      unreplied: 1,
      archived: 2,
      mine: 0,
      unassigned: 0,
      views: {},
    });
    expect((await b.owner.get('/api/v1/conversations/counts')).body).toEqual(expect.objectContaining({ total: 1, mine: 0, unassigned: 1 }));
  });
});
