import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { auditEntries } from '../support/audit';
import type { Client } from '../support/http';
import type { Stack } from '../support/stack';
import { inboxFixture, InboxFixture, member } from './inbox-support';
import { connectPatiently } from '../support/patient-client';

// POST /api/v1/conversations/bulk: one action (assign, status, folder, read) over many conversations, with the
// single routes' rules per conversation, per-id failures for unknown, malformed and other orgs' ids, one event
// per changed conversation and one audit entry per request.
describe('POST /api/v1/conversations/bulk', () => {
  let f: InboxFixture;
  let stack: Stack;
  let bus: InboxFixture['bus'];
  let a: InboxFixture['a'];
  let b: InboxFixture['b'];
  let lead: { api: Client; id: string };
  let agent: { api: Client; id: string };
  let agent2: { api: Client; id: string };
  let conv: Record<string, string>;
  const uids = ['uid-1', 'uid-2', 'uid-3', 'uid-4'];

  beforeAll(async () => {
    f = await inboxFixture('bulk', uids);
    ({ stack, bus, a, b, conv } = f);
    lead = await member(stack.url, a.owner, 'team_lead', 'bulk lead');
    agent = await member(stack.url, a.owner, 'agent', 'bulk agent one');
    agent2 = await member(stack.url, a.owner, 'agent', 'bulk agent two');
  }, 60_000);
  afterAll(() => f?.stop());

  const bulk = (as: Client, body: object) => as.post('/api/v1/conversations/bulk', body);
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const detail = async (id: string) => (await a.owner.get(`/api/v1/conversations/${id}`)).body.conversation;
  const sortFailed = (failed: { id: string; code: string }[]) => [...failed].sort((x, y) => x.id.localeCompare(y.id));
  /** The audit entry of this request: the newest of its action whose ids are exactly these. */
  const auditOf = (action: string, ids: string[]) =>
    eventually(
      async () => (await auditEntries(a.owner, action)).find((e) => [...e.details.ids].sort().join() === [...ids].sort().join()),
      15_000,
      100,
    );

  it('assign: a team lead assigns several conversations (200 {updated, failed: []}), one conversation.assigned each, one audit entry', async () => {
    const ids = [conv['uid-1'], conv['uid-2']];
    const res = await bulk(lead.api, { ids, action: 'assign', userId: agent.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 2, failed: [] });
    for (const id of ids) expect((await detail(id)).assigneeId).toBe(agent.id);
    const events = await eventually(async () => {
      const found = bus.of('conversation.assigned').filter((e) => ids.includes(e.data.conversationId));
      return found.length === 2 ? found : undefined;
    });
    expect(events.map((e) => e.data)).toEqual(
      expect.arrayContaining(
        ids.map((id) => expect.objectContaining({ conversationId: id, assigneeId: agent.id, previousAssigneeId: null, assignedBy: lead.id })),
      ),
    );
    const entry = await auditOf('conversations.bulk_assign', ids);
    expect(entry).toEqual(expect.objectContaining({ actorId: lead.id, actorType: 'user', resourceType: 'conversation', resourceId: null }));
    expect(entry.details).toEqual(expect.objectContaining({ requested: 2, updated: 2, failed: 0, failedIds: [], params: { userId: agent.id } }));
  });

  it("partial failure: another org's, unknown and malformed ids fail with not_found and are never touched; repeated ids count once", async () => {
    const unknown = randomUUID();
    const res = await bulk(a.owner, {
      ids: [conv['uid-3'], conv['uid-3'].toUpperCase(), conv.b, unknown, 'not-an-id'],
      action: 'status',
      status: 'pending',
    });
    expect(res.status).toBe(200);
    expect(res.body.updated).toBe(1);
    expect(sortFailed(res.body.failed)).toEqual(
      sortFailed([
        { id: conv.b, code: 'not_found' },
        { id: unknown, code: 'not_found' },
        { id: 'not-an-id', code: 'not_found' },
      ]),
    );
    expect((await detail(conv['uid-3'])).status).toBe('pending');
    expect((await b.owner.get(`/api/v1/conversations/${conv.b}`)).body.conversation.status).toBe('active');
    const entry = await auditOf('conversations.bulk_status', [conv['uid-3']]);
    expect(entry.details).toEqual(expect.objectContaining({ requested: 4, updated: 1, failed: 3, params: { status: 'pending' } }));
    expect([...entry.details.failedIds].sort()).toEqual([conv.b, unknown, 'not-an-id'].sort());
  });

  it('agents: assigning others fails per id with forbidden; taking unassigned ones for themselves succeeds', async () => {
    // uid-1 and uid-2 belong to agent; uid-3 and uid-4 are unassigned.
    const others = await bulk(agent2.api, { ids: [conv['uid-3'], conv['uid-4']], action: 'assign', userId: agent.id });
    expect(others.status).toBe(200);
    expect(others.body.updated).toBe(0);
    expect(sortFailed(others.body.failed)).toEqual(
      sortFailed([
        { id: conv['uid-3'], code: 'forbidden' },
        { id: conv['uid-4'], code: 'forbidden' },
      ]),
    );
    expect((await detail(conv['uid-3'])).assigneeId).toBeNull();
    // Releasing a conversation someone else owns is refused too.
    const release = await bulk(agent2.api, { ids: [conv['uid-1']], action: 'assign', userId: null });
    expect(release.body).toEqual({ updated: 0, failed: [{ id: conv['uid-1'], code: 'forbidden' }] });

    const take = await bulk(agent2.api, { ids: [conv['uid-3'], conv['uid-4'], conv['uid-1']], action: 'assign', userId: agent2.id });
    expect(take.body).toEqual({ updated: 2, failed: [{ id: conv['uid-1'], code: 'forbidden' }] });
    expect((await detail(conv['uid-4'])).assigneeId).toBe(agent2.id);
    expect((await detail(conv['uid-1'])).assigneeId).toBe(agent.id);
  });

  it('assign: 400 naming userId for a missing, unknown or malformed user, naming teamId for an unknown team; nothing changes', async () => {
    const ids = [conv['uid-1']];
    const missing = await bulk(a.owner, { ids, action: 'assign' });
    expect([missing.status, fieldOf(missing)]).toEqual([400, 'userId']);
    const unknown = await bulk(a.owner, { ids, action: 'assign', userId: randomUUID() });
    expect([unknown.status, fieldOf(unknown)]).toEqual([400, 'userId']);
    const malformed = await bulk(a.owner, { ids, action: 'assign', userId: 'nobody' });
    expect([malformed.status, fieldOf(malformed)]).toEqual([400, 'userId']);
    const team = await bulk(a.owner, { ids, action: 'assign', userId: null, teamId: randomUUID() });
    expect([team.status, fieldOf(team)]).toEqual([400, 'teamId']);
    expect((await detail(conv['uid-1'])).assigneeId).toBe(agent.id);
  });

  it('status: snoozed with snoozedUntil, one conversation.status_changed per changed conversation; 400 naming status / snoozedUntil', async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const ids = [conv['uid-1'], conv['uid-2']];
    const res = await bulk(agent.api, { ids, action: 'status', status: 'snoozed', snoozedUntil: until });
    expect(res.body).toEqual({ updated: 2, failed: [] });
    for (const id of ids) expect(await detail(id)).toEqual(expect.objectContaining({ status: 'snoozed', snoozedUntil: until }));
    await eventually(async () => {
      const found = bus.of('conversation.status_changed').filter((e) => ids.includes(e.data.conversationId) && e.data.status === 'snoozed');
      return found.length === 2 ? found : undefined;
    });
    const noUntil = await bulk(agent.api, { ids, action: 'status', status: 'snoozed' });
    expect([noUntil.status, fieldOf(noUntil)]).toEqual([400, 'snoozedUntil']);
    const past = await bulk(agent.api, { ids, action: 'status', status: 'snoozed', snoozedUntil: '2001-01-01T00:00:00Z' });
    expect([past.status, fieldOf(past)]).toEqual([400, 'snoozedUntil']);
    const bad = await bulk(agent.api, { ids, action: 'status', status: 'sleeping' });
    expect([bad.status, fieldOf(bad)]).toEqual([400, 'status']);
    const none = await bulk(agent.api, { ids, action: 'status' });
    expect([none.status, fieldOf(none)]).toEqual([400, 'status']);
  });

  it("folder: adds to one of the org's folders; 400 naming folderId when missing or not the org's", async () => {
    const folder = await a.owner.post('/api/v1/chat/folders', { name: 'Bulk VIP' });
    const ids = [conv['uid-1'], conv['uid-3']];
    const res = await bulk(agent.api, { ids, action: 'folder', folderId: folder.body.id });
    expect(res.body).toEqual({ updated: 2, failed: [] });
    const inFolder = await a.owner.get(`/api/v1/conversations?folderId=${folder.body.id}`);
    expect(inFolder.body.data.map((c: any) => c.id).sort()).toEqual([...ids].sort());
    const missing = await bulk(agent.api, { ids, action: 'folder' });
    expect([missing.status, fieldOf(missing)]).toEqual([400, 'folderId']);
    const foreign = await b.owner.post('/api/v1/chat/folders', { name: 'B folder' });
    const other = await bulk(agent.api, { ids, action: 'folder', folderId: foreign.body.id });
    expect([other.status, fieldOf(other)]).toEqual([400, 'folderId']);
    await auditOf('conversations.bulk_folder', ids);
  });

  it('read: every message from the contact read, unreadCount 0', async () => {
    const ids = [conv['uid-2'], conv['uid-4']];
    for (const id of ids) expect((await detail(id)).unreadCount).toBe(1);
    const res = await bulk(agent.api, { ids, action: 'read' });
    expect(res.body).toEqual({ updated: 2, failed: [] });
    for (const id of ids) expect((await detail(id)).unreadCount).toBe(0);
    expect((await detail(conv['uid-1'])).unreadCount).toBe(1);
  });

  it('400 naming ids for none, 1,001 or a non-array; naming action for a missing or unknown one', async () => {
    const tooMany = await bulk(a.owner, { ids: Array.from({ length: 1001 }, () => randomUUID()), action: 'read' });
    expect([tooMany.status, fieldOf(tooMany)]).toEqual([400, 'ids']);
    const empty = await bulk(a.owner, { ids: [], action: 'read' });
    expect([empty.status, fieldOf(empty)]).toEqual([400, 'ids']);
    const notArray = await bulk(a.owner, { ids: conv['uid-1'], action: 'read' });
    expect([notArray.status, fieldOf(notArray)]).toEqual([400, 'ids']);
    const noAction = await bulk(a.owner, { ids: [conv['uid-1']] });
    expect([noAction.status, fieldOf(noAction)]).toEqual([400, 'action']);
    const unknown = await bulk(a.owner, { ids: [conv['uid-1']], action: 'explode' });
    expect([unknown.status, fieldOf(unknown)]).toEqual([400, 'action']);
  });

  it('1,000 conversations in one request: processed within seconds, one event each', async () => {
    const db = await connectPatiently(stack.databaseUrl('messaging'));
    const account = randomUUID();
    const ids = Array.from({ length: 1000 }, () => randomUUID());
    try {
      await db.query(
        `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id)
         SELECT id, $2, $3, 'user', 'bulk-' || ord FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, ord)`,
        [ids, a.orgId, account],
      );
    } finally {
      await db.end();
    }
    const started = Date.now();
    const res = await bulk(lead.api, { ids, action: 'status', status: 'closed' });
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 1000, failed: [] });
    expect(took).toBeLessThan(10_000);
    const closed = await a.owner.get(`/api/v1/conversations?chatnetAccountId=${account}&status=closed&limit=1`);
    expect(closed.body.pagination.total).toBe(1000);
    const wanted = new Set(ids);
    await eventually(
      async () => bus.of('conversation.status_changed').filter((e) => wanted.has(e.data.conversationId)).length === 1000 || undefined,
      30_000,
      200,
    );
    const entry = await auditOf('conversations.bulk_status', ids);
    expect(entry.details).toEqual(expect.objectContaining({ requested: 1000, updated: 1000, failed: 0 }));
  }, 60_000);
});
