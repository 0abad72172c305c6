import { eventually } from '@crm/testing';
import { Client, client } from '../support/http';
import { addUser, CrmStack, listenEvents, Org, startCrmStack } from './crm-support';

/**
 * The social-network integration end to end through the gateway: the sandbox network is seeded through its
 * control routes, pages are listed and connected, and lead syncs turn lead-form entries into contacts.
 */
describe('social-network integration', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;

  const ok = <T = any>(res: { status: number; body: any }, status: number): T => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as T;
  };
  const seedPage = async (name: string, followers = 0, as: Client = owner) => ok(await as.post('/sandbox/socialnet/pages', { name, followers }), 201);
  const seedForm = async (pageId: string, name: string, as: Client = owner) =>
    ok(await as.post(`/sandbox/socialnet/pages/${pageId}/forms`, { name }), 201);
  const seedLeads = async (formId: string, leads: object[], as: Client = owner) =>
    ok(await as.post(`/sandbox/socialnet/forms/${formId}/leads`, { leads }), 200);
  const connect = async (pageId: string, as: Client = owner) => {
    const res = await as.post(`/api/v1/integrations/socialnet/pages/${pageId}/connect`);
    if (res.status !== 201 && res.status !== 200) throw new Error(`connect failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const startSync = async (pageId: string, formId: string, as: Client = owner) =>
    ok(await as.post('/api/v1/integrations/socialnet/leads/sync', { pageId, formId }), 202);
  const syncOf = async (syncId: string, as: Client = owner) => ok(await as.get(`/api/v1/integrations/socialnet/leads/sync/${syncId}`), 200);
  /** The sync once it is no longer processing. */
  const finished = (syncId: string, timeoutMs = 20_000) =>
    eventually(async () => {
      const s = await syncOf(syncId);
      return s.status !== 'processing' && s;
    }, timeoutMs);
  const socialnetContacts = async (extra = '', as: Client = owner) => ok(await as.get(`/api/v1/contacts?source=socialnet&limit=100${extra}`), 200);
  /** n distinct leads; `exchange` (3 digits) keeps each batch's phone numbers apart from the others'. */
  const leadsBatch = (prefix: string, exchange: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `${prefix}-${i}`,
      fullName: `${prefix} person ${i}`,
      phone: `+1415${exchange}${String(i).padStart(4, '0')}`,
    }));

  beforeAll(async () => {
    crm = await startCrmStack({
      serviceEnv: {
        // Small pages so a few hundred leads make many pages; quick retries so an outage ending is seen soon.
        crm: {
          SOCIALNET_PAGE_SIZE: '10',
          SOCIALNET_RETRY_BASE_MS: '50',
          SOCIALNET_RETRY_MAX_MS: '200',
          SOCIALNET_SYNC_MAX_ATTEMPTS: '100000',
          SOCIALNET_POLL_MS: '200',
        },
      },
    });
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
  }, 60_000);
  afterAll(async () => {
    await crm?.stop();
  });

  describe('pages and connecting', () => {
    let pageId: string;
    let formId: string;

    beforeAll(async () => {
      pageId = (await seedPage('Acme Shoes', 1200)).id;
      formId = (await seedForm(pageId, 'Spring promo')).id;
      await seedForm(pageId, 'Newsletter');
      await seedLeads(formId, [{ fullName: 'Lan Pham', phone: '0901 000 001' }]);
    });

    it('lists the network pages the org can reach, not yet connected', async () => {
      const pages = ok<any[]>(await owner.get('/api/v1/integrations/socialnet/pages'), 200);
      expect(pages).toContainEqual({ id: pageId, name: 'Acme Shoes', followers: 1200, connected: false, formCount: 2 });
    });

    it('connects a page: an Integration with config {pageId, formCount}; the token is never shown', async () => {
      const res = await owner.post(`/api/v1/integrations/socialnet/pages/${pageId}/connect`);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        type: 'socialnet',
        name: 'Acme Shoes',
        status: 'connected',
        config: { pageId, formCount: 2 },
        lastSync: null,
        createdAt: expect.any(String),
      });
      expect(JSON.stringify(res.body)).not.toMatch(/token|SNP/i);

      const again = await owner.post(`/api/v1/integrations/socialnet/pages/${pageId}/connect`);
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(res.body.id);

      const list = ok<any[]>(await owner.get('/api/v1/integrations'), 200);
      expect(list).toContainEqual(again.body);
      const pages = ok<any[]>(await owner.get('/api/v1/integrations/socialnet/pages'), 200);
      expect(pages).toContainEqual({ id: pageId, name: 'Acme Shoes', followers: 1200, connected: true, formCount: 2 });
    });

    it('lists the forms of a connected page with their lead counts', async () => {
      const forms = ok<any[]>(await owner.get(`/api/v1/integrations/socialnet/pages/${pageId}/forms`), 200);
      expect(forms).toEqual([
        { id: formId, pageId, name: 'Spring promo', leadCount: 1 },
        { id: expect.any(String), pageId, name: 'Newsletter', leadCount: 0 },
      ]);
    });

    it('disconnects (204): kept as disconnected, syncs refused with 422 until connected again', async () => {
      const integration = await connect(pageId);
      expect((await owner.del(`/api/v1/integrations/${integration.id}`)).status).toBe(204);
      const list = ok<any[]>(await owner.get('/api/v1/integrations'), 200);
      expect(list.find((i) => i.id === integration.id)).toEqual(
        expect.objectContaining({ status: 'disconnected', config: { pageId, formCount: 2 } }),
      );
      const pages = ok<any[]>(await owner.get('/api/v1/integrations/socialnet/pages'), 200);
      expect(pages.find((p) => p.id === pageId).connected).toBe(false);

      const sync = await owner.post('/api/v1/integrations/socialnet/leads/sync', { pageId, formId });
      expect(sync.status).toBe(422);
      expect(sync.body.error.code).toBe('page_not_connected');
      expect((await owner.get(`/api/v1/integrations/socialnet/pages/${pageId}/forms`)).status).toBe(422);

      const back = await owner.post(`/api/v1/integrations/socialnet/pages/${pageId}/connect`);
      expect(back.status).toBe(200);
      expect(back.body).toEqual(expect.objectContaining({ id: integration.id, status: 'connected' }));
    });
  });

  describe('lead sync', () => {
    let pageId: string;
    let formId: string;
    let integrationId: string;

    beforeAll(async () => {
      pageId = (await seedPage('Acme Bikes', 50)).id;
      formId = (await seedForm(pageId, 'Test ride')).id;
      await seedLeads(formId, [
        {
          id: 'ride-1',
          fullName: 'Minh Tran',
          phone: '0902 111 001',
          email: 'Minh@Example.test',
          fields: { Budget: '5000' },
          'Preferred day': 'Saturday',
        },
        { id: 'ride-2', fullName: 'Hoa Le', phone: '0902 111 002' },
        { id: 'ride-3', fullName: 'No Phone Person', email: 'np@example.test' },
      ]);
      integrationId = (await connect(pageId)).id;
    });

    it('202 processing with the form lead count, then completed: every lead a contact with source socialnet', async () => {
      const events = await listenEvents(crm.exchange, ['contact.created']);
      try {
        const started = await startSync(pageId, formId);
        expect(started).toEqual({ syncId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'processing', estimatedCount: 3, alreadyRunning: false });

        const done = await finished(started.syncId);
        expect(done).toEqual({
          syncId: started.syncId,
          integrationId,
          pageId,
          formId,
          status: 'completed',
          estimatedCount: 3,
          counts: { created: 3, linked: 0, alreadyImported: 0, skipped: 0 },
          skippedLeads: [],
          error: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          completedAt: expect.any(String),
        });

        const contacts = await socialnetContacts('&search=0902');
        expect(contacts.pagination.total).toBe(2);
        const minh = contacts.data.find((c: any) => c.name === 'Minh Tran');
        expect(minh).toEqual(expect.objectContaining({ source: 'socialnet', status: 'lead', phone: '+84902111001', email: 'minh@example.test' }));
        const detail = ok(await owner.get(`/api/v1/contacts/${minh.id}`), 200);
        expect(detail.notesText).toContain('Lead ride-1 from form "Test ride"');
        expect(detail.notesText).toContain('Budget: 5000');
        expect(detail.notesText).toContain('Preferred day: Saturday');

        // contact.created went out for each new contact, like any other contact creation.
        const created = await eventually(async () => {
          const mine = events.seen.filter(
            (e) =>
              e.orgId === acme.orgId && e.data.contact.source === 'socialnet' && /^(Minh Tran|Hoa Le|No Phone Person)$/.test(e.data.contact.name),
          );
          return mine.length === 3 && mine;
        });
        expect(created.map((e) => e.data.contact.name).sort()).toEqual(['Hoa Le', 'Minh Tran', 'No Phone Person']);

        const integration = ok<any[]>(await owner.get('/api/v1/integrations'), 200).find((i) => i.id === integrationId);
        expect(integration.lastSync).toEqual(expect.any(String));
        expect(integration.config).toEqual({ pageId, formCount: 1 });
      } finally {
        await events.close();
      }
    });

    it('syncing the same form again creates no duplicates; new leads are imported', async () => {
      const before = (await socialnetContacts()).pagination.total;
      const again = await finished((await startSync(pageId, formId)).syncId);
      expect(again.counts).toEqual({ created: 0, linked: 0, alreadyImported: 3, skipped: 0 });
      expect((await socialnetContacts()).pagination.total).toBe(before);

      await seedLeads(formId, [
        { id: 'ride-4', fullName: 'Quang Vo', phone: '0902 111 004' },
        { id: 'ride-1', fullName: 'Resent duplicate' },
      ]);
      const third = await finished((await startSync(pageId, formId)).syncId);
      expect(third.counts).toEqual({ created: 1, linked: 0, alreadyImported: 3, skipped: 0 });
      expect((await socialnetContacts()).pagination.total).toBe(before + 1);
    });

    it('a lead whose phone belongs to an existing contact is linked to it, which stays as the team keeps it', async () => {
      const existing = ok(
        await owner.post('/api/v1/contacts', { name: 'Khanh (VIP)', phone: '0903 222 001', source: 'manual', status: 'customer' }),
        201,
      );
      const form = await seedForm(pageId, 'Warranty');
      await seedLeads(form.id, [{ id: 'warranty-1', fullName: 'Khanh Nguyen', phone: '+84 903 222 001', email: 'khanh@example.test' }]);
      const done = await finished((await startSync(pageId, form.id)).syncId);
      expect(done.counts).toEqual({ created: 0, linked: 1, alreadyImported: 0, skipped: 0 });

      const byPhone = ok(await owner.get('/api/v1/contacts?search=0903222001'), 200);
      expect(byPhone.pagination.total).toBe(1);
      expect(byPhone.data[0]).toEqual(
        expect.objectContaining({ id: existing.id, name: 'Khanh (VIP)', source: 'manual', status: 'customer', email: null }),
      );

      const second = await finished((await startSync(pageId, form.id)).syncId);
      expect(second.counts).toEqual({ created: 0, linked: 0, alreadyImported: 1, skipped: 0 });
    });

    it('rows that cannot be contacts are skipped with their reasons; the rest are imported', async () => {
      const form = await seedForm(pageId, 'Messy form');
      await seedLeads(form.id, [
        { id: 'messy-1', fullName: '', phone: '', email: 'only-email@example.test' },
        { id: 'messy-2', fullName: 'Letters In Phone', phone: 'call me maybe' },
        { id: 'messy-3', fullName: 'Bad Email', phone: '0904 333 003', email: 'not-an-email' },
        { id: 'messy-4', fullName: 'Fine Person', phone: '0904 333 004' },
      ]);
      const done = await finished((await startSync(pageId, form.id)).syncId);
      expect(done.status).toBe('completed');
      expect(done.counts).toEqual({ created: 1, linked: 0, alreadyImported: 0, skipped: 3 });
      expect(done.skippedLeads).toEqual([
        { leadId: 'messy-1', reason: expect.stringMatching(/^fullName: /) },
        { leadId: 'messy-2', reason: expect.stringMatching(/^phone: /) },
        { leadId: 'messy-3', reason: expect.stringMatching(/^email: /) },
      ]);
    });

    it('a revoked page token fails the check with 422 and marks the integration auth_expired until reconnected', async () => {
      const form = await seedForm(pageId, 'After revoke');
      await seedLeads(form.id, [{ id: 'revoke-1', fullName: 'Tuan Bui', phone: '0905 444 001' }]);
      ok(await owner.post(`/sandbox/socialnet/pages/${pageId}/revoke`), 200);

      const refused = await owner.post('/api/v1/integrations/socialnet/leads/sync', { pageId, formId: form.id });
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe('page_not_connected');
      const integration = ok<any[]>(await owner.get('/api/v1/integrations'), 200).find((i) => i.id === integrationId);
      expect(integration.status).toBe('auth_expired');

      expect((await connect(pageId)).status).toBe('connected');
      const done = await finished((await startSync(pageId, form.id)).syncId);
      expect(done.counts.created).toBe(1);
    });

    it('a token revoked while a sync waits makes that sync fail with auth_expired', async () => {
      const form = await seedForm(pageId, 'Revoked mid-sync');
      await seedLeads(form.id, leadsBatch('revmid', '201', 30));
      ok(await owner.post(`/sandbox/socialnet/pages/${pageId}/outage`, { afterLeads: 10 }), 200);
      const started = await startSync(pageId, form.id);
      await eventually(async () => (await syncOf(started.syncId)).error?.code === 'unavailable');
      ok(await owner.post(`/sandbox/socialnet/pages/${pageId}/revoke`), 200);
      ok(await owner.post(`/sandbox/socialnet/pages/${pageId}/outage`, { afterLeads: null }), 200);
      const done = await finished(started.syncId);
      expect(done).toEqual(expect.objectContaining({ status: 'failed', error: { code: 'auth_expired', message: expect.any(String) } }));
      expect(done.counts.created).toBe(10);
      expect(ok<any[]>(await owner.get('/api/v1/integrations'), 200).find((i) => i.id === integrationId).status).toBe('auth_expired');
      await connect(pageId);
    });
  });

  describe('resuming after a restart', () => {
    let pageId: string;

    beforeAll(async () => {
      pageId = (await seedPage('Acme Outlet', 10)).id;
      await connect(pageId);
    });

    it('a sync held up by an outage survives a restart of crm and resumes from its cursor: nothing twice', async () => {
      const form = await seedForm(pageId, 'Big promo');
      await seedLeads(form.id, leadsBatch('outage', '202', 300));
      ok(await owner.post(`/sandbox/socialnet/pages/${pageId}/outage`, { afterLeads: 150 }), 200);
      const started = await startSync(pageId, form.id);
      expect(started.estimatedCount).toBe(300);

      const held = await eventually(async () => {
        const s = await syncOf(started.syncId);
        return s.counts.created === 150 && s.error?.code === 'unavailable' && s;
      }, 20_000);
      expect(held.status).toBe('processing');
      // Asking again while it runs gives the same sync.
      const twice = await startSync(pageId, form.id);
      expect(twice).toEqual({ syncId: started.syncId, status: 'processing', estimatedCount: 300, alreadyRunning: true });

      await crm.stack.restart('crm');
      ok(await owner.post(`/sandbox/socialnet/pages/${pageId}/outage`, { afterLeads: null }), 200);

      const done = await finished(started.syncId, 30_000);
      expect(done.status).toBe('completed');
      // alreadyImported 0: the second run started after the last committed page, not from the beginning.
      expect(done.counts).toEqual({ created: 300, linked: 0, alreadyImported: 0, skipped: 0 });
      expect((await socialnetContacts('&search=outage person')).pagination.total).toBe(300);
    }, 60_000);

    it('a restart in the middle of paging loses and repeats nothing', async () => {
      const form = await seedForm(pageId, 'Bigger promo');
      await seedLeads(form.id, leadsBatch('midway', '203', 400));
      const started = await startSync(pageId, form.id);
      // Wherever the worker is when crm stops (likely inside a page), that page commits or rolls back whole.
      await crm.stack.restart('crm');
      // A restart and 400 contacts (each scored in its page's transaction): seconds when quiet, more on a busy machine.
      const done = await finished(started.syncId, 60_000);
      expect(done.counts).toEqual({ created: 400, linked: 0, alreadyImported: 0, skipped: 0 });
      expect((await socialnetContacts('&search=midway person')).pagination.total).toBe(400);
    }, 90_000);
  });

  describe('disconnecting while a sync runs', () => {
    it('fails the running sync with page_not_connected; what it imported stays', async () => {
      const pageId = (await seedPage('Acme Closing', 1)).id;
      const form = await seedForm(pageId, 'Last call');
      await seedLeads(form.id, leadsBatch('closing', '204', 25));
      const integration = await connect(pageId);
      ok(await owner.post(`/sandbox/socialnet/pages/${pageId}/outage`, { afterLeads: 10 }), 200);
      const started = await startSync(pageId, form.id);
      await eventually(async () => (await syncOf(started.syncId)).error?.code === 'unavailable');

      expect((await owner.del(`/api/v1/integrations/${integration.id}`)).status).toBe(204);
      const failed = await syncOf(started.syncId);
      expect(failed).toEqual(expect.objectContaining({ status: 'failed', error: { code: 'page_not_connected', message: expect.any(String) } }));
      expect(failed.counts.created).toBe(10);
      expect((await socialnetContacts('&search=closing person')).pagination.total).toBe(10);
    });
  });

  describe('roles, organizations and validation', () => {
    let pageId: string;
    let formId: string;
    let integrationId: string;
    let syncId: string;

    beforeAll(async () => {
      pageId = (await seedPage('Acme Private', 5)).id;
      formId = (await seedForm(pageId, 'Private form')).id;
      await seedLeads(formId, [{ id: 'private-1', fullName: 'Private Lead', phone: '0906 555 001' }]);
      integrationId = (await connect(pageId)).id;
      syncId = (await startSync(pageId, formId)).syncId;
      await finished(syncId);
    });

    it('agents read pages and start syncs, but cannot connect, disconnect or control the sandbox (403)', async () => {
      const agent = (await addUser(crm.api, owner, 'agent')).as;
      expect((await agent.get('/api/v1/integrations/socialnet/pages')).status).toBe(200);
      expect((await agent.get('/api/v1/integrations')).status).toBe(200);
      expect((await agent.post(`/api/v1/integrations/socialnet/pages/${pageId}/connect`)).status).toBe(403);
      expect((await agent.del(`/api/v1/integrations/${integrationId}`)).status).toBe(403);
      expect((await agent.post('/sandbox/socialnet/pages', { name: 'Agent page' })).status).toBe(403);
      expect((await agent.post(`/sandbox/socialnet/forms/${formId}/leads`, { leads: [{ fullName: 'x' }] })).status).toBe(403);
      const sync = await agent.post('/api/v1/integrations/socialnet/leads/sync', { pageId, formId });
      expect(sync.status).toBe(202);
      expect((await finished(sync.body.syncId)).counts).toEqual({ created: 0, linked: 0, alreadyImported: 1, skipped: 0 });

      const admin = (await addUser(crm.api, owner, 'admin')).as;
      expect((await admin.post(`/api/v1/integrations/socialnet/pages/${pageId}/connect`)).status).toBe(200);
    });

    it('another organization sees none of it: its ids are 404', async () => {
      const other = globex.owner;
      expect(ok<any[]>(await other.get('/api/v1/integrations/socialnet/pages'), 200).find((p) => p.id === pageId)).toBeUndefined();
      expect(ok<any[]>(await other.get('/api/v1/integrations'), 200)).toEqual([]);
      expect((await other.post(`/api/v1/integrations/socialnet/pages/${pageId}/connect`)).status).toBe(404);
      expect((await other.get(`/api/v1/integrations/socialnet/pages/${pageId}/forms`)).status).toBe(404);
      expect((await other.post('/api/v1/integrations/socialnet/leads/sync', { pageId, formId })).status).toBe(404);
      expect((await other.get(`/api/v1/integrations/socialnet/leads/sync/${syncId}`)).status).toBe(404);
      expect((await other.del(`/api/v1/integrations/${integrationId}`)).status).toBe(404);
      expect((await other.post(`/sandbox/socialnet/pages/${pageId}/forms`, { name: 'Hijack' })).status).toBe(404);
      expect((await other.post(`/sandbox/socialnet/forms/${formId}/leads`, { leads: [{ fullName: 'x' }] })).status).toBe(404);
      expect((await other.post(`/sandbox/socialnet/pages/${pageId}/revoke`)).status).toBe(404);
      expect((await socialnetContacts('', other)).pagination.total).toBe(0);
    });

    it('unknown and malformed ids are 404', async () => {
      expect((await owner.post('/api/v1/integrations/socialnet/pages/999999999999999/connect')).status).toBe(404);
      expect((await owner.post('/api/v1/integrations/socialnet/pages/bad%20id/connect')).status).toBe(404);
      expect((await owner.get('/api/v1/integrations/socialnet/leads/sync/not-a-uuid')).status).toBe(404);
      expect((await owner.get('/api/v1/integrations/socialnet/leads/sync/00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await owner.del('/api/v1/integrations/00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await owner.post('/api/v1/integrations/socialnet/leads/sync', { pageId, formId: '123456789012345' })).status).toBe(404);
      expect((await owner.post('/api/v1/integrations/socialnet/leads/sync', { pageId: '123456789012345', formId })).status).toBe(404);
    });

    it('400 names the field', async () => {
      const fieldsOf = (res: { body: any }) => res.body.error.details.map((d: any) => d.field);
      const noIds = await owner.post('/api/v1/integrations/socialnet/leads/sync', {});
      expect(noIds.status).toBe(400);
      expect(fieldsOf(noIds)).toEqual(['pageId', 'formId']);
      const blank = await owner.post('/api/v1/integrations/socialnet/leads/sync', { pageId: ' ', formId });
      expect(blank.status).toBe(400);
      expect(fieldsOf(blank)).toEqual(['pageId']);

      const noName = await owner.post('/sandbox/socialnet/pages', { followers: 3 });
      expect(noName.status).toBe(400);
      expect(fieldsOf(noName)).toEqual(['name']);
      expect(fieldsOf(await owner.post('/sandbox/socialnet/pages', { name: 'P', followers: -1 }))).toEqual(['followers']);
      expect(fieldsOf(await owner.post(`/sandbox/socialnet/pages/${pageId}/forms`, {}))).toEqual(['name']);
      expect(fieldsOf(await owner.post(`/sandbox/socialnet/forms/${formId}/leads`, { leads: [] }))).toEqual(['leads']);
      expect(fieldsOf(await owner.post(`/sandbox/socialnet/forms/${formId}/leads`, { leads: [{ id: 'bad id!' }] }))).toEqual(['leads.0.id']);
      expect(fieldsOf(await owner.post(`/sandbox/socialnet/pages/${pageId}/outage`, {}))).toEqual(['afterLeads']);
    });

    it('401 without a token', async () => {
      const anonymous = client(crm.stack.url);
      expect((await anonymous.get('/api/v1/integrations')).status).toBe(401);
      expect((await anonymous.get('/api/v1/integrations/socialnet/pages')).status).toBe(401);
      expect((await anonymous.post('/api/v1/integrations/socialnet/leads/sync', { pageId, formId })).status).toBe(401);
      expect((await anonymous.post('/sandbox/socialnet/pages', { name: 'P' })).status).toBe(401);
    });
  });
});
