import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { client, email, newOrg, type Client } from '../support/http';
import { startStack, Stack } from '../support/stack';

/** Every path in `v` whose value is the empty string. */
function emptyStrings(v: unknown, path = '$', out: string[] = []): string[] {
  if (v === '') out.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => emptyStrings(x, `${path}[${i}]`, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) emptyStrings(x, `${path}.${k}`, out);
  return out;
}

// Issue #15, shapes: an absent value is null, never ""; hasChatnet is a boolean; lastLogin is null until the
// first sign-in; analytics figures the spec types as numbers are numbers (0 beside a sample size of 0).
describe('response shapes', () => {
  let stack: Stack;
  let api: Client;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;
  let owner: Client;

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'messaging', 'chatnet-connector', 'automation', 'webhooks', 'ai'],
      serviceEnv: {
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' },
        // The filters' meaning with numbers never looked up; the check itself: tests/crm/chatnet-phone-check.test.ts.
        crm: { CHATNET_PHONE_CHECK: 'false' },
      },
    });
    api = client(stack.url);
    org = await newOrg(api, 'Acme');
    other = await newOrg(api, 'Globex');
    owner = org.owner;
  }, 120_000);
  afterAll(() => stack?.stop());

  describe('no "" anywhere: records created with their optional fields left empty', () => {
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      const made = async (name: string, path: string, body: unknown) => {
        const res = await owner.post(path, body);
        if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
        expect([path, emptyStrings(res.body)]).toEqual([path, []]);
        ids[name] = res.body.id;
      };
      await made('user', '/api/v1/users', { email: email('agent'), fullName: 'Agent', role: 'agent', password: 'correct horse battery' });
      await made('contact', '/api/v1/contacts', { name: 'Min' });
      await made('phoneContact', '/api/v1/contacts', { name: 'Phone Only', phone: '0911 000 222' });
      await made('appointment', '/api/v1/appointments', { contactId: ids.contact, title: 'Call', scheduledAt: '2031-01-01T00:00:00Z' });
      await made('team', '/api/v1/teams', { name: 'Team' });
      await made('rule', '/api/v1/automation/rules', {
        name: 'Rule',
        trigger: { type: 'contact_created' },
        actions: [{ type: 'add_tag', tag: 'x' }],
      });
      await made('template', '/api/v1/automation/templates', { name: 'Hello', content: 'Hi' });
      await made('list', '/api/v1/customer-lists', { name: 'List' });
      await made('campaign', '/api/v1/campaigns', { name: 'Campaign', type: 'broadcast', listId: ids.list, templateId: ids.template });
      await made('webhook', '/api/v1/webhook-settings', { url: 'https://hooks.invalid/x', events: ['contact.created'] });
      await made('folder', '/api/v1/chat/folders', { name: 'Folder' });
      await made('preset', '/api/v1/chat/presets', { name: 'Preset', content: 'x' });
      await made('status', '/api/v1/contact-statuses', { name: 'Warm' });
      await made('note', `/api/v1/contacts/${ids.contact}/notes`, { content: 'n' });
      await made('account', '/api/v1/chatnet-accounts', { displayName: 'Line' });
      await owner.post(`/api/v1/chatnet-accounts/${ids.account}/login`);
      await owner.post(`/sandbox/accounts/${ids.account}/scan`, {});
      await owner.post(`/sandbox/accounts/${ids.account}/inbound`, { fromUid: 'uid-shapes', content: 'hello' });
      ids.conversation = await eventually(async () => (await owner.get('/api/v1/conversations')).body.data[0]?.id);
      // A delivery attempt that got no answer (the host does not resolve): no response body.
      await eventually(async () => (await owner.get(`/api/v1/webhook-settings/${ids.webhook}/deliveries`)).body.data[0]?.attempts[0]);
    }, 60_000);

    const internal = () => [
      '/profile',
      '/users',
      `/users/${ids.user}`,
      '/contacts',
      `/contacts/${ids.contact}`,
      `/contacts/${ids.phoneContact}`,
      '/appointments',
      `/appointments/${ids.appointment}`,
      '/teams',
      `/teams/${ids.team}`,
      '/automation/rules',
      `/automation/rules/${ids.rule}`,
      '/automation/templates',
      `/automation/templates/${ids.template}`,
      '/campaigns',
      `/campaigns/${ids.campaign}`,
      '/customer-lists',
      `/customer-lists/${ids.list}`,
      `/customer-lists/${ids.list}/members`,
      '/webhook-settings',
      `/webhook-settings/${ids.webhook}`,
      `/webhook-settings/${ids.webhook}/deliveries`,
      '/chat/folders',
      '/chat/presets',
      `/chat/presets/${ids.preset}`,
      '/contact-statuses',
      `/contact-statuses/${ids.status}`,
      '/chatnet-accounts',
      `/chatnet-accounts/${ids.account}`,
      `/chatnet-accounts/${ids.account}/status`,
      '/conversations',
      `/conversations/${ids.conversation}`,
      '/analytics/conversion-funnel',
      '/analytics/team-performance',
      '/analytics/response-time',
      '/ai/config',
      '/scoring/config',
    ];

    it('GET of every internal resource answers 200 with no empty string', async () => {
      for (const path of internal()) {
        const res = await owner.get(`/api/v1${path}`);
        expect([path, res.status, emptyStrings(res.body)]).toEqual([path, 200, []]);
      }
    });

    it('the spec’s one exception: an AI provider’s keyMask is "" when it has no key', async () => {
      const res = await owner.get('/api/v1/ai/providers');
      expect(res.status).toBe(200);
      const withoutKey = res.body.filter((p: { hasKey: boolean }) => !p.hasKey);
      expect(withoutKey.length).toBeGreaterThan(0);
      for (const p of withoutKey) expect(emptyStrings(p)).toEqual(['$.keyMask']);
    });

    it('the public API too (contacts, appointments, conversations)', async () => {
      const pub = api.withKey((await owner.post('/api/v1/settings/api-key/generate')).body.apiKey);
      for (const path of [
        '/contacts',
        `/contacts/${ids.contact}`,
        '/appointments',
        '/conversations',
        `/conversations/${ids.conversation}/messages`,
      ]) {
        const res = await pub.get(`/api/public${path}`);
        expect([path, res.status, emptyStrings(res.body)]).toEqual([path, 200, []]);
      }
    });

    it('the nulls are where the values are missing', async () => {
      const c = (await owner.get(`/api/v1/contacts/${ids.contact}`)).body;
      expect(c).toEqual(expect.objectContaining({ email: null, phone: null, avatar: null, notesText: null, hasChatnet: false }));
      const a = (await owner.get(`/api/v1/appointments/${ids.appointment}`)).body;
      expect(a).toEqual(expect.objectContaining({ description: null, location: null }));
      const acc = (await owner.get(`/api/v1/chatnet-accounts/${ids.account}`)).body;
      expect(acc).toEqual(expect.objectContaining({ avatarUrl: null, phone: null }));
      // A value that is set stays as it is.
      const set = await owner.put(`/api/v1/contacts/${ids.contact}`, { email: 'min@example.test' });
      expect(set.body.email).toBe('min@example.test');
      // Clearing it ("" is how a client clears it) shows null again.
      expect((await owner.put(`/api/v1/contacts/${ids.contact}`, { email: '' })).body.email).toBeNull();
    });
  });

  describe('hasChatnet is a boolean; the filter’s false includes manual contacts', () => {
    let manual: string;
    let withPhone: string;
    let fromNetwork: string;

    beforeAll(async () => {
      const o = other.owner;
      manual = (await o.post('/api/v1/contacts', { name: 'No Phone' })).body.id;
      withPhone = (await o.post('/api/v1/contacts', { name: 'Has Phone', phone: '0911 333 444' })).body.id;
      const account = (await o.post('/api/v1/chatnet-accounts', { displayName: 'Line' })).body.id;
      await o.post(`/api/v1/chatnet-accounts/${account}/login`);
      await o.post(`/sandbox/accounts/${account}/scan`, {});
      await o.post(`/sandbox/accounts/${account}/inbound`, { fromUid: 'uid-network', fromName: 'On Network', content: 'hi' });
      fromNetwork = await eventually(async () => (await o.get('/api/v1/contacts?search=Network')).body.data[0]?.id);
    }, 60_000);

    const idsOf = async (query: string) =>
      ((await other.owner.get(`/api/v1/contacts?${query}`)).body.data as { id: string }[]).map((c) => c.id).sort();

    it('every contact in a list has hasChatnet true or false, never null', async () => {
      const res = await other.owner.get('/api/v1/contacts');
      expect(res.body.data.map((c: { id: string; hasChatnet: unknown }) => [c.id, c.hasChatnet]).sort()).toEqual(
        [
          [manual, false],
          [withPhone, false],
          [fromNetwork, true],
        ].sort(),
      );
    });

    it('hasChatnet=true: contacts with a chat-network identity', async () => {
      expect(await idsOf('hasChatnet=true')).toEqual([fromNetwork]);
    });

    it('hasChatnet=false: every contact without one, manual ones with or without a phone', async () => {
      expect(await idsOf('hasChatnet=false')).toEqual([manual, withPhone].sort());
    });

    it('hasChatnet=unknown: contacts with a phone that was never checked on the network', async () => {
      expect(await idsOf('hasChatnet=unknown')).toEqual([withPhone]);
    });

    it('a bad value is 400 naming hasChatnet', async () => {
      const res = await other.owner.get('/api/v1/contacts?hasChatnet=maybe');
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('hasChatnet');
    });

    it('the filter never reaches another organization’s contacts', async () => {
      const mine = await owner.get('/api/v1/contacts?hasChatnet=false');
      expect(mine.body.data.map((c: { id: string }) => c.id)).not.toEqual(expect.arrayContaining([manual]));
      expect((await owner.get(`/api/v1/contacts/${manual}`)).status).toBe(404);
    });
  });

  describe('lastLogin', () => {
    it('POST /api/v1/users answers lastLogin null; it stays null until the first sign-in, then is a timestamp', async () => {
      const e = email('newbie');
      const created = await owner.post('/api/v1/users', { email: e, fullName: 'New Bie', role: 'agent', password: 'correct horse battery' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual(expect.objectContaining({ id: expect.any(String), lastLogin: null }));
      const before = await owner.get(`/api/v1/users/${created.body.id}`);
      expect(before.body).toEqual(expect.objectContaining({ lastLogin: null, department: null, phone: null, avatar: null }));
      const listed = (await owner.get('/api/v1/users')).body.data.find((u: { id: string }) => u.id === created.body.id);
      expect(listed.lastLogin).toBeNull();

      expect((await api.post('/api/v1/auth/login', { email: e, password: 'correct horse battery' })).status).toBe(200);
      const after = await owner.get(`/api/v1/users/${created.body.id}`);
      expect(Date.parse(after.body.lastLogin)).toBeGreaterThan(Date.parse(created.body.createdAt) - 1000);
      expect((await other.owner.get(`/api/v1/users/${created.body.id}`)).status).toBe(404);
      expect((await owner.get(`/api/v1/users/${randomUUID()}`)).status).toBe(404);
    });
  });

  describe('analytics figures are numbers when there is no data', () => {
    it('team performance: conversionRate and averageResponseTime 0 beside contactsAssigned 0 and responses 0', async () => {
      const res = await other.owner.get('/api/v1/analytics/team-performance');
      expect(res.status).toBe(200);
      expect(res.body.team).toContainEqual(
        expect.objectContaining({ userId: other.user.id, contactsAssigned: 0, conversionRate: 0, averageResponseTime: 0, responses: 0 }),
      );
      expect(res.body.teamTotal).toEqual(expect.objectContaining({ contactsAssigned: 0, conversionRate: 0 }));
    });

    it('response time: the six figures are 0 beside sample sizes of 0', async () => {
      const res = await owner.get('/api/v1/analytics/response-time');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          averageFirstResponseTime: 0,
          averageResolutionTime: 0,
          medianResponseTime: 0,
          percentile95: 0,
          percentile99: 0,
          onTimeRate: 0,
          responses: 0,
          firstResponses: 0,
          resolutions: 0,
        }),
      );
    });

    it('agents may not read them (403)', async () => {
      const e = email('agent');
      await owner.post('/api/v1/users', { email: e, fullName: 'Agent', role: 'agent', password: 'correct horse battery' });
      const agent = api.as((await api.post('/api/v1/auth/login', { email: e, password: 'correct horse battery' })).body.token);
      expect((await agent.get('/api/v1/analytics/response-time')).status).toBe(403);
    });
  });
});
