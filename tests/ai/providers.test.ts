import { freePort } from '@crm/testing';
import { client, Client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { agentOf, recording, startAiWithCapturedLogs } from './support/captured-ai';
import { FakeVendor, keyOf, startFakeVendor } from './support/fake-vendors';
import { connectPatiently } from '../support/patient-client';

// AI providers through the gateway: the five vendors, keys set per organization (encrypted, never shown
// again, never logged), environment fallbacks, and the models call that explains instead of failing.
describe('AI providers: keys, base URLs and models', () => {
  const ORG_KEY = 'sk-ant-org-a-secret-0123456789-WXYZ';
  const OTHER_KEY = 'sk-openai-org-a-secret-9876543210-ABCD';
  const ENV_OPENAI_KEY = 'sk-env-deployment-key-5555555555-ENVK';
  const WRONG_KEY = 'sk-wrong-key-that-the-vendor-echoes-QQQQ';
  const SECRETS = [ORG_KEY, OTHER_KEY, ENV_OPENAI_KEY, WRONG_KEY];

  let stack: Stack;
  let api: Client;
  let owner: Client;
  let agent: Client;
  let otherOrg: Client;
  let anthropic: FakeVendor;
  let openai: FakeVendor;
  let ai: Awaited<ReturnType<typeof startAiWithCapturedLogs>>;
  const bodies: string[] = [];

  beforeAll(async () => {
    [anthropic, openai] = await Promise.all([
      startFakeVendor('anthropic', { keys: [ORG_KEY] }),
      startFakeVendor('openai', { keys: [OTHER_KEY, ENV_OPENAI_KEY] }),
    ]);
    stack = await startStack({ services: ['ai'] });
    ai = await startAiWithCapturedLogs(stack, {
      // The fake vendors live on loopback; organizations' base URLs may reach only that private address.
      AI_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1',
      OPENAI_API_KEY: ENV_OPENAI_KEY,
      OPENAI_BASE_URL: openai.baseUrl,
      AI_MODELS_TIMEOUT_MS: '400',
    });
    api = recording(client(stack.url), bodies);
    owner = (await newOrg(api, 'Acme')).owner;
    agent = await agentOf(api, owner);
    otherOrg = (await newOrg(api, 'Globex')).owner;
  });
  afterAll(async () => {
    await ai?.stop();
    await stack?.stop();
    await Promise.all([anthropic?.close(), openai?.close()]);
  });

  it('GET /ai/providers lists the five providers with name, base URL, hasKey and an empty keyMask when there is no key', async () => {
    const res = await agent.get('/api/v1/ai/providers');
    expect(res.status).toBe(200);
    expect(res.body.map((p: any) => p.id)).toEqual(['anthropic', 'gemini', 'openai', 'qwen', 'kimi']);
    const byId = Object.fromEntries(res.body.map((p: any) => [p.id, p]));
    expect(byId.anthropic).toMatchObject({ name: 'Anthropic Claude', baseUrl: 'https://api.anthropic.com', hasKey: false, keyMask: '' });
    expect(byId.gemini).toMatchObject({ name: 'Google Gemini', baseUrl: 'https://generativelanguage.googleapis.com', hasKey: false, keyMask: '' });
    expect(byId.qwen).toMatchObject({ baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1', hasKey: false });
    expect(byId.kimi).toMatchObject({ baseUrl: 'https://api.moonshot.ai/v1', hasKey: false });
    // OpenAI has a deployment key and base URL from the environment: the org has a key, masked.
    expect(byId.openai).toMatchObject({
      baseUrl: openai.baseUrl,
      defaultBaseUrl: 'https://api.openai.com/v1',
      hasKey: true,
      keyMask: '••••ENVK',
      keySource: 'environment',
    });
  });

  it('GET /ai/providers without a token is 401', async () => {
    expect((await api.get('/api/v1/ai/providers')).status).toBe(401);
  });

  it('PUT /ai/providers/:id needs settings:edit: an agent gets 403', async () => {
    const res = await agent.put('/api/v1/ai/providers/anthropic', { apiKey: ORG_KEY, baseUrl: anthropic.baseUrl });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect((await owner.get('/api/v1/ai/providers')).body.find((p: any) => p.id === 'anthropic').hasKey).toBe(false);
  });

  it('PUT /ai/providers/:id for an unknown provider is 404', async () => {
    const res = await owner.put('/api/v1/ai/providers/deepseek', { apiKey: ORG_KEY });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toMatch(/AI provider not found/);
  });

  it.each([
    [{ apiKey: ORG_KEY, baseUrl: 'ftp://files.example.com' }, 'baseUrl'],
    [{ apiKey: ORG_KEY, baseUrl: 'not a url' }, 'baseUrl'],
    [{ apiKey: 12345 }, 'apiKey'],
    [{}, 'apiKey'],
  ])('PUT /ai/providers/:id with %j is 400 naming %s', async (payload, field) => {
    const res = await owner.put('/api/v1/ai/providers/anthropic', payload);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: any) => d.field)).toContain(field);
  });

  it('PUT /ai/providers/:id rejects a key with spaces and a base URL carrying credentials', async () => {
    expect((await owner.put('/api/v1/ai/providers/anthropic', { apiKey: 'two words' })).body.error.details[0].field).toBe('apiKey');
    const creds = await owner.put('/api/v1/ai/providers/anthropic', { baseUrl: 'https://user:pw@api.example.com' });
    expect(creds.status).toBe(400);
    expect(creds.body.error.details[0].field).toBe('baseUrl');
  });

  it('PUT /ai/providers/:id stores key and base URL for the org; the list shows only a mask', async () => {
    const res = await owner.put('/api/v1/ai/providers/anthropic', { apiKey: ORG_KEY, baseUrl: `${anthropic.baseUrl}/` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const list = await agent.get('/api/v1/ai/providers');
    expect(list.body.find((p: any) => p.id === 'anthropic')).toMatchObject({
      baseUrl: anthropic.baseUrl,
      hasKey: true,
      keyMask: '••••WXYZ',
      keySource: 'organization',
      baseUrlSource: 'organization',
    });
  });

  it('the key is stored encrypted (versioned AES-GCM), never in plain text', async () => {
    const db = await connectPatiently(ai.databaseUrl);
    try {
      const { rows } = await db.query('SELECT * FROM provider_settings');
      expect(rows).toHaveLength(1);
      expect(rows[0].api_key_enc).toMatch(/^k[0-9a-f]{8}:/);
      expect(JSON.stringify(rows)).not.toContain(ORG_KEY);
      expect(JSON.stringify(rows)).not.toContain(ORG_KEY.slice(0, 20));
    } finally {
      await db.end();
    }
  });

  it('GET /ai/providers/:id/models asks Anthropic GET /v1/models with x-api-key and anthropic-version', async () => {
    anthropic.requests.length = 0;
    const res = await agent.get('/api/v1/ai/providers/anthropic/models');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      models: [
        { title: 'anthropic Large', value: 'anthropic-large' },
        { title: 'anthropic Small', value: 'anthropic-small' },
      ],
    });
    expect(anthropic.requests).toHaveLength(1);
    expect(anthropic.requests[0].path).toMatch(/^\/v1\/models/);
    expect(anthropic.requests[0].headers['x-api-key']).toBe(ORG_KEY);
    expect(anthropic.requests[0].headers['anthropic-version']).toBe('2023-06-01');
  });

  it('models: a missing key is 200 with an empty list and a message that the key is not configured', async () => {
    const res = await owner.get('/api/v1/ai/providers/gemini/models');
    expect(res.status).toBe(200);
    expect(res.body.models).toEqual([]);
    expect(res.body.error).toMatch(/API key for Google Gemini is not configured/);
  });

  it('models: an unknown provider is 200 with an empty list and an error', async () => {
    const res = await owner.get('/api/v1/ai/providers/deepseek/models');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ models: [], error: expect.stringMatching(/Unknown AI provider "deepseek"/) });
  });

  it('models: a wrong key is 200 with the vendor refusal explained, the key scrubbed from the vendor text', async () => {
    await owner.put('/api/v1/ai/providers/kimi', { apiKey: WRONG_KEY, baseUrl: openai.baseUrl });
    const res = await owner.get('/api/v1/ai/providers/kimi/models');
    expect(res.status).toBe(200);
    expect(res.body.models).toEqual([]);
    expect(res.body.error).toMatch(/Moonshot Kimi rejected the API key \(HTTP 401\)/);
    expect(res.body.error).toContain('[redacted]');
  });

  it('models: a vendor that answers too slowly is 200 with a timeout message', async () => {
    // The vendor answers after 6 s: an answer well before that (4 s bounds a 400 ms timeout with room for a loaded
    // CI machine) proves the call gave up rather than waited for the vendor.
    anthropic.delayMs = 6000;
    try {
      const started = Date.now();
      const res = await owner.get('/api/v1/ai/providers/anthropic/models');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ models: [], error: expect.stringMatching(/Anthropic Claude did not answer within 400 ms/) });
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      anthropic.delayMs = 0;
    }
  });

  it('models: an unreachable host is 200 with a connection message', async () => {
    const closed = await freePort();
    await owner.put('/api/v1/ai/providers/qwen', { apiKey: OTHER_KEY, baseUrl: `http://127.0.0.1:${closed}/compatible-mode/v1` });
    const res = await owner.get('/api/v1/ai/providers/qwen/models');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ models: [], error: `Could not reach Alibaba Qwen (DashScope) at 127.0.0.1:${closed}: connection refused` });
  });

  it('environment key applies until the org sets its own; an empty apiKey removes it and the environment applies again', async () => {
    openai.requests.length = 0;
    expect((await owner.get('/api/v1/ai/providers/openai/models')).body.models.map((m: any) => m.value)).toEqual(['openai-large', 'openai-small']);
    expect(keyOf(openai.requests[0])).toBe(ENV_OPENAI_KEY);
    expect(openai.requests[0].path).toBe('/v1/models');

    await owner.put('/api/v1/ai/providers/openai', { apiKey: OTHER_KEY });
    await owner.get('/api/v1/ai/providers/openai/models');
    expect(keyOf(openai.requests[1])).toBe(OTHER_KEY);
    expect((await owner.get('/api/v1/ai/providers')).body.find((p: any) => p.id === 'openai')).toMatchObject({
      keyMask: '••••ABCD',
      keySource: 'organization',
    });

    expect((await owner.put('/api/v1/ai/providers/openai', { apiKey: '' })).body).toEqual({ ok: true });
    await owner.get('/api/v1/ai/providers/openai/models');
    expect(keyOf(openai.requests[2])).toBe(ENV_OPENAI_KEY);
    expect((await owner.get('/api/v1/ai/providers')).body.find((p: any) => p.id === 'openai')).toMatchObject({
      hasKey: true,
      keyMask: '••••ENVK',
      keySource: 'environment',
    });
  });

  it('an empty baseUrl goes back to the environment / vendor default', async () => {
    await owner.put('/api/v1/ai/providers/qwen', { baseUrl: '' });
    const qwen = (await owner.get('/api/v1/ai/providers')).body.find((p: any) => p.id === 'qwen');
    expect(qwen).toMatchObject({ baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1', baseUrlSource: 'default', hasKey: true });
  });

  it("another organization sees none of Acme's keys or base URLs and cannot use them", async () => {
    const list = await otherOrg.get('/api/v1/ai/providers');
    expect(list.body.find((p: any) => p.id === 'anthropic')).toMatchObject({ hasKey: false, keyMask: '', baseUrl: 'https://api.anthropic.com' });
    anthropic.requests.length = 0;
    const models = await otherOrg.get('/api/v1/ai/providers/anthropic/models');
    expect(models.body.error).toMatch(/not configured/);
    expect(anthropic.requests).toHaveLength(0);
  });

  it('no key ever appears in a response body, a response header or a log line of the AI service', () => {
    expect(bodies.length).toBeGreaterThan(20);
    expect(ai.lines.length).toBeGreaterThan(5);
    const everything = [...bodies, ...ai.lines].join('\n');
    for (const secret of SECRETS) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(0, 16));
    }
    // The service did log the changes and the failures, just not the keys.
    expect(ai.lines.some((l) => l.includes('AI provider settings changed'))).toBe(true);
    expect(ai.lines.some((l) => l.includes('rejected the API key'))).toBe(true);
  });
});
