import { randomUUID } from 'node:crypto';
import { Client } from '../support/http';
import { addUser, CrmStack, Org, startCrmStack } from './crm-support';

/**
 * Customer lists: saved criteria over an organization's contacts, evaluated live. Campaigns read them over
 * gRPC (GetCustomerList, ResolveListMembers).
 */
describe('customer lists', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;

  const contact = async (api: Client, body: Record<string, unknown>) => {
    const res = await api.post('/api/v1/contacts', body);
    if (res.status !== 201) throw new Error(`contact create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; name: string };
  };
  const newList = async (criteria: unknown, name = 'List') => {
    const res = await owner.post('/api/v1/customer-lists', { name, description: 'd', criteria });
    if (res.status !== 201) throw new Error(`list create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };
  const countOf = async (id: string, api: Client = owner) => (await api.get(`/api/v1/customer-lists/${id}`)).body.contactCount;

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
    await contact(owner, { name: 'Nguyễn Văn An', phone: '0912 000 001', source: 'website', status: 'lead', tags: ['VIP', 'hanoi'] });
    await contact(owner, { name: 'Trần Thị Bình', phone: '0912 000 002', source: 'manual', status: 'customer', tags: ['hcm'] });
    await contact(owner, { name: 'Carl Clark', email: 'carl@example.test', source: 'website', status: 'lost' });
    // Another org's look-alikes must never be counted or listed.
    await contact(globex.owner, { name: 'Nguyễn Globex', source: 'website', status: 'lead', tags: ['vip'] });
    await contact(globex.owner, { name: 'Other Globex', source: 'website' });
  });
  afterAll(async () => {
    await crm?.stop();
  });

  describe('create, read, update, activate, delete', () => {
    it('creates a draft and shows it with its live contactCount and criteria', async () => {
      const res = await owner.post('/api/v1/customer-lists', {
        name: 'Website leads',
        description: 'Leads from the web form',
        criteria: { filters: [{ field: 'source', operator: 'equals', value: 'Website' }] },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Website leads',
        status: 'draft',
        createdAt: expect.any(String),
      });

      const one = await owner.get(`/api/v1/customer-lists/${res.body.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({
        id: res.body.id,
        name: 'Website leads',
        description: 'Leads from the web form',
        status: 'draft',
        contactCount: 2,
        criteria: { filters: [{ field: 'source', operator: 'equals', value: 'Website' }] },
        createdAt: res.body.createdAt,
        updatedAt: expect.any(String),
      });

      const all = await owner.get('/api/v1/customer-lists');
      expect(all.status).toBe(200);
      expect(all.body).toContainEqual({
        id: res.body.id,
        name: 'Website leads',
        description: 'Leads from the web form',
        contactCount: 2,
        status: 'draft',
        createdAt: res.body.createdAt,
      });
    });

    it('updates only the sent fields; a new criteria changes the count', async () => {
      const id = await newList({ filters: [{ field: 'status', operator: 'equals', value: 'lead' }] }, 'Leads');
      expect(await countOf(id)).toBe(1);
      const renamed = await owner.put(`/api/v1/customer-lists/${id}`, { name: 'Hot leads' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual(expect.objectContaining({ name: 'Hot leads', description: 'd', contactCount: 1, status: 'draft' }));
      const widened = await owner.put(`/api/v1/customer-lists/${id}`, {
        criteria: { filters: [{ field: 'status', operator: 'in', value: ['lead', 'customer'] }] },
      });
      expect(widened.body).toEqual(expect.objectContaining({ name: 'Hot leads', contactCount: 2 }));
      expect(widened.body.criteria).toEqual({ filters: [{ field: 'status', operator: 'in', value: ['lead', 'customer'] }] });
    });

    it('moves draft → active → paused → active; other moves are 422 invalid_transition', async () => {
      const id = await newList({ filters: [] }, 'Everyone');
      const notYet = await owner.post(`/api/v1/customer-lists/${id}/pause`);
      expect(notYet.status).toBe(422);
      expect(notYet.body.error.code).toBe('invalid_transition');
      const a = await owner.post(`/api/v1/customer-lists/${id}/activate`);
      expect(a.status).toBe(200);
      expect(a.body).toEqual(expect.objectContaining({ id, status: 'active', contactCount: 3 }));
      const again = await owner.post(`/api/v1/customer-lists/${id}/activate`);
      expect(again.status).toBe(422);
      expect(again.body.error.code).toBe('invalid_transition');
      const paused = await owner.post(`/api/v1/customer-lists/${id}/pause`);
      expect(paused.status).toBe(200);
      expect(paused.body.status).toBe('paused');
      expect((await owner.get('/api/v1/customer-lists')).body.find((l: { id: string }) => l.id === id).status).toBe('paused');
      expect((await owner.post(`/api/v1/customer-lists/${id}/activate`)).body.status).toBe('active');
    });

    it('deletes (204), after which the list is 404', async () => {
      const id = await newList({ filters: [] }, 'Temp');
      expect((await owner.del(`/api/v1/customer-lists/${id}`)).status).toBe(204);
      expect((await owner.get(`/api/v1/customer-lists/${id}`)).status).toBe(404);
      expect((await owner.del(`/api/v1/customer-lists/${id}`)).status).toBe(404);
      expect((await owner.get('/api/v1/customer-lists')).body.map((l: { id: string }) => l.id)).not.toContain(id);
    });
  });

  describe('criteria', () => {
    const count = async (filters: unknown[]) => countOf(await newList({ filters }));

    it('follow the automation operators: equals, not_equals, contains, in, gte, lte', async () => {
      expect(await count([{ field: 'name', operator: 'contains', value: 'nguyen' }])).toBe(1); // no diacritics: any accenting
      expect(await count([{ field: 'name', operator: 'contains', value: 'Bình' }])).toBe(1);
      expect(await count([{ field: 'name', operator: 'contains', value: 'Binh' }])).toBe(1);
      expect(await count([{ field: 'tags', operator: 'equals', value: 'vip' }])).toBe(1); // any tag, any case
      expect(await count([{ field: 'tags', operator: 'contains', value: 'HCM' }])).toBe(1);
      expect(await count([{ field: 'tags', operator: 'not_equals', value: 'vip' }])).toBe(2);
      expect(await count([{ field: 'source', operator: 'not_equals', value: 'website' }])).toBe(1);
      expect(await count([{ field: 'status', operator: 'in', value: ['lead', 'lost'] }])).toBe(2);
      expect(await count([{ field: 'phone', operator: 'equals', value: '0912 000 001' }])).toBe(1); // normalised like contacts
      expect(await count([{ field: 'phone', operator: 'contains', value: '000 002' }])).toBe(1);
      expect(await count([{ field: 'hasChatnet', operator: 'equals', value: false }])).toBe(3); // no chat-network identity, phone or not
      expect(
        await count([
          { field: 'leadScore', operator: 'gte', value: 0 },
          { field: 'leadScore', operator: 'lte', value: '0' },
        ]),
      ).toBe(3);
      expect(await count([{ field: 'leadScore', operator: 'gte', value: 1 }])).toBe(0);
      expect(await count([{ field: 'createdAt', operator: 'gte', value: '2000-01-01' }])).toBe(3);
      expect(await count([{ field: 'createdAt', operator: 'lte', value: '2000-01-01' }])).toBe(0);
      expect(await count([{ field: 'lastActivity', operator: 'lte', value: new Date(Date.now() + 60_000).toISOString() }])).toBe(3);
      expect(
        await count([
          { field: 'source', operator: 'equals', value: 'website' },
          { field: 'status', operator: 'equals', value: 'lead' },
        ]),
      ).toBe(1); // AND
      expect(await count([{ field: 'statusId', operator: 'equals', value: randomUUID() }])).toBe(0);
      expect(await count([{ field: 'assignedUserId', operator: 'not_equals', value: randomUUID() }])).toBe(3);
    });

    it('values are data, never SQL', async () => {
      expect(await count([{ field: 'name', operator: 'equals', value: "x' OR '1'='1" }])).toBe(0);
      expect(await count([{ field: 'name', operator: 'contains', value: '%' }])).toBe(0);
    });

    it('400 naming criteria.filters[i].field, .operator or .value for each bad part', async () => {
      const bad = async (filters: unknown[]) => {
        const res = await owner.post('/api/v1/customer-lists', { name: 'Bad', criteria: { filters } });
        expect(res.status).toBe(400);
        return res.body.error.details[0].field as string;
      };
      const ok = { field: 'status', operator: 'equals', value: 'lead' };
      expect(await bad([ok, { field: 'password', operator: 'equals', value: 'x' }])).toBe('criteria.filters[1].field');
      expect(await bad([{ field: 'org_id', operator: 'equals', value: 'x' }])).toBe('criteria.filters[0].field');
      expect(await bad([{ operator: 'equals', value: 'x' }])).toBe('criteria.filters[0].field');
      expect(await bad([{ field: 'name', operator: 'like', value: 'x' }])).toBe('criteria.filters[0].operator');
      expect(await bad([{ field: 'name', operator: 'gte', value: 'a' }])).toBe('criteria.filters[0].operator'); // not comparable
      expect(await bad([{ field: 'createdAt', operator: 'equals', value: '2024-01-01' }])).toBe('criteria.filters[0].operator');
      expect(await bad([{ field: 'statusId', operator: 'contains', value: 'x' }])).toBe('criteria.filters[0].operator');
      expect(await bad([{ field: 'status', operator: 'in', value: 'lead' }])).toBe('criteria.filters[0].value'); // in without an array
      expect(await bad([{ field: 'status', operator: 'in', value: [] }])).toBe('criteria.filters[0].value');
      expect(await bad([{ field: 'status', operator: 'in', value: ['lead', { a: 1 }] }])).toBe('criteria.filters[0].value[1]');
      expect(await bad([{ field: 'status', operator: 'equals', value: ['lead'] }])).toBe('criteria.filters[0].value');
      expect(await bad([{ field: 'status', operator: 'equals' }])).toBe('criteria.filters[0].value');
      expect(await bad([{ field: 'leadScore', operator: 'gte', value: 'high' }])).toBe('criteria.filters[0].value');
      expect(await bad([{ field: 'createdAt', operator: 'gte', value: 'yesterday' }])).toBe('criteria.filters[0].value');
      expect(await bad([{ field: 'hasChatnet', operator: 'equals', value: 'maybe' }])).toBe('criteria.filters[0].value');
      expect(await bad([{ field: 'assignedUserId', operator: 'equals', value: 'bob' }])).toBe('criteria.filters[0].value');
      expect(await bad([{ field: 'name', operator: 'contains', value: ' ' }])).toBe('criteria.filters[0].value');
      expect((await owner.post('/api/v1/customer-lists', { name: 'Bad', criteria: { filters: 'all' } })).body.error.details[0].field).toBe(
        'criteria.filters',
      );
      expect((await owner.post('/api/v1/customer-lists', { criteria: { filters: [] } })).body.error.details[0].field).toBe('name');
    });

    it('PUT validates criteria the same way', async () => {
      const id = await newList({ filters: [] });
      const res = await owner.put(`/api/v1/customer-lists/${id}`, { criteria: { filters: [{ field: 'tags', operator: 'lte', value: 1 }] } });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('criteria.filters[0].operator');
    });
  });

  describe('live evaluation', () => {
    it('contactCount and members follow contacts as they are created, changed and deleted', async () => {
      const id = await newList({ filters: [{ field: 'tags', operator: 'equals', value: 'live-test' }] });
      expect(await countOf(id)).toBe(0);
      const a = await contact(owner, { name: 'Live A', tags: ['live-test'] });
      const b = await contact(owner, { name: 'Live B' });
      expect(await countOf(id)).toBe(1);
      await owner.put(`/api/v1/contacts/${b.id}`, { tags: ['live-test'] });
      expect(await countOf(id)).toBe(2);
      expect((await owner.get('/api/v1/customer-lists')).body.find((l: { id: string }) => l.id === id).contactCount).toBe(2);
      await owner.del(`/api/v1/contacts/${a.id}`);
      expect(await countOf(id)).toBe(1);
      const members = await owner.get(`/api/v1/customer-lists/${id}/members`);
      expect(members.body.data.map((c: { id: string }) => c.id)).toEqual([b.id]);
      await owner.del(`/api/v1/contacts/${b.id}`);
    });
  });

  describe('members', () => {
    it('are paginated (default 50, max 100) and are the internal Contact', async () => {
      const tag = 'page-test';
      for (let i = 0; i < 7; i++) await contact(owner, { name: `Paged ${i}`, tags: [tag] });
      const id = await newList({ filters: [{ field: 'tags', operator: 'equals', value: tag }] });
      const first = await owner.get(`/api/v1/customer-lists/${id}/members`);
      expect(first.status).toBe(200);
      expect(first.body.pagination).toEqual({ total: 7, page: 1, limit: 50, pages: 1 });
      expect(first.body.data).toHaveLength(7);
      expect(first.body.data[0]).toEqual(
        expect.objectContaining({ id: expect.any(String), name: expect.stringMatching(/^Paged/), tags: [tag], statusId: null, assignedUserId: null }),
      );
      const p1 = await owner.get(`/api/v1/customer-lists/${id}/members?limit=3&page=1`);
      const p3 = await owner.get(`/api/v1/customer-lists/${id}/members?limit=3&page=3`);
      expect(p1.body.pagination).toEqual({ total: 7, page: 1, limit: 3, pages: 3 });
      expect(p3.body.data).toHaveLength(1);
      const p2 = await owner.get(`/api/v1/customer-lists/${id}/members?limit=3&page=2`);
      const ids = [...p1.body.data, ...p2.body.data, ...p3.body.data].map((c: { id: string }) => c.id);
      expect(new Set(ids).size).toBe(7);
      expect((await owner.get(`/api/v1/customer-lists/${id}/members?limit=500`)).body.pagination.limit).toBe(100);
      expect((await owner.get(`/api/v1/customer-lists/${id}/members?limit=abc`)).status).toBe(400);
    });
  });

  describe('permissions and tenancy', () => {
    it('writes need campaigns:manage (team_lead and above); agents may read', async () => {
      const id = await newList({ filters: [] });
      const agent = await addUser(crm.api, owner, 'agent');
      expect((await agent.as.post('/api/v1/customer-lists', { name: 'Agent list' })).status).toBe(403);
      expect((await agent.as.put(`/api/v1/customer-lists/${id}`, { name: 'x' })).status).toBe(403);
      expect((await agent.as.post(`/api/v1/customer-lists/${id}/activate`)).status).toBe(403);
      expect((await agent.as.post(`/api/v1/customer-lists/${id}/pause`)).status).toBe(403);
      expect((await agent.as.del(`/api/v1/customer-lists/${id}`)).status).toBe(403);
      expect((await agent.as.get(`/api/v1/customer-lists/${id}`)).status).toBe(200);
      expect((await agent.as.get(`/api/v1/customer-lists/${id}/members`)).status).toBe(200);
      const lead = await addUser(crm.api, owner, 'team_lead');
      expect((await lead.as.post('/api/v1/customer-lists', { name: 'Lead list' })).status).toBe(201);
      expect((await crm.api.get('/api/v1/customer-lists')).status).toBe(401);
    });

    it("another org's lists are 404 and its contacts are never counted or listed", async () => {
      const id = await newList({ filters: [{ field: 'source', operator: 'equals', value: 'website' }] });
      const g = globex.owner;
      expect((await g.get(`/api/v1/customer-lists/${id}`)).status).toBe(404);
      expect((await g.put(`/api/v1/customer-lists/${id}`, { name: 'Mine' })).status).toBe(404);
      expect((await g.post(`/api/v1/customer-lists/${id}/activate`)).status).toBe(404);
      expect((await g.post(`/api/v1/customer-lists/${id}/pause`)).status).toBe(404);
      expect((await g.get(`/api/v1/customer-lists/${id}/members`)).status).toBe(404);
      expect((await g.del(`/api/v1/customer-lists/${id}`)).status).toBe(404);
      expect((await g.get('/api/v1/customer-lists')).body.map((l: { id: string }) => l.id)).not.toContain(id);
      expect((await owner.get('/api/v1/customer-lists/not-a-uuid')).status).toBe(404);
      expect((await owner.get(`/api/v1/customer-lists/${randomUUID()}`)).status).toBe(404);

      // Both orgs have website contacts; each org's list counts only its own.
      expect(await countOf(id)).toBe(2);
      const members = await owner.get(`/api/v1/customer-lists/${id}/members`);
      expect(members.body.data.map((c: { name: string }) => c.name).sort()).toEqual(['Carl Clark', 'Nguyễn Văn An']);
      const theirs = (
        await g.post('/api/v1/customer-lists', { name: 'G', criteria: { filters: [{ field: 'source', operator: 'equals', value: 'website' }] } })
      ).body.id;
      expect(await countOf(theirs, g)).toBe(2);
      const theirMembers = await g.get(`/api/v1/customer-lists/${theirs}/members`);
      expect(theirMembers.body.data.map((c: { name: string }) => c.name).sort()).toEqual(['Nguyễn Globex', 'Other Globex']);
    });
  });

  describe('gRPC for campaigns', () => {
    it('GetCustomerList returns {id, name, status, contactCount}; NOT_FOUND for unknown, other-org or malformed ids', async () => {
      const id = await newList({ filters: [{ field: 'status', operator: 'equals', value: 'customer' }] }, 'Customers');
      const rpc = crm.crmRpc();
      const l = await rpc.GetCustomerList<{ id: string; name: string; status: string; contactCount: number }>({ id }, { orgId: acme.orgId });
      expect(l).toEqual(expect.objectContaining({ id, name: 'Customers', status: 'draft', contactCount: 1 }));
      for (const [bad, orgId] of [
        [id, globex.orgId],
        [randomUUID(), acme.orgId],
        ['nope', acme.orgId],
      ]) {
        await expect(rpc.GetCustomerList({ id: bad }, { orgId })).rejects.toMatchObject({ code: 5 });
      }
    });

    it('ResolveListMembers pages by contact id (keyset) with nextAfter empty at the end, evaluated live', async () => {
      const tag = 'rpc-test';
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await contact(owner, { name: `Rpc ${i}`, phone: `0913 100 00${i}`, tags: [tag] })).id);
      await contact(globex.owner, { name: 'Rpc Globex', tags: [tag] });
      const id = await newList({ filters: [{ field: 'tags', operator: 'equals', value: tag }] });
      const rpc = crm.crmRpc();
      type Page = {
        members: {
          id: string;
          name: string;
          phone: string;
          email: string;
          chatnetUid: string;
          status: string;
          tags: string[];
          assignedUserId: string;
        }[];
        nextAfter: string;
        total: number;
      };

      const seen: string[] = [];
      let after = '';
      let pages = 0;
      do {
        const page = await rpc.ResolveListMembers<Page>({ listId: id, afterContactId: after, limit: 2 }, { orgId: acme.orgId });
        expect(page.total).toBe(5);
        seen.push(...page.members.map((m) => m.id));
        after = page.nextAfter;
        pages++;
      } while (after);
      expect(pages).toBe(3);
      expect(seen).toEqual([...made].sort());

      const all = await rpc.ResolveListMembers<Page>({ listId: id, afterContactId: '', limit: 10 }, { orgId: acme.orgId });
      expect(all.nextAfter).toBe('');
      expect(all.members[0]).toEqual({
        id: expect.any(String),
        name: expect.stringMatching(/^Rpc \d$/),
        phone: expect.stringMatching(/^\+84913/),
        email: '',
        chatnetUid: '',
        status: 'new',
        tags: [tag],
        assignedUserId: '',
      });

      // Live: a contact that stops matching is gone from the next call.
      await owner.put(`/api/v1/contacts/${made[0]}`, { tags: [] });
      const after1 = await rpc.ResolveListMembers<Page>({ listId: id, afterContactId: '', limit: 10 }, { orgId: acme.orgId });
      expect(after1.total).toBe(4);
      expect(after1.members.map((m) => m.id)).not.toContain(made[0]);

      await expect(rpc.ResolveListMembers({ listId: id, afterContactId: '', limit: 10 }, { orgId: globex.orgId })).rejects.toMatchObject({ code: 5 });
      await expect(rpc.ResolveListMembers({ listId: id, afterContactId: 'x', limit: 10 }, { orgId: acme.orgId })).rejects.toMatchObject({ code: 3 });
    });
  });
});
