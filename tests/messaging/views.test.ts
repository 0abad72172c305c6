import { eventually } from '@crm/testing';
import { auditEntryFor } from '../support/audit';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { orgWithKey } from './support';

// Saved views (issue #29 item 8) through the gateway: POST/GET /views, GET/PUT/DELETE /views/:id with
// {name, resource, filters, shared}; GET /conversations?viewId= and GET /contacts?viewId= apply a view (the request's
// own parameters replace the view's value of the same parameter); GET /conversations/counts counts the caller's
// conversation views. Shared views are the org's (team leads and above write them); personal ones their owner's.
describe('saved views', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let agent: Client;
  let lead: Client;
  let accountId: string;
  const conv: Record<string, { id: string; contactId: string }> = {};
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const idsOf = (res: { body: any }) => res.body.data.map((c: any) => c.id).sort();
  const newView = (as: Client, body: Record<string, unknown>) =>
    as.post('/api/v1/views', { name: 'A view', resource: 'conversations', shared: false, ...body });

  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'chatnet-connector', 'messaging'] });
    a = await orgWithKey(stack.url, 'Views A');
    b = await orgWithKey(stack.url, 'Views B');
    agent = (await member(stack.url, a.owner, 'agent', 'views agent')).api;
    lead = (await member(stack.url, a.owner, 'team_lead', 'views lead')).api;
    accountId = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Views line' })).body.id;
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    // Three contacts write in: two named Viewer, one not; v-1 and v-2 get priority high.
    for (const [uid, name] of [
      ['v-1', 'Viewer One'],
      ['v-2', 'Viewer Two'],
      ['v-3', 'Other Three'],
    ]) {
      expect(
        (await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: uid, fromName: name, content: `hello from ${name}` })).status,
      ).toBe(200);
    }
    const list = await eventually(async () => {
      const res = await a.owner.get('/api/v1/conversations?limit=100');
      return res.body.data?.length === 3 ? res.body.data : undefined;
    });
    for (const c of list) conv[c.threadId] = { id: c.id, contactId: c.contactId };
    for (const uid of ['v-1', 'v-2'])
      expect((await a.owner.put(`/api/v1/conversations/${conv[uid].id}/priority`, { priority: 'high' })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('POST /views → 201 with the view (numbers and booleans kept as text); GET, PUT and DELETE /views/:id', async () => {
    const made = await newView(a.owner, { name: ' Hot unread ', filters: { priority: 'high', unread: true } });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.any(String),
      name: 'Hot unread',
      resource: 'conversations',
      filters: { priority: 'high', unread: 'true' },
      shared: false,
      ownerId: a.user.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await a.owner.get(`/api/v1/views/${made.body.id}`)).body).toEqual(made.body);

    const put = await a.owner.put(`/api/v1/views/${made.body.id}`, { name: 'Hot', filters: { priority: 'urgent' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...made.body, name: 'Hot', filters: { priority: 'urgent' }, updatedAt: expect.any(String) });
    // Only the fields sent change.
    expect((await a.owner.put(`/api/v1/views/${made.body.id}`, { name: 'Hotter' })).body.filters).toEqual({ priority: 'urgent' });

    expect((await a.owner.del(`/api/v1/views/${made.body.id}`)).status).toBe(204);
    expect((await a.owner.get(`/api/v1/views/${made.body.id}`)).status).toBe(404);
  });

  it('400 names the field: filters.<param> checked as the list checks it, page/limit/viewId refused, unknown parameters refused', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ filters: { status: 'bogus' } }, 'filters.status'],
      [{ filters: { folderId: 'not-an-id' } }, 'filters.folderId'],
      [{ filters: { page: 2 } }, 'filters.page'],
      [{ filters: { limit: '5' } }, 'filters.limit'],
      [{ filters: { viewId: 'x' } }, 'filters.viewId'],
      [{ filters: { nope: '1' } }, 'filters.nope'],
      [{ filters: { status: ['active'] } }, 'filters.status'],
      [{ filters: 'status=active' }, 'filters'],
      [{ resource: 'deals' }, 'resource'],
      [{ name: '' }, 'name'],
      [{ shared: 'yes' }, 'shared'],
      [{ resource: 'contacts', filters: { scoreMin: 'ten' } }, 'filters.scoreMin'],
      [{ resource: 'contacts', filters: { scoreMin: 5, scoreMax: 1 } }, 'filters.scoreMax'],
      // A parameter of the other list.
      [{ resource: 'contacts', filters: { priority: 'high' } }, 'filters.priority'],
    ];
    for (const [body, field] of cases) {
      const res = await newView(a.owner, body);
      expect([res.status, fieldOf(res), body]).toEqual([400, field, body]);
    }
    const view = await newView(a.owner, { filters: { priority: 'high' } });
    const bad = await a.owner.put(`/api/v1/views/${view.body.id}`, { filters: { unread: 'maybe' } });
    expect([bad.status, fieldOf(bad)]).toEqual([400, 'filters.unread']);
    await a.owner.del(`/api/v1/views/${view.body.id}`);
  });

  it('a shared view needs team_lead or above (403 for an agent); a personal one is its owner’s (404 to others)', async () => {
    const refused = await newView(agent, { shared: true });
    expect(refused.status).toBe(403);
    const shared = await newView(lead, { name: 'Team high', shared: true, filters: { priority: 'high' } });
    expect(shared.status).toBe(201);
    expect((await agent.get(`/api/v1/views/${shared.body.id}`)).status).toBe(200);
    expect((await agent.put(`/api/v1/views/${shared.body.id}`, { name: 'Mine now' })).status).toBe(403);
    expect((await agent.del(`/api/v1/views/${shared.body.id}`)).status).toBe(403);
    // Making one's own personal view shared is a shared write too.
    const own = await newView(agent, { name: 'Agent own' });
    expect(own.status).toBe(201);
    expect((await agent.put(`/api/v1/views/${own.body.id}`, { shared: true })).status).toBe(403);

    // Another user's personal view and another org's view are unknown.
    expect((await a.owner.get(`/api/v1/views/${own.body.id}`)).status).toBe(404);
    expect((await a.owner.put(`/api/v1/views/${own.body.id}`, { name: 'x' })).status).toBe(404);
    expect((await a.owner.del(`/api/v1/views/${own.body.id}`)).status).toBe(404);
    expect((await a.owner.get(`/api/v1/conversations?viewId=${own.body.id}`)).status).toBe(404);
    expect((await b.owner.get(`/api/v1/views/${shared.body.id}`)).status).toBe(404);
    expect((await b.owner.del(`/api/v1/views/${shared.body.id}`)).status).toBe(404);
    expect((await b.owner.get(`/api/v1/conversations?viewId=${shared.body.id}`)).status).toBe(404);
    expect((await b.owner.get(`/api/v1/contacts?viewId=${shared.body.id}`)).status).toBe(404);
    expect((await a.owner.get('/api/v1/views/not-an-id')).status).toBe(404);

    // GET /views: the caller's own and the shared ones, by name; ?resource= narrows.
    const agentList = await agent.get('/api/v1/views');
    expect(agentList.status).toBe(200);
    const names = agentList.body.data.map((v: any) => v.name);
    expect(names).toEqual(expect.arrayContaining(['Agent own', 'Team high']));
    expect(agentList.body.data.every((v: any) => v.shared || v.name === 'Agent own')).toBe(true);
    expect(agentList.body.pagination).toEqual(expect.objectContaining({ page: 1, total: agentList.body.data.length }));
    expect((await agent.get('/api/v1/views?resource=contacts')).body.data.every((v: any) => v.resource === 'contacts')).toBe(true);
    expect(fieldOf(await agent.get('/api/v1/views?resource=deals'))).toBe('resource');
    expect((await b.owner.get('/api/v1/views')).body.data).toEqual([]);

    expect((await agent.del(`/api/v1/views/${own.body.id}`)).status).toBe(204);
    expect((await lead.del(`/api/v1/views/${shared.body.id}`)).status).toBe(204);
    // Writing a shared view is audited (a personal one concerns its owner alone).
    expect((await auditEntryFor(a.owner, 'view.created', shared.body.id)).details).toEqual({
      name: 'Team high',
      resource: 'conversations',
      shared: true,
      filters: { priority: 'high' },
    });
    expect((await auditEntryFor(a.owner, 'view.deleted', shared.body.id)).actorType).toBe('user');
  });

  it('GET /conversations?viewId= applies the view; further parameters narrow it, and one given again replaces the view’s value', async () => {
    const high = await newView(a.owner, { name: 'High', filters: { priority: 'high' } });
    expect(idsOf(await a.owner.get(`/api/v1/conversations?viewId=${high.body.id}`))).toEqual([conv['v-1'].id, conv['v-2'].id].sort());
    expect(idsOf(await a.owner.get(`/api/v1/conversations?viewId=${high.body.id}&contactId=${conv['v-2'].contactId}`))).toEqual([conv['v-2'].id]);
    expect(idsOf(await a.owner.get(`/api/v1/conversations?viewId=${high.body.id}&priority=none`))).toEqual([conv['v-3'].id]);
    // Paging is the request's.
    const paged = await a.owner.get(`/api/v1/conversations?viewId=${high.body.id}&limit=1`);
    expect([paged.body.data.length, paged.body.pagination.total]).toEqual([1, 2]);
    // The merged query is checked as the list checks it.
    expect(fieldOf(await a.owner.get(`/api/v1/conversations?viewId=${high.body.id}&priority=bogus`))).toBe('priority');

    const contactsView = await newView(a.owner, { name: 'Viewers', resource: 'contacts', filters: { search: 'Viewer' } });
    const mismatch = await a.owner.get(`/api/v1/conversations?viewId=${contactsView.body.id}`);
    expect([mismatch.status, fieldOf(mismatch)]).toEqual([400, 'viewId']);
    const mismatch2 = await a.owner.get(`/api/v1/contacts?viewId=${high.body.id}`);
    expect([mismatch2.status, fieldOf(mismatch2)]).toEqual([400, 'viewId']);
    await a.owner.del(`/api/v1/views/${high.body.id}`);
    await a.owner.del(`/api/v1/views/${contactsView.body.id}`);
  });

  it('GET /contacts?viewId= applies a contacts view; a parameter given again replaces the view’s value', async () => {
    const viewers = await newView(a.owner, { name: 'Viewers', resource: 'contacts', filters: { search: 'Viewer' } });
    expect(viewers.status).toBe(201);
    const all = await a.owner.get(`/api/v1/contacts?viewId=${viewers.body.id}`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((c: any) => c.id).sort()).toEqual([conv['v-1'].contactId, conv['v-2'].contactId].sort());
    const one = await a.owner.get(`/api/v1/contacts?viewId=${viewers.body.id}&search=Two`);
    expect(one.body.data.map((c: any) => c.id)).toEqual([conv['v-2'].contactId]);
    await a.owner.del(`/api/v1/views/${viewers.body.id}`);
  });

  it('GET /conversations/counts gives views: {id: n} for the caller’s conversation views, beside the tab counts', async () => {
    const high = await newView(a.owner, { name: 'High', filters: { priority: 'high' } });
    const unprioritised = await newView(a.owner, { name: 'None', filters: { priority: 'none' } });
    const team = await newView(lead, { name: 'Team all', shared: true, filters: {} });
    const contactsView = await newView(a.owner, { name: 'Viewers', resource: 'contacts', filters: { search: 'Viewer' } });

    const counts = await a.owner.get('/api/v1/conversations/counts');
    expect(counts.status).toBe(200);
    expect(counts.body).toEqual({
      total: 3,
      unread: expect.any(Number),
      unreplied: expect.any(Number),
      archived: 0,
      mine: expect.any(Number),
      unassigned: expect.any(Number),
      views: { [high.body.id]: 2, [unprioritised.body.id]: 1, [team.body.id]: 3 },
    });
    // The agent sees the shared one only; another org, none.
    expect(Object.keys((await agent.get('/api/v1/conversations/counts')).body.views)).toEqual([team.body.id]);
    expect((await b.owner.get('/api/v1/conversations/counts')).body.views).toEqual({});
    for (const v of [high, unprioritised, contactsView]) await a.owner.del(`/api/v1/views/${v.body.id}`);
    await lead.del(`/api/v1/views/${team.body.id}`);
  });
});
