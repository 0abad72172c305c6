import { randomUUID } from 'node:crypto';
import { Client } from '../support/http';
import { eventually } from '@crm/testing';
import { addUser, CrmStack, listenEvents, Org, startCrmStack } from './crm-support';

// Contacts through the gateway: create/list/detail/update/delete, every list filter, pagination bounds,
// phone normalisation and the duplicate rule, custom statuses, assignment, notes, friends, isolation.
describe('contacts (internal API)', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
  });
  afterAll(() => crm.stop());

  const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((c) => c.id);

  describe('POST /api/v1/contacts', () => {
    it('creates a contact (201) with a normalised phone, defaults and the full internal shape', async () => {
      const res = await owner.post('/api/v1/contacts', {
        name: 'Nguyễn Văn An',
        email: 'AN@Example.com',
        phone: '0912 345 678',
        tags: ['vip', ' VIP ', 'hanoi'],
        notes: 'met at expo',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Nguyễn Văn An',
        email: 'an@example.com',
        phone: '+84912345678',
        source: 'manual',
        status: 'new',
        statusId: null,
        assignedUserId: null,
        avatar: null,
        leadScore: 0,
        dealValue: 0,
        hasChatnet: false,
        chatnetUid: null,
        threadTypes: [],
        friends: [],
        notes: 'met at expo',
        tags: ['vip', 'hanoi'],
        customFields: {},
        lastActivity: expect.any(String),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(res.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    });

    it('is 409 (duplicate_phone, naming the existing contact) for the same number written differently', async () => {
      const first = await owner.post('/api/v1/contacts', { name: 'Dup One', phone: '+84 987-654-321' });
      expect(first.status).toBe(201);
      const again = await owner.post('/api/v1/contacts', { name: 'Dup Two', phone: '0987654321' });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('duplicate_phone');
      expect(again.body.error.details).toEqual([{ field: 'phone', message: `already belongs to contact ${first.body.id}` }]);
      // Another organization may hold the same number.
      expect((await globex.owner.post('/api/v1/contacts', { name: 'Dup Elsewhere', phone: '0987654321' })).status).toBe(201);
    });

    it('is 400 naming each bad field', async () => {
      const res = await owner.post('/api/v1/contacts', {
        name: 'X',
        email: 'not-an-email',
        status: 'wizard',
        statusId: 'nope',
        assignedUserId: 42,
        tags: 'vip',
      });
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['assignedUserId', 'email', 'status', 'statusId', 'tags']);
    });

    it('is 400 for a phone with letters, and for a contact with no name, phone or email', async () => {
      const phone = await owner.post('/api/v1/contacts', { name: 'Bad Phone', phone: 'call me' });
      expect(phone.status).toBe(400);
      expect(phone.body.error.details[0].field).toBe('phone');
      const empty = await owner.post('/api/v1/contacts', { notes: 'who?' });
      expect(empty.status).toBe(400);
      expect(empty.body.error.details[0].field).toBe('name');
    });

    it('is 400 naming assignedUserId when it is not a user of the organization', async () => {
      const stranger = await owner.post('/api/v1/contacts', { name: 'Assigned Away', assignedUserId: globex.user.id });
      expect(stranger.status).toBe(400);
      expect(stranger.body.error.details).toEqual([{ field: 'assignedUserId', message: 'is not a user of this organization' }]);
      const nobody = await owner.post('/api/v1/contacts', { name: 'Assigned Nobody', assignedUserId: randomUUID() });
      expect(nobody.status).toBe(400);
      expect(nobody.body.error.details[0].field).toBe('assignedUserId');
    });

    it('is 401 without a bearer token', async () => {
      expect((await crm.api.post('/api/v1/contacts', { name: 'Anon' })).status).toBe(401);
      expect((await crm.api.get('/api/v1/contacts')).status).toBe(401);
    });
  });

  describe('custom statuses /api/v1/contact-statuses', () => {
    it('creates, lists with contact counts, renames and deletes a status; contacts lose a deleted status', async () => {
      const created = await owner.post('/api/v1/contact-statuses', { name: 'Hot lead', color: '#FF0000', position: 1 });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        name: 'Hot lead',
        color: '#ff0000',
        position: 1,
        contactCount: 0,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const contact = await owner.post('/api/v1/contacts', { name: 'Status Holder', statusId: created.body.id });
      expect(contact.body.statusId).toBe(created.body.id);

      const list = await owner.get('/api/v1/contact-statuses');
      expect(list.status).toBe(200);
      expect(list.body).toEqual([expect.objectContaining({ id: created.body.id, contactCount: 1 })]);
      expect((await owner.get(`/api/v1/contact-statuses/${created.body.id}`)).body.name).toBe('Hot lead');

      const renamed = await owner.put(`/api/v1/contact-statuses/${created.body.id}`, { name: 'Very hot' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual(expect.objectContaining({ name: 'Very hot', color: '#ff0000', position: 1 }));

      expect((await owner.del(`/api/v1/contact-statuses/${created.body.id}`)).status).toBe(204);
      expect((await owner.get(`/api/v1/contacts/${contact.body.id}`)).body.statusId).toBeNull();
      expect((await owner.get('/api/v1/contact-statuses')).body).toEqual([]);
    });

    it('deleting a status held by several contacts clears it on each, with one contact.updated (statusId) per contact', async () => {
      const events = await listenEvents(crm.exchange, ['contact.updated']);
      try {
        const status = await owner.post('/api/v1/contact-statuses', { name: 'Shared status' });
        const holders = [];
        for (const name of ['Holder A', 'Holder B', 'Holder C'])
          holders.push((await owner.post('/api/v1/contacts', { name, statusId: status.body.id })).body.id);
        const other = await owner.post('/api/v1/contacts', { name: 'No status' });
        expect((await owner.del(`/api/v1/contact-statuses/${status.body.id}`)).status).toBe(204);
        for (const id of holders) expect((await owner.get(`/api/v1/contacts/${id}`)).body.statusId).toBeNull();
        const cleared = await eventually(async () => {
          const found = events.seen.filter(
            (e) => e.type === 'contact.updated' && e.data.changes.join() === 'statusId' && e.data.contact.statusId === null,
          );
          return found.length >= holders.length ? found : undefined;
        });
        expect(cleared.map((e) => e.data.contact.id).sort()).toEqual([...holders].sort());
        expect(cleared.every((e) => e.orgId === acme.orgId)).toBe(true);
        expect(events.find((e) => e.data.contact.id === other.body.id)).toBeUndefined();
      } finally {
        await events.close();
      }
    });

    it('is 409 for a duplicate name (any case), 400 for a bad color, 403 for an agent', async () => {
      expect((await owner.post('/api/v1/contact-statuses', { name: 'Qualified' })).status).toBe(201);
      const dup = await owner.post('/api/v1/contact-statuses', { name: 'QUALIFIED' });
      expect(dup.status).toBe(409);
      expect(dup.body.error.details[0].field).toBe('name');
      const bad = await owner.post('/api/v1/contact-statuses', { name: 'Odd', color: 'red' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].field).toBe('color');
      const agent = await addUser(crm.api, owner, 'agent');
      expect((await agent.as.post('/api/v1/contact-statuses', { name: 'Agent made' })).status).toBe(403);
      expect((await agent.as.get('/api/v1/contact-statuses')).status).toBe(200);
    });

    it('refuses a statusId of another organization (400 statusId) and hides its statuses (404)', async () => {
      const theirs = await globex.owner.post('/api/v1/contact-statuses', { name: 'Globex only' });
      const res = await owner.post('/api/v1/contacts', { name: 'Wrong status', statusId: theirs.body.id });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('statusId');
      expect((await owner.get(`/api/v1/contact-statuses/${theirs.body.id}`)).status).toBe(404);
      expect((await owner.put(`/api/v1/contact-statuses/${theirs.body.id}`, { name: 'Mine now' })).status).toBe(404);
      expect((await owner.del(`/api/v1/contact-statuses/${theirs.body.id}`)).status).toBe(404);
      expect((await owner.get('/api/v1/contact-statuses')).body.map((s: { name: string }) => s.name)).not.toContain('Globex only');
    });
  });

  describe('GET /api/v1/contacts/:id, PUT, DELETE, notes, friends', () => {
    let id: string;
    beforeAll(async () => {
      id = (await owner.post('/api/v1/contacts', { name: 'Detail Person', phone: '+1 415 555 0100', notes: 'summary text' })).body.id;
    });

    it('PUT updates only the sent fields, assigns to a user of the org, and returns the contact', async () => {
      const res = await owner.put(`/api/v1/contacts/${id}`, { status: 'customer', assignedUserId: acme.user.id, tags: ['gold'] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          id,
          name: 'Detail Person',
          phone: '+14155550100',
          status: 'customer',
          assignedUserId: acme.user.id,
          tags: ['gold'],
          notes: 'summary text',
        }),
      );
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(res.body.createdAt));
      const cleared = await owner.put(`/api/v1/contacts/${id}`, { assignedUserId: null });
      expect(cleared.body.assignedUserId).toBeNull();
      expect(cleared.body.status).toBe('customer');
    });

    it("PUT is 400 naming assignedUserId for a user of another org, and 409 for another contact's phone", async () => {
      const res = await owner.put(`/api/v1/contacts/${id}`, { assignedUserId: globex.user.id });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('assignedUserId');
      const other = await owner.post('/api/v1/contacts', { name: 'Phone Owner', phone: '+44 20 7946 0958' });
      const clash = await owner.put(`/api/v1/contacts/${id}`, { phone: '+442079460958' });
      expect(clash.status).toBe(409);
      expect(clash.body.error.details[0].message).toContain(other.body.id);
    });

    it('POST /contacts/:id/notes adds a note (201); the detail lists notes newest first', async () => {
      const first = await owner.post(`/api/v1/contacts/${id}/notes`, { content: 'first call' });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({
        id: expect.any(String),
        contactId: id,
        content: 'first call',
        createdBy: acme.user.id,
        createdAt: expect.any(String),
      });
      await owner.post(`/api/v1/contacts/${id}/notes`, { content: 'second call' });
      const empty = await owner.post(`/api/v1/contacts/${id}/notes`, { content: '  ' });
      expect(empty.status).toBe(400);
      expect(empty.body.error.details[0].field).toBe('content');

      const detail = await owner.get(`/api/v1/contacts/${id}`);
      expect(detail.status).toBe(200);
      expect(detail.body.notes.map((n: { content: string }) => n.content)).toEqual(['second call', 'first call']);
      expect(detail.body.notesText).toBe('summary text');
    });

    it('GET /contacts/:id adds conversations (empty while messaging is not reachable), appointments, activities', async () => {
      const detail = await owner.get(`/api/v1/contacts/${id}`);
      expect(detail.body).toEqual(
        expect.objectContaining({ id, name: 'Detail Person', conversations: [], appointments: [], updatedAt: expect.any(String), friends: [] }),
      );
      const types = detail.body.activities.map((a: { type: string }) => a.type);
      expect(types).toEqual(expect.arrayContaining(['created', 'updated', 'note_added']));
      expect(detail.body.activities[0]).toEqual({ type: expect.any(String), timestamp: expect.any(String), data: expect.any(String) });
      expect(detail.body.activities.find((a: { data: string }) => a.data.includes('status: new → customer'))).toBeTruthy();
    });

    it('details read at once (a batch of calls: their notes, appointments and activities each read in one query) keep every contact and org apart, newest first', async () => {
      const make = async (org: Org, name: string, notes: string[], appointments: string[]) => {
        const cid = (await org.owner.post('/api/v1/contacts', { name })).body.id as string;
        for (const content of notes) expect((await org.owner.post(`/api/v1/contacts/${cid}/notes`, { content })).status).toBe(201);
        for (const [i, title] of appointments.entries()) {
          const at = new Date(Date.UTC(2030, 0, 1 + i)).toISOString();
          expect((await org.owner.post('/api/v1/appointments', { contactId: cid, title, scheduledAt: at, duration: 30 })).status).toBe(201);
        }
        return cid;
      };
      const a1 = await make(acme, 'Batch One', ['a1 first', 'a1 second'], []);
      const a2 = await make(acme, 'Batch Two', ['a2 only'], ['a2 earlier', 'a2 later']);
      const g1 = await make(globex, 'Batch Globex', ['g1 note'], ['g1 meeting']);
      // Read one by one first: what each detail is alone.
      const alone = [
        await owner.get(`/api/v1/contacts/${a1}`),
        await owner.get(`/api/v1/contacts/${a2}`),
        await globex.owner.get(`/api/v1/contacts/${g1}`),
      ];
      expect(alone[0].body.notes.map((n: { content: string }) => n.content)).toEqual(['a1 second', 'a1 first']);
      expect(alone[1].body.appointments.map((x: { title: string }) => x.title)).toEqual(['a2 later', 'a2 earlier']);
      expect(alone[2].body.notes.map((n: { content: string }) => n.content)).toEqual(['g1 note']);
      for (let round = 0; round < 3; round++) {
        const together = await Promise.all([
          owner.get(`/api/v1/contacts/${a1}`),
          globex.owner.get(`/api/v1/contacts/${a1}`),
          owner.get(`/api/v1/contacts/${a2}`),
          globex.owner.get(`/api/v1/contacts/${g1}`),
          owner.get(`/api/v1/contacts/${g1}`),
        ]);
        expect(together.map((r) => r.status)).toEqual([200, 404, 200, 200, 404]);
        expect([together[0].body, together[2].body, together[3].body]).toEqual(alone.map((r) => r.body));
      }
    });

    it('GET /contacts/:id/friends is an empty array for a contact without chat-network friends', async () => {
      const res = await owner.get(`/api/v1/contacts/${id}/friends`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it('404 for unknown and malformed ids on every contact route', async () => {
      for (const bad of [randomUUID(), 'not-a-uuid']) {
        expect((await owner.get(`/api/v1/contacts/${bad}`)).status).toBe(404);
        expect((await owner.put(`/api/v1/contacts/${bad}`, { name: 'x' })).status).toBe(404);
        expect((await owner.del(`/api/v1/contacts/${bad}`)).status).toBe(404);
        expect((await owner.get(`/api/v1/contacts/${bad}/friends`)).status).toBe(404);
        expect((await owner.post(`/api/v1/contacts/${bad}/notes`, { content: 'x' })).status).toBe(404);
      }
    });

    it('another organization gets 404 on every route for this contact, and never sees it in lists', async () => {
      const them = globex.owner;
      const get = await them.get(`/api/v1/contacts/${id}`);
      expect(get.status).toBe(404);
      expect(get.body.error.code).toBe('not_found');
      expect((await them.put(`/api/v1/contacts/${id}`, { name: 'Stolen' })).status).toBe(404);
      expect((await them.get(`/api/v1/contacts/${id}/friends`)).status).toBe(404);
      expect((await them.post(`/api/v1/contacts/${id}/notes`, { content: 'sneaky' })).status).toBe(404);
      expect((await them.del(`/api/v1/contacts/${id}`)).status).toBe(404);
      const list = await them.get('/api/v1/contacts?limit=100&search=Detail');
      expect(ids(list)).not.toContain(id);
      expect((await owner.get(`/api/v1/contacts/${id}`)).body.name).toBe('Detail Person');
    });

    it('DELETE needs team_lead or above: an agent gets 403 and the contact stays; a team lead deletes it', async () => {
      const agent = await addUser(crm.api, owner, 'agent');
      const lead = await addUser(crm.api, owner, 'team_lead');
      const kept = await owner.post('/api/v1/contacts', { name: 'Kept By Role' });
      const refused = await agent.as.del(`/api/v1/contacts/${kept.body.id}`);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('forbidden');
      expect((await agent.as.get(`/api/v1/contacts/${kept.body.id}`)).status).toBe(200);
      // Agents still edit contacts; only deleting moved up.
      expect((await agent.as.put(`/api/v1/contacts/${kept.body.id}`, { name: 'Kept By Role 2' })).status).toBe(200);
      expect((await lead.as.del(`/api/v1/contacts/${kept.body.id}`)).status).toBe(204);
      expect((await owner.get(`/api/v1/contacts/${kept.body.id}`)).status).toBe(404);
    });

    it('DELETE removes the contact (204); afterwards it is 404', async () => {
      const doomed = await owner.post('/api/v1/contacts', { name: 'Doomed' });
      expect((await owner.del(`/api/v1/contacts/${doomed.body.id}`)).status).toBe(204);
      expect((await owner.get(`/api/v1/contacts/${doomed.body.id}`)).status).toBe(404);
    });
  });

  describe('GET /api/v1/contacts filters, sorting and pagination', () => {
    let org: Org;
    let api: Client;
    const made: Record<string, { id: string; createdAt: string }> = {};

    beforeAll(async () => {
      org = await crm.newOrg('Filters Inc');
      api = org.owner;
      const status = (await api.post('/api/v1/contact-statuses', { name: 'Pipeline A' })).body.id;
      const specs: Record<string, object> = {
        tran: {
          name: 'Trần Thị Mai',
          email: 'mai@hanoi.vn',
          phone: '0903 111 222',
          source: 'socialnet',
          status: 'lead',
          statusId: status,
          assignedUserId: org.user.id,
          tags: ['vip'],
        },
        le: { name: 'Lê Văn Bình', email: 'binh@saigon.vn', phone: '0903 999 888', status: 'customer', tags: ['wholesale'] },
        smith: { name: 'John Smith', email: 'john@smith.example', status: 'lost' },
        bare: { name: 'No Phone Person' },
      };
      for (const [key, spec] of Object.entries(specs)) {
        const res = await api.post('/api/v1/contacts', spec);
        expect(res.status).toBe(201);
        made[key] = res.body;
      }
      // A chat-network contact seen in a group thread.
      const chat = await crm
        .crmRpc()
        .UpsertChatnetContact<{ id: string }>(
          { chatnetUid: 'uid-filters-1', displayName: 'Zed Chat', avatar: '', chatnetAccountId: randomUUID(), threadType: 'group' },
          { orgId: org.orgId },
        );
      made.chat = (await api.get(`/api/v1/contacts/${chat.id}`)).body;
    });

    const list = async (qs: string) => {
      const res = await api.get(`/api/v1/contacts?${qs}`);
      expect(res.status).toBe(200);
      return res;
    };
    const namesOf = async (qs: string) => (await list(qs)).body.data.map((c: { name: string }) => c.name).sort();

    it('lists with pagination {total, page, limit, pages}, default limit 50, newest activity first', async () => {
      const res = await list('');
      expect(res.body.pagination).toEqual({ total: 5, page: 1, limit: 50, pages: 1 });
      expect(res.body.data[0].id).toBe(made.chat.id);
    });

    it('search matches name without accents, email and phone fragments (any spelling of the number)', async () => {
      expect(await namesOf('search=tran thi')).toEqual(['Trần Thị Mai']);
      expect(await namesOf('search=BINH')).toEqual(['Lê Văn Bình']);
      expect(await namesOf('search=smith.example')).toEqual(['John Smith']);
      expect(await namesOf('search=0903')).toEqual(['Lê Văn Bình', 'Trần Thị Mai']);
      expect(await namesOf('search=%2B84903111222')).toEqual(['Trần Thị Mai']);
      expect(await namesOf('search=0903111222')).toEqual(['Trần Thị Mai']);
      expect(await namesOf('search=111 222')).toEqual(['Trần Thị Mai']);
      expect(await namesOf('search=nobody-has-this')).toEqual([]);
      expect(await namesOf('search=50%25')).toEqual([]);
    });

    it('filters by source, status, statusId, assignedUserId and tag', async () => {
      expect(await namesOf('source=socialnet')).toEqual(['Trần Thị Mai']);
      expect(await namesOf('source=chatnet')).toEqual(['Zed Chat']);
      expect(await namesOf('status=customer')).toEqual(['Lê Văn Bình']);
      expect(await namesOf('status=lost')).toEqual(['John Smith']);
      const statusId = (await api.get(`/api/v1/contacts/${made.tran.id}`)).body.statusId;
      expect(await namesOf(`statusId=${statusId}`)).toEqual(['Trần Thị Mai']);
      expect(await namesOf(`assignedUserId=${org.user.id}`)).toEqual(['Trần Thị Mai']);
      expect(await namesOf(`assignedUserId=${randomUUID()}`)).toEqual([]);
      expect(await namesOf('tag=wholesale')).toEqual(['Lê Văn Bình']);
    });

    it('filters by threadType (thread types seen on the chat network)', async () => {
      expect(await namesOf('threadType=group')).toEqual(['Zed Chat']);
      expect(await namesOf('threadType=user')).toEqual([]);
      expect(await namesOf('threadType=group&hasChatnet=true')).toEqual(['Zed Chat']);
      expect(await namesOf('threadType=group&hasChatnet=unknown')).toEqual([]);
    });

    it('hasChatnet: true = chat identity known, false = no identity (manual contacts too), unknown = a phone never checked', async () => {
      expect(await namesOf('hasChatnet=true')).toEqual(['Zed Chat']);
      expect(await namesOf('hasChatnet=false')).toEqual(['John Smith', 'Lê Văn Bình', 'No Phone Person', 'Trần Thị Mai']);
      expect(await namesOf('hasChatnet=unknown')).toEqual(['Lê Văn Bình', 'Trần Thị Mai']);
      const chat = (await list('hasChatnet=true')).body.data[0];
      expect(chat).toEqual(expect.objectContaining({ hasChatnet: true, chatnetUid: 'uid-filters-1', source: 'chatnet', threadTypes: ['group'] }));
    });

    it('scoreMin/scoreMax bound leadScore (0 for new contacts)', async () => {
      expect((await list('scoreMin=0&scoreMax=0')).body.pagination.total).toBe(5);
      expect((await list('scoreMin=1')).body.pagination.total).toBe(0);
      expect((await list('scoreMax=-1')).body.pagination.total).toBe(0);
    });

    it('dateFrom/dateTo bound lastActivity: dates cover whole UTC days, timestamps are exact', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      expect((await list(`dateFrom=${today}&dateTo=${today}`)).body.pagination.total).toBe(5);
      expect((await list(`dateFrom=${tomorrow}`)).body.pagination.total).toBe(0);
      expect((await list(`dateTo=${yesterday}`)).body.pagination.total).toBe(0);
      // Contacts created from "le" on (le, smith, bare, chat); "tran" was earlier.
      expect(await namesOf(`dateFrom=${encodeURIComponent(made.le.createdAt)}`)).toEqual([
        'John Smith',
        'Lê Văn Bình',
        'No Phone Person',
        'Zed Chat',
      ]);
      expect(await namesOf(`dateTo=${encodeURIComponent(made.tran.createdAt)}`)).toEqual(['Trần Thị Mai']);
    });

    it('sortBy createdAt/lastActivity/leadScore with direction', async () => {
      const asc = (await list('sortBy=createdAt&direction=asc')).body.data.map((c: { id: string }) => c.id);
      expect(asc).toEqual([made.tran.id, made.le.id, made.smith.id, made.bare.id, made.chat.id]);
      const desc = (await list('sortBy=createdAt&direction=desc')).body.data.map((c: { id: string }) => c.id);
      expect(desc).toEqual([...asc].reverse());
      expect((await list('sortBy=lastActivity&direction=asc')).body.data[0].id).toBe(made.tran.id);
      expect((await list('sortBy=leadScore')).body.data).toHaveLength(5);
    });

    it('combines filters', async () => {
      expect(await namesOf('search=0903&status=lead')).toEqual(['Trần Thị Mai']);
      expect(await namesOf('hasChatnet=unknown&tag=vip&source=socialnet')).toEqual(['Trần Thị Mai']);
    });

    it('400 names the bad query parameter', async () => {
      const cases: [string, string][] = [
        ['status=wizard', 'status'],
        ['threadType=channel', 'threadType'],
        ['hasChatnet=maybe', 'hasChatnet'],
        ['scoreMin=ten', 'scoreMin'],
        ['scoreMin=5&scoreMax=1', 'scoreMax'],
        ['dateFrom=yesterday', 'dateFrom'],
        ['dateFrom=2024-05-02&dateTo=2024-05-01', 'dateTo'],
        ['sortBy=name', 'sortBy'],
        ['direction=up', 'direction'],
        ['statusId=abc', 'statusId'],
        ['assignedUserId=abc', 'assignedUserId'],
        ['page=abc', 'page'],
        ['limit=1.5', 'limit'],
      ];
      for (const [qs, field] of cases) {
        const res = await api.get(`/api/v1/contacts?${qs}`);
        expect({ qs, status: res.status, field: res.body.error?.details?.[0]?.field }).toEqual({ qs, status: 400, field });
      }
    });

    it('pages: limit/page select a slice; out-of-range values are clamped (limit 1..100, page >= 1)', async () => {
      const p1 = await list('limit=2&page=1&sortBy=createdAt&direction=asc');
      const p3 = await list('limit=2&page=3&sortBy=createdAt&direction=asc');
      expect(p1.body.pagination).toEqual({ total: 5, page: 1, limit: 2, pages: 3 });
      expect(ids(p1)).toEqual([made.tran.id, made.le.id]);
      expect(ids(p3)).toEqual([made.chat.id]);
      expect((await list('limit=0')).body.pagination.limit).toBe(1);
      expect((await list('limit=1000')).body.pagination.limit).toBe(100);
      expect((await list('page=0')).body.pagination.page).toBe(1);
      expect((await list('page=9')).body.data).toEqual([]);
    });

    it('limit is at most 100 even with more contacts', async () => {
      const bulk = await crm.newOrg('Bulk');
      const results = await Promise.all(Array.from({ length: 105 }, (_, i) => bulk.owner.post('/api/v1/contacts', { name: `Bulk ${i}` })));
      expect(results.every((r) => r.status === 201)).toBe(true);
      const res = await bulk.owner.get('/api/v1/contacts?limit=500');
      expect(res.body.data).toHaveLength(100);
      expect(res.body.pagination).toEqual({ total: 105, page: 1, limit: 100, pages: 2 });
      expect((await bulk.owner.get('/api/v1/contacts')).body.data).toHaveLength(50);
      // The unfiltered total is kept by a counter: it follows deletes too.
      await bulk.owner.del(`/api/v1/contacts/${results[0].body.id}`);
      expect((await bulk.owner.get('/api/v1/contacts')).body.pagination.total).toBe(104);
    });
  });
});
