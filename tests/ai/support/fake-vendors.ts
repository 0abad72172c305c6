import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for an AI vendor, speaking that vendor's HTTP API on 127.0.0.1: the OpenAI shape
 * (also Qwen's DashScope compatible mode and Kimi), Anthropic's Messages API or Google's Gemini API.
 * It checks the key the way the vendor does, records every request, can answer slowly (timeouts) and
 * echoes the key it was given in its "wrong key" error, as some vendors do, so tests can prove the
 * service never passes such text on unscrubbed.
 */
export type Shape = 'openai' | 'anthropic' | 'gemini';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeVendor {
  /** Base URL to configure for the provider (includes the path prefix of OpenAI-style APIs). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far: a request refused by the SSRF guard must leave this unchanged. */
  connections: number;
  /** Keys the fake accepts. */
  keys: Set<string>;
  /** Delay before answering, in ms (for timeouts). */
  delayMs: number;
  /** Text the model "writes" for the next chat completions. */
  reply: string;
  models: { id: string; name: string }[];
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startFakeVendor(shape: Shape, opts: { prefix?: string; keys?: string[]; reply?: string } = {}): Promise<FakeVendor> {
  const prefix = opts.prefix ?? (shape === 'openai' ? '/v1' : '');
  const state = {
    requests: [] as RecordedRequest[],
    connections: 0,
    keys: new Set(opts.keys ?? []),
    delayMs: 0,
    reply: opts.reply ?? 'Hello from the fake model',
    models: [
      { id: `${shape}-large`, name: `${shape} Large` },
      { id: `${shape}-small`, name: `${shape} Small` },
    ],
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    state.requests.push({ method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body });
    if (!url.pathname.startsWith(prefix)) return send(res, 404, { error: { message: 'not found' } });
    const path = url.pathname.slice(prefix.length);

    if (shape === 'openai') {
      const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!state.keys.has(key)) {
        return send(res, 401, {
          error: {
            message: `Incorrect API key provided: ${key}. You can find your API key in your account settings.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        });
      }
      if (req.method === 'GET' && path === '/models') {
        return send(res, 200, {
          object: 'list',
          data: state.models.map((m) => ({ id: m.id, object: 'model', created: 1700000000, owned_by: 'fake' })),
        });
      }
      if (req.method === 'POST' && path === '/chat/completions') {
        if (!body?.model || !Array.isArray(body?.messages)) return send(res, 400, { error: { message: 'model and messages are required' } });
        return send(res, 200, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: state.reply }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        });
      }
    }

    if (shape === 'anthropic') {
      const key = String(req.headers['x-api-key'] ?? '');
      if (!req.headers['anthropic-version'])
        return send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version header is required' } });
      if (!state.keys.has(key))
        return send(res, 401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${key}` } });
      if (req.method === 'GET' && path === '/v1/models') {
        return send(res, 200, {
          data: state.models.map((m) => ({ type: 'model', id: m.id, display_name: m.name, created_at: '2025-01-01T00:00:00Z' })),
          has_more: false,
          first_id: state.models[0]?.id,
          last_id: state.models[state.models.length - 1]?.id,
        });
      }
      if (req.method === 'POST' && path === '/v1/messages') {
        if (!body?.model || !body?.max_tokens || !Array.isArray(body?.messages)) {
          return send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'model, max_tokens and messages are required' } });
        }
        return send(res, 200, {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [{ type: 'text', text: state.reply }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 10, output_tokens: 10 },
        });
      }
    }

    if (shape === 'gemini') {
      const key = String(req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? '');
      if (!state.keys.has(key)) {
        // Google answers a wrong key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
        return send(res, 400, {
          error: {
            code: 400,
            message: `API key not valid. Please pass a valid API key. (${key})`,
            status: 'INVALID_ARGUMENT',
            details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
          },
        });
      }
      if (req.method === 'GET' && path === '/v1beta/models') {
        return send(res, 200, {
          models: [
            ...state.models.map((m) => ({
              name: `models/${m.id}`,
              displayName: m.name,
              supportedGenerationMethods: ['generateContent', 'countTokens'],
            })),
            { name: 'models/text-embedding-004', displayName: 'Text Embedding 004', supportedGenerationMethods: ['embedContent'] },
          ],
        });
      }
      const gen = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(path);
      if (req.method === 'POST' && gen) {
        if (!Array.isArray(body?.contents))
          return send(res, 400, { error: { code: 400, message: 'contents is required', status: 'INVALID_ARGUMENT' } });
        return send(res, 200, {
          candidates: [{ content: { role: 'model', parts: [{ text: state.reply }] }, finishReason: 'STOP', index: 0 }],
          modelVersion: decodeURIComponent(gen[1]),
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
        });
      }
    }
    return send(res, 404, { error: { message: `no route ${req.method} ${url.pathname}` } });
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const go = () => handle(req, res, raw);
      if (state.delayMs > 0) setTimeout(go, state.delayMs);
      else go();
    });
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const fake = state as unknown as FakeVendor;
  fake.baseUrl = `http://127.0.0.1:${port}${prefix}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** The key a recorded request carried, whichever header its vendor uses. */
export function keyOf(r: RecordedRequest): string {
  return (
    /^Bearer (.+)$/.exec(String(r.headers.authorization ?? ''))?.[1] ??
    (r.headers['x-api-key'] as string | undefined) ??
    (r.headers['x-goog-api-key'] as string | undefined) ??
    ''
  );
}
