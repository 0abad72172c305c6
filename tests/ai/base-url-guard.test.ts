import { client, Client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { FakeVendor, keyOf, startFakeVendor } from './support/fake-vendors';

// An organization's own AI base URL is a destination a tenant chooses: it must be a public address (or one
// the operator allowed with AI_ALLOWED_PRIVATE_ADDRESSES), checked when saved and again on every connection,
// and it is used only with the organization's own key, never the deployment's. Every address dialled here
// is loopback; refused spellings must be refused before any connection is opened.
describe('AI: organizations’ base URLs (SSRF guard, own key only)', () => {
  const ENV_KEY = 'sk-env-deployment-key-1111111111-ENVK';
  const ORG_KEY = 'sk-org-own-key-2222222222-ORGK';

  let stack: Stack;
  let owner: Client;
  /** Where an org points its base URL. */
  let orgVendor: FakeVendor;
  /** OPENAI_BASE_URL: the deployment's own endpoint, the only place ENV_KEY may go. */
  let envVendor: FakeVendor;

  beforeAll(async () => {
    [orgVendor, envVendor] = await Promise.all([
      startFakeVendor('openai', { keys: [ORG_KEY, ENV_KEY] }),
      startFakeVendor('openai', { keys: [ENV_KEY] }),
    ]);
    stack = await startStack({
      services: ['ai'],
      serviceEnv: {
        // The deployment's base URL is on loopback too: the operator's URLs are not judged, only organizations'.
        ai: { AI_ALLOWED_PRIVATE_ADDRESSES: '', OPENAI_API_KEY: ENV_KEY, OPENAI_BASE_URL: envVendor.baseUrl, AI_MODELS_TIMEOUT_MS: '2000' },
      },
    });
    owner = (await newOrg(client(stack.url), 'Acme')).owner;
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([orgVendor?.close(), envVendor?.close()]);
  });

  const port = () => new URL(orgVendor.baseUrl).port;

  describe('with an empty allow-list', () => {
    it.each([
      ['http://127.0.0.1:PORT/v1', /127\.0\.0\.1 is a loopback address/],
      ['http://0x7f.1:PORT/v1', /127\.0\.0\.1 is a loopback address/],
      ['http://2130706433:PORT/v1', /127\.0\.0\.1 is a loopback address/],
      ['http://017700000001:PORT/v1', /127\.0\.0\.1 is a loopback address/],
      ['http://127.1:PORT/v1', /127\.0\.0\.1 is a loopback address/],
      ['http://[::ffff:127.0.0.1]:PORT/v1', /::ffff:7f00:1 resolves to 127\.0\.0\.1, a loopback address/],
      ['http://[::1]:PORT/v1', /::1 is a loopback address/],
      ['http://localhost:PORT/v1', /localhost resolves to .* a loopback address/],
      ['http://169.254.169.254/latest', /169\.254\.169\.254 is a linkLocal address/],
      ['http://[fe80::1]/v1', /fe80::1 is a linkLocal address/],
      ['http://10.0.0.1/v1', /10\.0\.0\.1 is a private address/],
      ['https://192.168.1.10/v1', /192\.168\.1\.10 is a private address/],
    ])('PUT baseUrl %s is 400 naming baseUrl, and nothing is dialled', async (template, message) => {
      const before = orgVendor.connections;
      const res = await owner.put('/api/v1/ai/providers/openai', { apiKey: ORG_KEY, baseUrl: template.replace('PORT', port()) });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'baseUrl', message: expect.stringMatching(message) }]);
      expect(res.body.error.details[0].message).toMatch(/AI requests are not sent there/);
      expect(orgVendor.connections).toBe(before);
      // Nothing was saved, not even the key sent with it.
      expect((await owner.get('/api/v1/ai/providers')).body.find((p: any) => p.id === 'openai')).toMatchObject({
        keySource: 'environment',
        baseUrlSource: 'environment',
      });
    });

    it('a public host that does not resolve yet is accepted when saved (it is judged again on every connection)', async () => {
      const res = await owner.put('/api/v1/ai/providers/kimi', { baseUrl: 'https://models.example.invalid/v1' });
      expect(res.status).toBe(200);
      expect((await owner.get('/api/v1/ai/providers')).body.find((p: any) => p.id === 'kimi')).toMatchObject({
        baseUrl: 'https://models.example.invalid/v1',
        baseUrlSource: 'organization',
      });
      await owner.put('/api/v1/ai/providers/kimi', { baseUrl: '' });
    });

    it('the deployment base URL (OPENAI_BASE_URL) is the operator’s and is used with the environment key', async () => {
      envVendor.requests.length = 0;
      const res = await owner.get('/api/v1/ai/providers/openai/models');
      expect(res.body).toEqual({
        models: [
          { title: 'openai-large', value: 'openai-large' },
          { title: 'openai-small', value: 'openai-small' },
        ],
      });
      expect(envVendor.requests.map(keyOf)).toEqual([ENV_KEY]);
    });
  });

  describe('with 127.0.0.1 allowed (a self-hosted model server)', () => {
    beforeAll(() => stack.restart('ai', { AI_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' }));
    beforeEach(() => {
      orgVendor.requests.length = 0;
      envVendor.requests.length = 0;
    });

    it('the base URL is saved; without the org’s own key the provider has no key at all (the environment key is not used)', async () => {
      const res = await owner.put('/api/v1/ai/providers/openai', { baseUrl: orgVendor.baseUrl });
      expect(res.status).toBe(200);
      expect((await owner.get('/api/v1/ai/providers')).body.find((p: any) => p.id === 'openai')).toMatchObject({
        baseUrl: orgVendor.baseUrl,
        baseUrlSource: 'organization',
        hasKey: false,
        keySource: 'none',
        keyMask: '',
      });
      const models = await owner.get('/api/v1/ai/providers/openai/models');
      expect(models.status).toBe(200);
      expect(models.body).toEqual({
        models: [],
        error: expect.stringMatching(/The API key for OpenAI is not configured: this organization's own base URL is used only with its own API key/),
      });
      expect(orgVendor.requests).toHaveLength(0);
      expect(envVendor.requests).toHaveLength(0);
    });

    it('drafts and sentiment fall back to the local engine instead of sending the environment key there', async () => {
      const before = orgVendor.connections;
      expect((await owner.put('/api/v1/ai/config', { provider: 'openai' })).body).toMatchObject({
        status: 'missing_key',
        engine: 'local',
        statusMessage: expect.stringMatching(/own base URL needs/),
      });
      const res = await owner.post('/api/v1/ai/sentiment', { text: 'Thank you, the delivery was quick and the product is great!' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ engine: 'local', fallbackReason: expect.stringMatching(/OpenAI is selected but has no API key/) });
      expect(orgVendor.connections).toBe(before);
      expect(envVendor.requests).toHaveLength(0);
    });

    it('with the org’s own key the org’s base URL is used, and it receives only that key', async () => {
      expect((await owner.put('/api/v1/ai/providers/openai', { apiKey: ORG_KEY })).status).toBe(200);
      const models = await owner.get('/api/v1/ai/providers/openai/models');
      expect(models.body.models.map((m: any) => m.value)).toEqual(['openai-large', 'openai-small']);
      expect((await owner.post('/api/v1/ai/sentiment', { text: 'Thank you, the delivery was quick and the product is great!' })).status).toBe(200);
      expect(orgVendor.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${ORG_KEY}`, `Bearer ${ORG_KEY}`]);
      expect(envVendor.requests).toHaveLength(0);
    });

    it('removing the org key leaves the org base URL without a key; resetting the base URL brings the environment back', async () => {
      await owner.put('/api/v1/ai/providers/openai', { apiKey: '' });
      expect((await owner.get('/api/v1/ai/providers/openai/models')).body.error).toMatch(/own base URL is used only with its own API key/);
      expect(orgVendor.requests).toHaveLength(0);

      await owner.put('/api/v1/ai/providers/openai', { baseUrl: '' });
      expect((await owner.get('/api/v1/ai/providers/openai/models')).body.models).toHaveLength(2);
      expect(envVendor.requests.map(keyOf)).toEqual([ENV_KEY]);
      expect(orgVendor.requests).toHaveLength(0);
      // The only ENV_KEY the org vendor ever saw: none.
      expect(orgVendor.requests.some((r) => keyOf(r) === ENV_KEY)).toBe(false);
    });

    it('still refuses other private addresses', async () => {
      const res = await owner.put('/api/v1/ai/providers/openai', { apiKey: ORG_KEY, baseUrl: 'http://169.254.169.254/v1' });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0]).toEqual({
        field: 'baseUrl',
        message: '169.254.169.254 is a linkLocal address; AI requests are not sent there',
      });
    });
  });

  describe('the address is judged again when connecting', () => {
    it('a base URL saved while loopback was allowed is refused, without a connection, once it no longer is', async () => {
      await stack.restart('ai', { AI_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' });
      expect((await owner.put('/api/v1/ai/providers/openai', { apiKey: ORG_KEY, baseUrl: orgVendor.baseUrl })).status).toBe(200);
      // The operator narrows the allow-list; the stored URL is now a refused destination (as after DNS rebinding).
      await stack.restart('ai', { AI_ALLOWED_PRIVATE_ADDRESSES: '' });
      const before = orgVendor.connections;

      const models = await owner.get('/api/v1/ai/providers/openai/models');
      expect(models.status).toBe(200);
      expect(models.body).toEqual({
        models: [],
        error: `Could not reach OpenAI at 127.0.0.1:${port()}: 127.0.0.1 is a loopback address; AI requests are not sent there`,
      });

      await owner.put('/api/v1/ai/config', { provider: 'openai' });
      const sentiment = await owner.post('/api/v1/ai/sentiment', { text: 'The order arrived broken and nobody answers.' });
      expect(sentiment.body).toMatchObject({
        engine: 'local',
        fallbackReason: expect.stringMatching(/loopback address; AI requests are not sent there; the local engine answered instead/),
      });
      expect(orgVendor.connections).toBe(before);
    });
  });
});
