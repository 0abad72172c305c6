import { spawnSync } from 'node:child_process';
import { API_KEY_SCOPES } from '@crm/auth';
import { client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { nativeRequire } from '../support/native';

/**
 * Routes that are not API operations: the static pages and their assets. Everything else the router has
 * must be in /openapi.json.
 */
const NOT_API = new Set([
  'GET /',
  'GET /login',
  'GET /settings/dev/api',
  'GET /settings/ai',
  'GET /settings/inbox',
  'GET /docs',
  'GET /docs/assets/{file}',
]);

/** Operations with a path parameter that never answer 404 (an unknown provider's models are `{models: [], error}`). */
const NEVER_404 = new Set(['GET /api/v1/ai/providers/{id}/models']);

/** Exactly one of the scopes an API key can hold. */
const SCOPE = new RegExp(`^(${API_KEY_SCOPES.join('|')})$`);

const openApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const opsOf = (doc: { paths: Record<string, Record<string, unknown>> }) =>
  Object.entries(doc.paths).flatMap(([p, o]) => Object.keys(o).map((m) => `${m.toUpperCase()} ${p}`));

/** Validate an OpenAPI document (the validator is an ES module; jest runs CommonJS, so in a child process). */
function validateOpenApi(doc: unknown): { valid: boolean; errors?: unknown } {
  const check = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import { Validator } from '@seriousme/openapi-schema-validator'; let s=''; process.stdin.on('data', d => s += d).on('end', async () => { const r = await new Validator().validate(JSON.parse(s)); console.log(JSON.stringify(r)); });",
    ],
    { input: JSON.stringify(doc), cwd: __dirname, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(check.stdout);
}

describe('GET /openapi.json: every gateway route, described', () => {
  let stack: Stack;
  let doc: any;
  beforeAll(async () => {
    stack = await startStack();
    const res = await client(stack.url).get('/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => stack.stop());

  it('is a valid OpenAPI 3.1 document with the bearer (JWT) and X-API-Key security schemes, served without a credential', () => {
    const result = validateOpenApi(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes).toEqual({
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: expect.any(String), 'x-scopes': expect.any(Object) },
    });
    // The key scheme lists every scope a key can hold (issue #31), in words and by name.
    expect(Object.keys(doc.components.securitySchemes.apiKey['x-scopes'])).toEqual([...API_KEY_SCOPES]);
    for (const scope of API_KEY_SCOPES) expect(doc.components.securitySchemes.apiKey.description).toContain(`\`${scope}\``);
  });

  // Each route is declared once (route-area), but the areas are mounted by their modules and listed for the document
  // by docs/index.ts, and pages are plain routes: the router walk keeps the two lists the same.
  it('has every route of the express router (router walk), and nothing the router lacks', () => {
    const documented = new Set(opsOf(doc));
    const routes = [...new Set(stack.routes.map((r) => `${r.method} ${openApiPath(r.path)}`))];
    expect(routes.filter((r) => !NOT_API.has(r) && !documented.has(r))).toEqual([]);
    const served = new Set(routes);
    expect([...documented].filter((op) => !served.has(op))).toEqual([]);
  });

  it('gives every operation its auth, path parameters, statuses and, for each JSON response, its top-level fields', () => {
    for (const [p, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const where = `${method.toUpperCase()} ${p}`;
        const params = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        expect([where, (op.parameters ?? []).filter((x: any) => x.in === 'path').map((x: any) => x.name)]).toEqual([where, params]);
        const statuses = Object.keys(op.responses);
        expect([where, statuses.some((s) => /^[23]/.test(s))]).toEqual([where, true]);
        if (p.startsWith('/api/v1/') && !p.startsWith('/api/v1/auth/') && !p.startsWith('/api/v1/setup'))
          expect([where, op.security]).toEqual([where, [{ bearer: [] }]]);
        // Each public operation names the one scope it needs, OAuth-style (none for /whoami).
        if (p.startsWith('/api/public/') && p !== '/api/public/openapi.json')
          expect([where, op.security]).toEqual([where, [{ apiKey: where === 'GET /api/public/whoami' ? [] : [expect.stringMatching(SCOPE)] }]]);
        if (op.security?.length) expect([where, statuses]).toEqual([where, expect.arrayContaining(['401', '429'])]);
        if (params.length && !NEVER_404.has(where)) expect([where, statuses]).toEqual([where, expect.arrayContaining(['404'])]);
        if (op.requestBody?.content?.['application/json']) expect([where, statuses]).toEqual([where, expect.arrayContaining(['400'])]);
        for (const [status, r] of Object.entries<any>(op.responses)) {
          const schema = r.content?.['application/json']?.schema;
          if (!schema) continue;
          if (schema.$ref) {
            expect([where, status, schema.$ref]).toEqual([where, status, '#/components/schemas/Error']);
            continue;
          }
          const shape = schema.type === 'array' ? schema.items : schema;
          const listsFields =
            shape && (Object.keys(shape.properties ?? {}).length > 0 || shape.additionalProperties !== undefined || shape.anyOf || shape.oneOf);
          expect([where, status, Boolean(listsFields)]).toEqual([where, status, true]);
        }
      }
    }
  });

  it('/api/public/openapi.json is the public operations of the same document', async () => {
    const pub = (await client(stack.url).get('/api/public/openapi.json')).body;
    expect(validateOpenApi(pub).valid).toBe(true);
    const publicOps = opsOf(doc).filter((o) => o.split(' ')[1].startsWith('/api/public/'));
    expect(opsOf(pub).sort()).toEqual(publicOps.sort());
    for (const [p, ops] of Object.entries<Record<string, unknown>>(pub.paths)) expect(ops).toEqual(doc.paths[p]);
    expect(pub.components.schemas).toEqual(doc.components.schemas);
    // Only the scheme its operations use: the public API takes no bearer token.
    expect(pub.components.securitySchemes).toEqual({ apiKey: doc.components.securitySchemes.apiKey });
    expect(Object.keys(pub.webhooks)).toEqual(Object.keys(doc.webhooks));
  });

  // The document routes take no credential and a document costs ~100 ms of CPU to build: it is built once and kept.
  it('builds each document once: asked again (whole or public), the same document is served without building it again', async () => {
    // The copy the stack's gateway runs (loaded by Node's require, tests/support/native.ts).
    const docsModule = nativeRequire<typeof import('@crm/gateway/dist/docs')>('@crm/gateway/dist/docs');
    const whole = jest.spyOn(docsModule, 'gatewayDocument');
    const pub = jest.spyOn(docsModule, 'publicDocument');
    try {
      expect((await client(stack.url).get('/api/public/openapi.json')).status).toBe(200);
      for (let i = 0; i < 3; i++) {
        const again = await client(stack.url).get('/openapi.json');
        expect(again.status).toBe(200);
        expect(again.body).toEqual(doc);
      }
      const pubAgain = await client(stack.url).get('/api/public/openapi.json');
      expect(Object.keys(pubAgain.body.paths).every((p) => p.startsWith('/api/public/'))).toBe(true);
      // The whole document was built for beforeAll; the public one at most once here (an earlier test may have built it).
      expect(whole.mock.calls.length).toBe(0);
      expect(pub.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      whole.mockRestore();
      pub.mockRestore();
    }
  });

  it('routes without a credential answer the 400 they document: the edge refuses a NUL in any query value', async () => {
    for (const p of ['/healthz', '/readyz', '/openapi.json', '/api/public/openapi.json', '/api/v1/setup/status']) {
      const res = await client(stack.url).get(`${p}?q=%00`);
      expect([p, res.status, res.body.error?.code]).toEqual([p, 400, 'invalid_argument']);
      expect([p, Object.keys(doc.paths[p].get.responses)]).toEqual([p, expect.arrayContaining(['400'])]);
    }
  });

  it('describes what the public routes really answer (flat contacts and appointments)', () => {
    const ok = (p: string, m: string, s: string) => doc.paths[p][m].responses[s].content['application/json'].schema;
    expect(Object.keys(ok('/api/public/contacts', 'post', '201').properties)).toEqual(expect.arrayContaining(['id', 'fullName', 'phone']));
    expect(Object.keys(ok('/api/public/contacts/{id}', 'get', '200').properties)).toEqual(
      expect.arrayContaining(['id', 'fullName', 'appointments', 'conversationCount']),
    );
    expect(ok('/api/public/contacts/{id}', 'get', '200').properties.contact).toBeUndefined();
    expect(Object.keys(ok('/api/public/appointments', 'post', '201').properties)).toEqual(
      expect.arrayContaining(['id', 'contactId', 'appointmentDate']),
    );
  });
});

describe('GET /docs: the interactive reference, served entirely by the gateway', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());

  it('loads no script, style, font or image from another host, and every asset it names answers 200', async () => {
    const page = await fetch(`${stack.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of ['script-src', 'style-src', 'font-src', 'img-src', 'connect-src', 'default-src']) {
      const sources = (
        csp
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .find(([name]) => name === directive) ?? []
      ).slice(1);
      expect([directive, sources.length > 0]).toEqual([directive, true]);
      // Only this host (and inline data for images/fonts/styles): no https:, no *, no other origin.
      expect([directive, sources.filter((s) => !["'self'", "'unsafe-inline'", 'data:', "'none'"].includes(s))]).toEqual([directive, []]);
    }
    const html = await page.text();
    const refs = [
      ...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g),
      ...html.matchAll(/<link[^>]*\shref="([^"]+)"/g),
      ...html.matchAll(/url\(["']?([^)"']+)/g),
    ].map((m) => m[1]);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      const url = new URL(ref, stack.url);
      expect([ref, url.origin]).toEqual([ref, new URL(stack.url).origin]);
      const asset = await fetch(url);
      expect([ref, asset.status]).toEqual([ref, 200]);
      if (ref.endsWith('.css')) {
        // The stylesheet's own url(...) are inline data, never another host.
        const outside = [...(await asset.text()).matchAll(/url\(["']?([^)"']+)/g)].map((m) => m[1]).filter((u) => !u.startsWith('data:'));
        expect([ref, outside]).toEqual([ref, []]);
      } else await asset.arrayBuffer();
    }
    // The reference reads the gateway's own document.
    const init = await (await fetch(`${stack.url}/assets/docs.js`)).text();
    expect(init).toContain("url: '/openapi.json'");
    expect((await fetch(`${stack.url}/docs/assets/index.html`)).status).toBe(404);
  });
});
