import { randomBytes } from 'node:crypto';
import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

// Guessing API keys is slow and never floods identity: a client address with more than
// API_KEY_FAILURES_PER_MINUTE failed checks gets 429 with Retry-After before identity is asked, and a key
// identity refused is remembered for a while (negative cache). The gateway trusts one proxy hop here, so
// each test speaks as its own client address through X-Forwarded-For.
describe('failed API-key checks are limited per client address and cached', () => {
  const LIMIT = 5;
  let stack: Stack;
  let validKey: string;
  const api = (ip: string, key: string) => client(stack.url, { 'x-forwarded-for': ip }).withKey(key);
  const guess = () => `crm_live_${randomBytes(24).toString('base64url').slice(0, 32)}`;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    stack = await startStack({ env: { API_KEY_FAILURES_PER_MINUTE: String(LIMIT), TRUST_PROXY_HOPS: '1' } });
    const { owner } = await newOrg(client(stack.url), 'Acme');
    validKey = (await owner.post('/api/v1/settings/api-key/generate')).body.apiKey;
    // The limit counts in one-minute windows: start well inside one so both tests share it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await sleep(60_000 - intoMinute + 500);
  }, 40_000);
  afterAll(() => stack?.stop());

  it('answers 401 for the first failures of an address, then 429 with Retry-After; other addresses and a cached valid key go on working', async () => {
    const a = '203.0.113.7';
    expect((await api(a, validKey).get('/api/public/whoami')).status).toBe(200);
    for (let i = 0; i < LIMIT; i++) {
      const res = await api(a, guess()).get('/api/public/whoami');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_api_key');
    }
    const limited = await api(a, guess()).get('/api/public/whoami');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // A key known to be good still works from that address; another address is not limited.
    expect((await api(a, validKey).get('/api/public/whoami')).status).toBe(200);
    expect((await api('203.0.113.8', guess()).get('/api/public/whoami')).status).toBe(401);
  });

  it('a concurrent burst of guesses gets no more than the limit past the check (counted before identity is asked)', async () => {
    const burst = await Promise.all(Array.from({ length: 4 * LIMIT }, () => api('203.0.113.30', guess()).get('/api/public/whoami')));
    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(LIMIT);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(3 * LIMIT);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    // Valid calls never use up the address's allowance (a good key is taken back off the count once identity says so).
    for (let i = 0; i < 2 * LIMIT; i++) expect((await api('203.0.113.31', validKey).get('/api/public/whoami')).status).toBe(200);
    expect((await api('203.0.113.31', guess()).get('/api/public/whoami')).status).toBe(401);
  });

  it('with identity down: a recently refused key is still 401 (cached) and a limited address still 429; only a new key from another address needs identity', async () => {
    const refused = guess();
    expect((await api('203.0.113.20', refused).get('/api/public/whoami')).status).toBe(401);
    await stack.stopService('identity');
    // Identity is really unreachable: a key nobody has tried is a 503.
    expect((await api('203.0.113.21', guess()).get('/api/public/whoami')).status).toBe(503);
    const repeat = await api('203.0.113.22', refused).get('/api/public/whoami');
    expect(repeat.status).toBe(401);
    expect(repeat.body.error.code).toBe('invalid_api_key');
    expect((await api('203.0.113.7', guess()).get('/api/public/whoami')).status).toBe(429);
    // The valid key is in the cache: integrations keep working while identity is away.
    expect((await api('203.0.113.23', validKey).get('/api/public/whoami')).status).toBe(200);
  });
});
