import type { ApiShape } from './catalog';
import { Connection, ProviderError, vendorRequest } from './http';

export interface ModelOption {
  title: string;
  value: string;
}

export interface ChatPrompt {
  system: string;
  user: string;
  maxTokens: number;
}

/** A model's answer and the tokens the vendor counted for it (prompt and answer; estimated when it did not say). */
export interface Completion {
  text: string;
  tokens: number;
}

/** One vendor wire shape: list the models a key can use, and answer one prompt with text. */
export interface Adapter {
  listModels(conn: Connection, timeoutMs: number): Promise<ModelOption[]>;
  complete(conn: Connection, model: string, prompt: ChatPrompt, timeoutMs: number): Promise<Completion>;
}

/** About four characters a token: what a vendor that reports no usage is taken to have counted. */
function estimatedTokens(prompt: ChatPrompt, text: string): number {
  return Math.ceil((prompt.system.length + prompt.user.length + text.length) / 4);
}

const tokensOr = (counted: number | undefined, prompt: ChatPrompt, text: string) =>
  typeof counted === 'number' && Number.isFinite(counted) && counted >= 0 ? counted : estimatedTokens(prompt, text);

/** Follow a vendor's pagination at most this many pages: a models list is never that long. */
const MAX_PAGES = 5;

/** Pages share one time budget, so a paginated list cannot outlast the caller's deadline. */
function budget(timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  return () => ({ timeoutMs: until - Date.now(), budgetMs: timeoutMs });
}

const byTitle = (a: ModelOption, b: ModelOption) => a.title.localeCompare(b.title);

function emptyAnswer(conn: Connection): ProviderError {
  return new ProviderError('bad_response', `${conn.provider.name} returned an empty answer`);
}

/** OpenAI, and the OpenAI-compatible APIs of Qwen (DashScope compatible mode) and Kimi (Moonshot). */
export const openAiCompatible: Adapter = {
  async listModels(conn, timeoutMs) {
    const body = await vendorRequest<{ data?: { id?: string }[] }>(conn, {
      method: 'GET',
      path: '/models',
      headers: { authorization: `Bearer ${conn.apiKey}` },
      timeoutMs,
    });
    if (!Array.isArray(body.data)) throw new ProviderError('bad_response', `${conn.provider.name} returned a models list without data`);
    return body.data
      .filter((m) => typeof m.id === 'string' && m.id)
      .map((m) => ({ title: m.id!, value: m.id! }))
      .sort(byTitle);
  },
  async complete(conn, model, prompt, timeoutMs) {
    // No temperature: OpenAI's reasoning models refuse anything but the default.
    const tokens = conn.provider.id === 'openai' ? { max_completion_tokens: prompt.maxTokens } : { max_tokens: prompt.maxTokens };
    const body = await vendorRequest<{ choices?: { message?: { content?: unknown } }[]; usage?: { total_tokens?: number } }>(conn, {
      method: 'POST',
      path: '/chat/completions',
      headers: { authorization: `Bearer ${conn.apiKey}` },
      body: {
        model,
        messages: [
          { role: 'system', content: prompt.system },
          { role: 'user', content: prompt.user },
        ],
        ...tokens,
      },
      timeoutMs,
    });
    const content = body.choices?.[0]?.message?.content;
    const text =
      typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => (p as { text?: string }).text ?? '').join('') : '';
    if (!text.trim()) throw emptyAnswer(conn);
    return { text, tokens: tokensOr(body.usage?.total_tokens, prompt, text) };
  },
};

