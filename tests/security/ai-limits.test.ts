import { client, type Client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { type FakeVendor, startFakeVendor } from '../ai/support/fake-vendors';

// The AI spends the operator's or the organization's vendor money (issue #27 item 8): listing models is throttled per
// organization, and AI_DAILY_TOKENS_MAX caps the tokens of a day beside the number of calls.
describe('AI: vendor calls bounded per organization', () => {
  let stack: Stack;
  let vendor: FakeVendor;
  let owner: Client;
  const KEY = 'sk-fake-limits-0001';

  beforeAll(async () => {
    vendor = await startFakeVendor('openai', { keys: [KEY], reply: JSON.stringify({ sentiment: 'positive', score: 0.8, emotions: ['joy'] }) });
    stack = await startStack({
      services: ['ai'],
      env: { SIGNUP_ENABLED: 'true' },
      serviceEnv: { ai: { AI_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', AI_DAILY_TOKENS_MAX: '50', AI_MODELS_PER_MINUTE: '3' } },
    });
    owner = (await newOrg(client(stack.url), 'Limits Org')).owner;
    expect((await owner.put('/api/v1/ai/providers/openai', { apiKey: KEY, baseUrl: vendor.baseUrl })).status).toBe(200);
    expect((await owner.put('/api/v1/ai/config', { provider: 'openai', enabled: true })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await vendor?.close();
  });

  it('past the daily token cap the local engine answers, and the vendor is not called', async () => {
    const text = 'Thank you, the delivery was fast!';
    // Each call costs 20 tokens at the fake vendor: 0, 20 and 40 are under the cap of 50.
    for (let i = 0; i < 3; i++) {
      const res = await owner.post('/api/v1/ai/sentiment', { text });
      expect(res.status).toBe(200);
      expect(res.body.engine).toBe('openai');
    }
    const calls = vendor.requests.filter((r) => r.method === 'POST').length;
    const capped = await owner.post('/api/v1/ai/sentiment', { text });
    expect(capped.status).toBe(200);
    expect(capped.body.engine).toBe('local');
    expect(capped.body.fallbackReason).toMatch(/token allowance/);
    expect(vendor.requests.filter((r) => r.method === 'POST').length).toBe(calls);
  });

  it('listing models is throttled per organization, answered as the specification wants (200 with an error)', async () => {
    for (let i = 0; i < 3; i++) expect((await owner.get('/api/v1/ai/providers/openai/models')).body.models.length).toBe(2);
    const gets = vendor.requests.filter((r) => r.method === 'GET').length;
    const throttled = await owner.get('/api/v1/ai/providers/openai/models');
    expect(throttled.status).toBe(200);
    expect(throttled.body).toEqual({
      models: [],
      error: expect.stringMatching(/^Models were listed too often for this organization; try again in \d+ s$/),
    });
    expect(vendor.requests.filter((r) => r.method === 'GET').length).toBe(gets);
  });
});
