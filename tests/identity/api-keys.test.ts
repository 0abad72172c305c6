import { Client, client, email, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

describe('API keys and the public API credential', () => {
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: '5' } });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
  });
  afterAll(() => stack.stop());

  it('GET /settings/api-key reports no key before one is generated', async () => {
    const res = await acme.owner.get('/api/v1/settings/api-key');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ hasKey: false, keyMask: '', createdAt: null });
  });

  it('generate shows the key once; afterwards only a mask; the key works on /api/public; rotation kills the old key at once', async () => {
    const gen = await acme.owner.post('/api/v1/settings/api-key/generate');
    expect(gen.status).toBe(201);
    expect(gen.body.apiKey).toMatch(/^crm_live_[0-9A-Za-z]{32}$/);
    expect(gen.body.keyMask).toBe(`crm_live_••••${gen.body.apiKey.slice(-4)}`);
    const info = await acme.owner.get('/api/v1/settings/api-key');
    expect(info.body).toEqual({ hasKey: true, keyMask: gen.body.keyMask, createdAt: gen.body.createdAt });
    expect(JSON.stringify(info.body)).not.toContain(gen.body.apiKey);

    const who = await api.withKey(gen.body.apiKey).get('/api/public/whoami');
    expect(who.status).toBe(200);
    expect(who.body).toEqual({ organizationId: acme.user.orgId });

    // The old key is cached by the gateway now; rotation must still kill it at once.
    const rotated = await acme.owner.post('/api/v1/settings/api-key/generate');
    expect(rotated.body.apiKey).not.toBe(gen.body.apiKey);
    expect((await api.withKey(gen.body.apiKey).get('/api/public/whoami')).status).toBe(401);
    expect((await api.withKey(rotated.body.apiKey).get('/api/public/whoami')).status).toBe(200);
  });

  it('generations at the same moment all succeed and leave exactly one working key', async () => {
    const org = await newOrg(api, 'Racing Keys');
    const all = await Promise.all(Array.from({ length: 6 }, () => org.owner.post('/api/v1/settings/api-key/generate')));
    expect(all.map((r) => r.status)).toEqual(Array(6).fill(201));
    const info = await org.owner.get('/api/v1/settings/api-key');
    const live = all.filter((r) => r.body.keyMask === info.body.keyMask);
    expect(live).toHaveLength(1);
    expect((await api.withKey(live[0].body.apiKey).get('/api/public/whoami')).status).toBe(200);
    for (const r of all.filter((x) => x !== live[0])) expect((await api.withKey(r.body.apiKey).get('/api/public/whoami')).status).toBe(401);
  });

  it('a missing or wrong key is 401 with the error body', async () => {
    const none = await api.get('/api/public/whoami');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('invalid_api_key');
    expect((await api.withKey('crm_live_wrongwrongwrongwrongwrongwrong12').get('/api/public/whoami')).status).toBe(401);
    expect((await api.withKey('garbage').get('/api/public/whoami')).status).toBe(401);
  });

  it('a bearer token is not an API key, and an API key is not a bearer token', async () => {
    expect((await api.withKey(acme.token).get('/api/public/whoami')).status).toBe(401);
    const key = (await acme.owner.post('/api/v1/settings/api-key/generate')).body.apiKey;
    expect((await api.as(key).get('/api/v1/profile')).status).toBe(401);
  });

  it('generating needs settings:edit (403 for an agent)', async () => {
    const e = email('agent');
    await acme.owner.post('/api/v1/users', { email: e, fullName: 'Agent', role: 'agent', password: 'correct horse battery' });
    const login = await api.post('/api/v1/auth/login', { email: e, password: 'correct horse battery' });
    const res = await api.as(login.body.token).post('/api/v1/settings/api-key/generate');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });

  it('each organization’s key acts only for that organization', async () => {
    const globex = await newOrg(api, 'Globex');
    const key = (await globex.owner.post('/api/v1/settings/api-key/generate')).body.apiKey;
    expect((await api.withKey(key).get('/api/public/whoami')).body.organizationId).toBe(globex.user.orgId);
  });

  it('the public API is rate limited per key (429 with Retry-After)', async () => {
    const key = (await acme.owner.post('/api/v1/settings/api-key/generate')).body.apiKey;
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await api.withKey(key).get('/api/public/whoami')).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    const limited = await api.withKey(key).get('/api/public/whoami');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('sign-in brute-force limits', () => {
  let stack: Stack;
  let api: Client;

  beforeAll(async () => {
    stack = await startStack({ env: { LOGIN_MAX_FAILURES: '3' } });
    api = client(stack.url);
  });
  afterAll(() => stack.stop());

  it('after 3 failures for one email from one address, even the right password is 429 with Retry-After; other emails are unaffected', async () => {
    const org = await newOrg(api);
    for (let i = 0; i < 3; i++) expect((await api.post('/api/v1/auth/login', { email: org.email, password: 'wrong password' })).status).toBe(401);
    const blocked = await api.post('/api/v1/auth/login', { email: org.email, password: 'correct horse battery' });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('too_many_attempts');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    const other = await newOrg(api);
    expect((await api.post('/api/v1/auth/login', { email: other.email, password: 'correct horse battery' })).status).toBe(200);
  });
});
