import { eventually } from '@crm/testing';
import { Client } from '../support/http';
import { addUser, CrmStack, Org, startCrmStack } from './crm-support';
import { fakeLead, startFakeGraph } from './fake-graph';

/**
 * The graph driver (SOCIALNET_DRIVER=graph): the same integration API against a Graph-API-style network,
 * here a local fake HTTP server. Credentials, pages, connect, paged lead sync, typed network errors.
 */
describe('social-network integration over the graph driver', () => {
  let crm: CrmStack;
  let graph: Awaited<ReturnType<typeof startFakeGraph>>;
  let acme: Org;
  let owner: Client;

  const ok = <T = any>(res: { status: number; body: any }, status: number): T => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as T;
  };
  const syncOf = async (syncId: string) => ok(await owner.get(`/api/v1/integrations/socialnet/leads/sync/${syncId}`), 200);
  const finished = (syncId: string) =>
    eventually(async () => {
      const s = await syncOf(syncId);
      return s.status !== 'processing' && s;
    }, 20_000);
  const startSync = async (pageId: string, formId: string) =>
    ok(await owner.post('/api/v1/integrations/socialnet/leads/sync', { pageId, formId }), 202);

  beforeAll(async () => {
    graph = await startFakeGraph();
    graph.state.pages.push({
      id: '104857600000001',
      name: 'Graph Coffee',
      followers_count: 4321,
      access_token: 'fake-page-token-0001',
      forms: [
        {
          id: '204857600000001',
          name: 'Free tasting',
          leads: [
            fakeLead('304857600000001', { full_name: 'Graph Person One', phone_number: '+84907000001', email: 'one@example.test', city: 'Hanoi' }),
            fakeLead('304857600000002', { first_name: 'Graph', last_name: 'Person Two', phone_number: '0907 000 002' }),
            fakeLead('304857600000003', { full_name: 'Graph Person Three', email: 'three@example.test' }),
            fakeLead('304857600000004', { email: 'nobody@example.test' }),
            fakeLead('304857600000005', { full_name: 'Graph Person Five', phone_number: '+84907000005' }),
          ],
        },
      ],
    });
    crm = await startCrmStack({
      serviceEnv: {
        crm: {
          SOCIALNET_DRIVER: 'graph',
          SOCIALNET_GRAPH_URL: graph.baseUrl,
          SOCIALNET_PAGE_SIZE: '2',
          SOCIALNET_RETRY_BASE_MS: '50',
          SOCIALNET_RETRY_MAX_MS: '200',
          SOCIALNET_POLL_MS: '200',
          SOCIALNET_SYNC_MAX_ATTEMPTS: '3',
        },
      },
    });
    acme = await crm.newOrg('Acme');
    owner = acme.owner;
  }, 60_000);
  afterAll(async () => {
    await crm?.stop();
    await graph?.close();
  });

  it('needs the org user token to list pages (422 until set); only admins set it and only a mask is shown', async () => {
    const before = await owner.get('/api/v1/integrations/socialnet/pages');
    expect(before.status).toBe(422);
    expect(before.body.error.code).toBe('socialnet_auth_expired');
    expect(ok(await owner.get('/api/v1/integrations/socialnet/credentials'), 200)).toEqual({ hasToken: false, tokenMask: '', updatedAt: null });

    const agent = (await addUser(crm.api, owner, 'agent')).as;
    expect((await agent.put('/api/v1/integrations/socialnet/credentials', { accessToken: graph.state.userToken })).status).toBe(403);
    expect((await owner.put('/api/v1/integrations/socialnet/credentials', {})).status).toBe(400);

    const set = ok(await owner.put('/api/v1/integrations/socialnet/credentials', { accessToken: graph.state.userToken }), 200);
    expect(set).toEqual({ hasToken: true, tokenMask: '••••0001', updatedAt: expect.any(String) });
    expect(ok(await agent.get('/api/v1/integrations/socialnet/credentials'), 200)).toEqual(set);

    const pages = ok(await owner.get('/api/v1/integrations/socialnet/pages'), 200);
    expect(pages).toEqual([{ id: '104857600000001', name: 'Graph Coffee', followers: 4321, connected: false, formCount: 1 }]);
    // Tokens travel in the Authorization header, never in a URL.
    expect(graph.state.requests.some((r) => /fake-(user|page)-token|access_token=/.test(decodeURIComponent(r.url)))).toBe(false);
    expect(graph.state.requests.at(-1)!.authorization).toBe('Bearer fake-page-token-0001');
  });

  it('connects a page and syncs its leads page by page into contacts; a second sync adds nothing', async () => {
    const integration = ok(await owner.post('/api/v1/integrations/socialnet/pages/104857600000001/connect'), 201);
    expect(integration).toEqual(
      expect.objectContaining({ type: 'socialnet', name: 'Graph Coffee', status: 'connected', config: { pageId: '104857600000001', formCount: 1 } }),
    );
    expect(ok(await owner.get('/api/v1/integrations/socialnet/pages/104857600000001/forms'), 200)).toEqual([
      { id: '204857600000001', pageId: '104857600000001', name: 'Free tasting', leadCount: 5 },
    ]);

    const started = await startSync('104857600000001', '204857600000001');
    expect(started).toEqual({ syncId: expect.any(String), status: 'processing', estimatedCount: 5, alreadyRunning: false });
    const done = await finished(started.syncId);
    expect(done.status).toBe('completed');
    expect(done.counts).toEqual({ created: 4, linked: 0, alreadyImported: 0, skipped: 1 });
    expect(done.skippedLeads).toEqual([{ leadId: '304857600000004', reason: expect.stringMatching(/^fullName: /) }]);

    const contacts = ok(await owner.get('/api/v1/contacts?source=socialnet'), 200);
    expect(contacts.data.map((c: any) => [c.name, c.phone, c.email]).sort()).toEqual([
      ['Graph Person Five', '+84907000005', null],
      ['Graph Person One', '+84907000001', 'one@example.test'],
      ['Graph Person Three', null, 'three@example.test'],
      ['Graph Person Two', '+84907000002', null],
    ]);
    const one = ok(await owner.get(`/api/v1/contacts/${contacts.data.find((c: any) => c.name === 'Graph Person One').id}`), 200);
    expect(one.notesText).toContain('city: Hanoi');
    // Five leads with a page size of 2: three lead requests, each after the cursor of the one before.
    const leadCalls = graph.state.requests.filter((r) => r.url.includes('/204857600000001/leads'));
    expect(leadCalls.map((r) => new URL(r.url, 'http://x').searchParams.get('after'))).toEqual([null, '2', '4']);

    const again = await finished((await startSync('104857600000001', '204857600000001')).syncId);
    expect(again.counts).toEqual({ created: 0, linked: 0, alreadyImported: 4, skipped: 1 });
  });

  it('a rate-limited or failing network is retried; the sync completes once it answers again', async () => {
    const form = graph.state.pages[0].forms[0];
    form.leads.push(fakeLead('304857600000006', { full_name: 'After Throttle', phone_number: '+84907000006' }));
    graph.state.failures.push(
      { status: 503, body: { error: { message: 'Service temporarily unavailable', code: 2 } }, match: /\/leads$/ },
      { status: 400, body: { error: { message: 'User request limit reached', code: 17 } }, headers: { 'retry-after': '1' }, match: /\/leads$/ },
    );
    const done = await finished((await startSync('104857600000001', '204857600000001')).syncId);
    expect(graph.state.failures).toEqual([]);
    expect(done.status).toBe('completed');
    expect(done.counts.created).toBe(1);
  });

  it('a network that keeps failing fails the sync after SOCIALNET_SYNC_MAX_ATTEMPTS (3 here) attempts in a row', async () => {
    const failing = { status: 502, body: { error: { message: 'Bad gateway', code: 1 } }, match: /\/leads$/ };
    graph.state.failures.push(failing, failing, failing);
    const failed = await finished((await startSync('104857600000001', '204857600000001')).syncId);
    expect(failed).toEqual(
      expect.objectContaining({ status: 'failed', error: { code: 'unavailable', message: expect.stringContaining('gave up after 3 attempts') } }),
    );
    expect(graph.state.failures).toEqual([]);
  });

  it('a token the network refuses fails the sync with auth_expired and the integration needs reconnecting', async () => {
    const page = graph.state.pages[0];
    page.access_token = 'fake-page-token-0002';
    const refused = await owner.post('/api/v1/integrations/socialnet/leads/sync', { pageId: page.id, formId: page.forms[0].id });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('page_not_connected');
    const integration = ok<any[]>(await owner.get('/api/v1/integrations'), 200)[0];
    expect(integration.status).toBe('auth_expired');

    // Reconnecting stores the page token the network hands out now.
    expect(ok(await owner.post(`/api/v1/integrations/socialnet/pages/${page.id}/connect`), 200).status).toBe('connected');
    // Refused once the worker asks for leads (the start itself still works).
    graph.state.failures.push({ status: 400, body: { error: { message: 'Error validating access token', code: 190 } }, match: /\/leads$/ });
    const started = await startSync(page.id, page.forms[0].id);
    const failed = await finished(started.syncId);
    expect(failed).toEqual(
      expect.objectContaining({
        status: 'failed',
        error: { code: 'auth_expired', message: expect.stringContaining('Error validating access token') },
      }),
    );
  });

  it('the sandbox control routes do not exist with another driver (404)', async () => {
    expect((await owner.post('/sandbox/socialnet/pages', { name: 'Nope' })).status).toBe(404);
  });
});
