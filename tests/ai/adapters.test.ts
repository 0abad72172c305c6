import { freePort } from '@crm/testing';
import { ADAPTERS } from '../../services/ai/src/providers/adapters';
import { PROVIDER_IDS, PROVIDERS, ProviderId } from '../../services/ai/src/providers/catalog';
import { Connection, ProviderError } from '../../services/ai/src/providers/http';
import { FakeVendor, keyOf, startFakeVendor } from './support/fake-vendors';

// Every provider adapter against a local server that speaks its vendor's API: Anthropic's Messages
// API, Gemini's generateContent, and the OpenAI shape used by OpenAI, Qwen (DashScope compatible mode)
// and Kimi (Moonshot). Each one lists models, completes a prompt, refuses a wrong key and times out.
const PREFIX: Record<ProviderId, string> = { anthropic: '', gemini: '', openai: '/v1', qwen: '/compatible-mode/v1', kimi: '/v1' };
const KEY = 'test-key-0123456789-abcdef';
const prompt = { system: 'You write replies.', user: 'Customer: where is my order?', maxTokens: 100 };

describe.each(PROVIDER_IDS)('%s adapter', (id) => {
  const info = PROVIDERS[id];
  const adapter = ADAPTERS[info.api];
  let fake: FakeVendor;
  let conn: Connection;

  beforeAll(async () => {
    fake = await startFakeVendor(info.api, { prefix: PREFIX[id], keys: [KEY], reply: `answer from ${id}` });
    conn = { provider: info, baseUrl: fake.baseUrl, apiKey: KEY };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
    fake.delayMs = 0;
  });

  it('lists models as {title, value}', async () => {
    const models = await adapter.listModels(conn, 2000);
    expect(models.map((m) => m.value)).toEqual([`${info.api}-large`, `${info.api}-small`]);
    for (const m of models) expect(m.title).toEqual(expect.any(String));
    expect(fake.requests[0].method).toBe('GET');
    expect(keyOf(fake.requests[0])).toBe(KEY);
  });

  it("completes a prompt through the vendor's chat API, with the tokens the vendor counted", async () => {
    const { text, tokens } = await adapter.complete(conn, 'model-x', prompt, 2000);
    expect(text).toBe(`answer from ${id}`);
    // The fake vendors report 20 tokens (10 in, 10 out) in each vendor's own usage shape.
    expect(tokens).toBe(20);
    const call = fake.requests[0];
    expect(call.method).toBe('POST');
    if (info.api === 'openai') {
      expect(call.path).toBe(`${PREFIX[id]}/chat/completions`);
      expect(call.body).toMatchObject({
        model: 'model-x',
        messages: [
          { role: 'system', content: prompt.system },
          { role: 'user', content: prompt.user },
        ],
      });
      // OpenAI's newer models take max_completion_tokens; Qwen and Kimi take max_tokens.
      expect(call.body[id === 'openai' ? 'max_completion_tokens' : 'max_tokens']).toBe(100);
    } else if (info.api === 'anthropic') {
      expect(call.path).toBe('/v1/messages');
      expect(call.headers['anthropic-version']).toBe('2023-06-01');
      expect(call.body).toMatchObject({
        model: 'model-x',
        max_tokens: 100,
        system: prompt.system,
        messages: [{ role: 'user', content: prompt.user }],
      });
    } else {
      expect(call.path).toBe('/v1beta/models/model-x:generateContent');
      expect(call.body).toMatchObject({
        systemInstruction: { parts: [{ text: prompt.system }] },
        contents: [{ role: 'user', parts: [{ text: prompt.user }] }],
      });
      // The key travels in a header, never in the URL.
      expect(call.path).not.toContain(KEY);
    }
  });

  it('a wrong key is a bad_key ProviderError that does not repeat the key', async () => {
    const wrong = { ...conn, apiKey: 'wrong-key-that-gets-echoed-999' };
    const err = await adapter.listModels(wrong, 2000).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.reason).toBe('bad_key');
    expect(err.message).toMatch(new RegExp(`^${info.name.replace(/[()]/g, '\\$&')} rejected the API key \\(HTTP (401|400)\\)`));
    expect(err.message).not.toContain('wrong-key-that-gets-echoed-999');
    const err2 = await adapter.complete(wrong, 'model-x', prompt, 2000).catch((e) => e);
    expect(err2.reason).toBe('bad_key');
  });

  it('a slow vendor is a timeout ProviderError after the configured time', async () => {
    // The vendor answers after 3 s; giving up well before that (a loaded CI machine took 1.5 s) is the timeout.
    fake.delayMs = 3000;
    const started = Date.now();
    const err = await adapter.complete(conn, 'model-x', prompt, 200).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.reason).toBe('timeout');
    expect(err.message).toMatch(/did not answer within 200 ms/);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('an unreachable host is an unreachable ProviderError', async () => {
    const closed = await freePort();
    const err = await adapter.listModels({ ...conn, baseUrl: `http://127.0.0.1:${closed}${PREFIX[id]}` }, 2000).catch((e) => e);
    expect(err.reason).toBe('unreachable');
    expect(err.message).toBe(`Could not reach ${info.name} at 127.0.0.1:${closed}: connection refused`);
  });
});

describe('vendor answers that are not what the API promises', () => {
  it('an empty completion or a non-JSON body is a bad_response', async () => {
    const fake = await startFakeVendor('openai', { keys: [KEY], reply: '' });
    try {
      const conn = { provider: PROVIDERS.openai, baseUrl: fake.baseUrl, apiKey: KEY };
      await expect(ADAPTERS.openai.complete(conn, 'm', prompt, 2000)).rejects.toMatchObject({ reason: 'bad_response' });
      const html = { ...conn, baseUrl: `${fake.baseUrl}/nowhere` };
      await expect(ADAPTERS.openai.listModels(html, 2000)).rejects.toMatchObject({ reason: 'http', status: 404 });
    } finally {
      await fake.close();
    }
  });

  it('Gemini lists only models that can generate content', async () => {
    const fake = await startFakeVendor('gemini', { keys: [KEY] });
    try {
      const models = await ADAPTERS.gemini.listModels({ provider: PROVIDERS.gemini, baseUrl: fake.baseUrl, apiKey: KEY }, 2000);
      expect(models.map((m) => m.value)).not.toContain('text-embedding-004');
      expect(models).toContainEqual({ title: 'gemini Large', value: 'gemini-large' });
    } finally {
      await fake.close();
    }
  });
});