const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic's Messages API: `x-api-key` and `anthropic-version` headers. */
export const anthropic: Adapter = {
  async listModels(conn, timeoutMs) {
    const left = budget(timeoutMs);
    const out: ModelOption[] = [];
    let after = '';
    for (let page = 0; page < MAX_PAGES; page++) {
      const body = await vendorRequest<{ data?: { id?: string; display_name?: string }[]; has_more?: boolean; last_id?: string }>(conn, {
        method: 'GET',
        path: `/v1/models?limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ''}`,
        headers: { 'x-api-key': conn.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
        ...left(),
      });
      if (!Array.isArray(body.data)) throw new ProviderError('bad_response', `${conn.provider.name} returned a models list without data`);
      for (const m of body.data) if (m.id) out.push({ title: m.display_name || m.id, value: m.id });
      if (!body.has_more || !body.last_id) break;
      after = body.last_id;
    }
    return out.sort(byTitle);
  },
  async complete(conn, model, prompt, timeoutMs) {
    const body = await vendorRequest<{ content?: { type?: string; text?: string }[]; usage?: { input_tokens?: number; output_tokens?: number } }>(
      conn,
      {
        method: 'POST',
        path: '/v1/messages',
        headers: { 'x-api-key': conn.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
        body: { model, max_tokens: prompt.maxTokens, system: prompt.system, messages: [{ role: 'user', content: prompt.user }] },
        timeoutMs,
      },
    );
    const text = (body.content ?? [])
      .filter((p) => p.type === 'text')
      .map((p) => p.text ?? '')
      .join('');
    if (!text.trim()) throw emptyAnswer(conn);
    const used = body.usage ? (body.usage.input_tokens ?? 0) + (body.usage.output_tokens ?? 0) : undefined;
    return { text, tokens: tokensOr(used, prompt, text) };
  },
};

/** Google's Generative Language API (v1beta). The key goes in a header, never in a URL that could be logged. */
export const gemini: Adapter = {
  async listModels(conn, timeoutMs) {
    const left = budget(timeoutMs);
    const out: ModelOption[] = [];
    let token = '';
    for (let page = 0; page < MAX_PAGES; page++) {
      const body = await vendorRequest<{
        models?: { name?: string; displayName?: string; supportedGenerationMethods?: string[] }[];
        nextPageToken?: string;
      }>(conn, {
        method: 'GET',
        path: `/v1beta/models?pageSize=1000${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`,
        headers: { 'x-goog-api-key': conn.apiKey },
        ...left(),
      });
      if (!Array.isArray(body.models)) throw new ProviderError('bad_response', `${conn.provider.name} returned a models list without models`);
      for (const m of body.models) {
        if (!m.name) continue;
        // Embedding and other models cannot write a reply; list those that can generate content.
        if (Array.isArray(m.supportedGenerationMethods) && !m.supportedGenerationMethods.includes('generateContent')) continue;
        const value = m.name.replace(/^models\//, '');
        out.push({ title: m.displayName || value, value });
      }
      if (!body.nextPageToken) break;
      token = body.nextPageToken;
    }
    return out.sort(byTitle);
  },
  async complete(conn, model, prompt, timeoutMs) {
    const id = model.replace(/^models\//, '');
    const body = await vendorRequest<{
      candidates?: { content?: { parts?: { text?: string }[] } }[];
      promptFeedback?: { blockReason?: string };
      usageMetadata?: { totalTokenCount?: number };
    }>(conn, {
      method: 'POST',
      path: `/v1beta/models/${encodeURIComponent(id)}:generateContent`,
      headers: { 'x-goog-api-key': conn.apiKey },
      body: {
        systemInstruction: { parts: [{ text: prompt.system }] },
        contents: [{ role: 'user', parts: [{ text: prompt.user }] }],
        generationConfig: { maxOutputTokens: prompt.maxTokens },
      },
      timeoutMs,
    });
    if (body.promptFeedback?.blockReason) {
      throw new ProviderError('bad_response', `${conn.provider.name} blocked the request (${body.promptFeedback.blockReason})`);
    }
    const text = (body.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? '').join('');
    if (!text.trim()) throw emptyAnswer(conn);
    return { text, tokens: tokensOr(body.usageMetadata?.totalTokenCount, prompt, text) };
  },
};

export const ADAPTERS: Record<ApiShape, Adapter> = { openai: openAiCompatible, anthropic, gemini };
