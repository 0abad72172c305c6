import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { z } from 'zod';
import { createLogger } from '@crm/logger';
import type { RouteDeps } from '../routes/deps';
import { errorHandler } from './errors';
import { responseContract, strictResponses } from './response-contract';
import { routeArea } from './route-area';

const Thing = z.object({ id: z.string(), size: z.number() });

/** An area declaring routes in an order express would get wrong (`:id` before `due`), one of them lying about its answer. */
function things() {
  const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
  area.route('GET /things/:id', {
    summary: 'One thing',
    response: Thing,
    handler: async ({ param }) => ({ id: param('id'), size: 1 }),
  });
  area.route('GET /things/due', {
    summary: 'Things due',
    query: z.object({ before: z.string().datetime().optional() }),
    paging: { limit: 10, max: 20 },
    response: z.object({ data: z.array(Thing), page: z.number(), limit: z.number() }),
    handler: async ({ page }) => ({ data: [], ...page }),
  });
  area.route('POST /things', {
    summary: 'Make a thing',
    permission: 'settings:edit',
    body: z.object({ size: z.number().int() }),
    status: 201,
    response: Thing,
    handler: async ({ body }) => ({ id: 'new', size: body.size }),
  });
  area.route('PUT /things/:id', {
    summary: 'A mapper that forgot a field',
    response: Thing,
    // Typed as the schema's input, so only a cast gets this past the compiler: what a loose mapper would do.
    handler: async ({ param }) => ({ id: param('id') }) as unknown as z.input<typeof Thing>,
  });
  area.route('DELETE /things/:id', { summary: 'Remove', status: 204, response: null, handler: async () => undefined });
  return area;
}

async function serve(area: ReturnType<typeof things>, role: string, strict: boolean) {
  const app = express();
  app.use(express.json());
  app.use((_req, res, next) => {
    res.locals.principal = { kind: 'user', orgId: 'o1', userId: 'u1', role };
    next();
  });
  app.use('/api/v1', area.router({} as RouteDeps, strict ? strictResponses : undefined));
  app.use(errorHandler(createLogger('test', 'silent')));
  const server = app.listen(0);
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return { call, close: () => new Promise((r) => server.close(r)) };
}

describe('routeArea: one declaration serves a route and documents it', () => {
  it('documents each route with its prefix, auth, tag, query, body and success response', () => {
    const ops = things().ops;
    expect(ops.map((o) => `${o.method} ${o.path}`)).toEqual([
      'GET /api/v1/things/:id',
      'GET /api/v1/things/due',
      'POST /api/v1/things',
      'PUT /api/v1/things/:id',
      'DELETE /api/v1/things/:id',
    ]);
    const post = ops[2];
    expect(post).toEqual(expect.objectContaining({ auth: 'bearer', tags: ['Tasks'], responses: { 201: Thing } }));
    expect(post.body).toBeDefined();
    expect(ops[1].query).toBeDefined();
    expect(ops[1].paging).toEqual({ limit: 10, max: 20 });
    expect(ops[4].responses).toEqual({ 204: null });
  });

  it('serves the static path before the parameter whatever the declaration order, validates query and body, pages', async () => {
    const s = await serve(things(), 'admin', true);
    try {
      expect(await s.call('GET', '/things/due?limit=500&page=2')).toEqual({ status: 200, body: { data: [], page: 2, limit: 20 } });
      expect(await s.call('GET', '/things/abc')).toEqual({ status: 200, body: { id: 'abc', size: 1 } });
      const badQuery = await s.call('GET', '/things/due?before=yesterday');
      expect([badQuery.status, badQuery.body.error.details[0].field]).toEqual([400, 'before']);
      const badPage = await s.call('GET', '/things/due?limit=many');
      expect([badPage.status, badPage.body.error.details[0].field]).toEqual([400, 'limit']);
      expect(await s.call('POST', '/things', { size: 3 })).toEqual({ status: 201, body: { id: 'new', size: 3 } });
      const badBody = await s.call('POST', '/things', { size: 'big' });
      expect([badBody.status, badBody.body.error.details[0].field]).toEqual([400, 'size']);
      expect(await s.call('DELETE', '/things/abc')).toEqual({ status: 204, body: null });
    } finally {
      await s.close();
    }
  });

  it('indexedBody: a bad array item is named by its index (`items[1].n`), as rules and macros name it; not part of the document', async () => {
    const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
    area.route('POST /lists', {
      summary: 'Make a list',
      body: z.object({ items: z.array(z.object({ n: z.number() })) }),
      indexedBody: true,
      status: 201,
      response: Thing,
      handler: async ({ body }) => ({ id: 'list', size: body.items.length }),
    });
    expect(area.ops[0]).not.toHaveProperty('indexedBody');
    const s = await serve(area, 'admin', true);
    try {
      expect(await s.call('POST', '/lists', { items: [{ n: 1 }] })).toEqual({ status: 201, body: { id: 'list', size: 1 } });
      const bad = await s.call('POST', '/lists', { items: [{ n: 1 }, { n: 'two' }] });
      expect([bad.status, bad.body.error.details[0].field]).toEqual([400, 'items[1].n']);
    } finally {
      await s.close();
    }
  });

  it('middleware: the area’s, then the route’s, run before the permission check and the handler; not part of the document', async () => {
    const seen: string[] = [];
    const mark =
      (name: string): RequestHandler =>
      (req, res, next) => {
        seen.push(name);
        if (req.get('x-stop') === name) return void res.status(429).json({ error: { code: 'rate_limited', message: name } });
        next();
      };
    const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks', middleware: () => [mark('area')] });
    area.route('POST /things', {
      summary: 'Make a thing',
      permission: 'settings:edit',
      middleware: (deps) => [mark(`route:${(deps as unknown as { name: string }).name}`)],
      status: 201,
      response: Thing,
      handler: async () => {
        seen.push('handler');
        return { id: 'new', size: 1 };
      },
    });
    expect(area.ops[0]).not.toHaveProperty('middleware');
    const app = express();
    app.use((_req, res, next) => {
      res.locals.principal = { kind: 'user', orgId: 'o1', userId: 'u1', role: 'agent' };
      next();
    });
    app.use('/api/v1', area.router({ name: 'deps' } as unknown as RouteDeps, strictResponses));
    app.use(errorHandler(createLogger('test', 'silent')));
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/things`;
      const stopped = await fetch(url, { method: 'POST', headers: { 'x-stop': 'route:deps' } });
      expect([stopped.status, seen]).toEqual([429, ['area', 'route:deps']]);
      seen.length = 0;
      // Past the middleware, the agent lacks settings:edit: refused before the handler.
      const refused = await fetch(url, { method: 'POST' });
      expect([refused.status, seen]).toEqual([403, ['area', 'route:deps']]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('several success statuses: each documented with the one response; the first answered unless the handler chose another', async () => {
    const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
    area.route('POST /things/:id/connect', {
      summary: 'Connect (created the first time)',
      status: [200, 201],
      response: Thing,
      handler: async ({ param, res }) => {
        if (param('id') === 'new') res.status(201);
        return { id: param('id'), size: 1 };
      },
    });
    expect(area.ops[0].responses).toEqual({ 200: Thing, 201: Thing });
    const s = await serve(area as ReturnType<typeof things>, 'admin', true);
    try {
      expect(await s.call('POST', '/things/new/connect')).toEqual({ status: 201, body: { id: 'new', size: 1 } });
      expect(await s.call('POST', '/things/old/connect')).toEqual({ status: 200, body: { id: 'old', size: 1 } });
    } finally {
      await s.close();
    }
  });

  it('a streamed body (file, binary) is documented and left to the handler; a 503 may share the success body', async () => {
    const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
    area.route('POST /uploads', {
      summary: 'Upload a file',
      body: 'file',
      status: 201,
      response: Thing,
      handler: async ({ req, body }) => {
        let size = 0;
        for await (const chunk of req) size += (chunk as Buffer).length;
        return { id: body === undefined ? 'unparsed' : 'parsed', size };
      },
    });
    area.route('GET /ready', {
      summary: 'Ready or not',
      status: [200, 503],
      response: Thing,
      handler: async ({ req, res }) => {
        if (req.query.down) res.status(503);
        return { id: 'ready', size: req.query.down ? 0 : 1 };
      },
    });
    expect(area.ops.map((o) => [o.body, o.responses])).toEqual([
      ['file', { 201: Thing }],
      [undefined, { 200: Thing, 503: Thing }],
    ]);
    const app = express();
    app.use((_req, res, next) => {
      res.locals.principal = { kind: 'user', orgId: 'o1', userId: 'u1', role: 'admin' };
      next();
    });
    app.use('/api/v1', area.router({} as RouteDeps, strictResponses));
    app.use(errorHandler(createLogger('test', 'silent')));
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
      const up = await fetch(`${base}/uploads`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'twelve bytes' });
      expect([up.status, await up.json()]).toEqual([201, { id: 'unparsed', size: 12 }]);
      const down = await fetch(`${base}/ready?down=1`);
      expect([down.status, await down.json()]).toEqual([503, { id: 'ready', size: 0 }]);
      expect((await fetch(`${base}/ready`)).status).toBe(200);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('no handler: the route’s middleware answers (a proxied stream), documented by the declaration; passing on is a 500', async () => {
    const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
    const proxy: RequestHandler = (req, res, next) => (req.query.broken ? next() : void res.status(201).json({ id: 'proxied', size: 3 }));
    area.route('POST /files', { summary: 'Streamed to a service', middleware: () => [proxy], body: 'file', status: 201, response: Thing });
    expect(area.ops[0]).toEqual(expect.objectContaining({ body: 'file', responses: { 201: Thing } }));
    expect(area.ops[0]).not.toHaveProperty('middleware');
    const app = express();
    app.use('/api/v1', area.router({} as RouteDeps, strictResponses));
    app.use(errorHandler(createLogger('test', 'silent')));
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/files`;
      const ok = await fetch(url, { method: 'POST' });
      expect([ok.status, await ok.json()]).toEqual([201, { id: 'proxied', size: 3 }]);
      const broken = await fetch(`${url}?broken=1`, { method: 'POST' });
      expect(broken.status).toBe(500);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('sandbox: the area’s operations carry it (documented only when mounted); others carry none', () => {
    const area = routeArea({ prefix: '/sandbox/x', auth: 'bearer', tag: 'Tasks', sandbox: 'socialnet' });
    area.route('POST /pages', { summary: 'A page', status: 204, response: null, handler: async () => undefined });
    expect(area.ops[0].sandbox).toBe('socialnet');
    expect(things().ops[0]).not.toHaveProperty('sandbox');
  });

  it('ownQuery: the query is documented but left to the handler; a limitOnly list reads no page', async () => {
    const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
    const Q = z.object({ size: z.string().regex(/^\d+$/).optional() });
    area.route('GET /own', {
      summary: 'Parses its own query',
      query: Q,
      ownQuery: true,
      paging: { limit: 10, max: 20, limitOnly: true },
      response: z.object({ query: z.unknown(), raw: z.unknown(), page: z.object({ page: z.number(), limit: z.number() }) }),
      handler: async ({ query, req, page }) => ({ query: query ?? null, raw: req.query.size, page }),
    });
    expect(area.ops[0].query).toBe(Q);
    expect(area.ops[0]).not.toHaveProperty('ownQuery');
    const s = await serve(area, 'admin', true);
    try {
      expect(await s.call('GET', '/own?size=big&page=x')).toEqual({ status: 200, body: { query: null, raw: 'big', page: { page: 1, limit: 0 } } });
    } finally {
      await s.close();
    }
  });

  it('also: a second success answer the handler chooses, documented and checked against its own schema', async () => {
    const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
    const Later = z.object({ sendAt: z.string() });
    area.route('POST /sends', {
      summary: 'Send now (201) or later (202)',
      body: z.object({ later: z.boolean(), lie: z.boolean().optional() }),
      status: 201,
      response: Thing,
      also: { status: 202, response: Later },
      handler: async ({ body, answerWith }) => {
        if (!body.later) return { id: 'sent', size: 1 };
        answerWith(202);
        return body.lie ? { id: 'x', size: 1 } : { sendAt: 'tomorrow' };
      },
    });
    expect(area.ops[0].responses).toEqual({ 201: Thing, 202: Later });
    const s = await serve(area, 'admin', true);
    try {
      expect(await s.call('POST', '/sends', { later: false })).toEqual({ status: 201, body: { id: 'sent', size: 1 } });
      expect(await s.call('POST', '/sends', { later: true })).toEqual({ status: 202, body: { sendAt: 'tomorrow' } });
      const lie = await s.call('POST', '/sends', { later: true, lie: true });
      expect([lie.status, lie.body.error.code]).toEqual([500, 'response_contract']);
      expect(lie.body.error.message).toContain('sendAt');
    } finally {
      await s.close();
    }
  });

  it('sent: a handler may answer through res with another representation (a page for a browser), unchecked', async () => {
    const area = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
    area.route('POST /things/:id/done', {
      summary: 'Done: JSON, or a page for a browser',
      response: Thing,
      handler: async ({ req, res, param, sent }) => {
        if (req.accepts(['json', 'html']) === 'html') return sent(res.type('html').send(`<p>${param('id')} done</p>`));
        if (req.query.lie) return sent(res);
        return { id: param('id'), size: 1 };
      },
    });
    const app = express();
    app.use((_req, res, next) => {
      res.locals.principal = { kind: 'user', orgId: 'o1', userId: 'u1', role: 'admin' };
      next();
    });
    app.use('/api/v1', area.router({} as RouteDeps, strictResponses));
    app.use(errorHandler(createLogger('test', 'silent')));
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/things/t1/done`;
      const page = await fetch(url, { method: 'POST', headers: { accept: 'text/html' } });
      expect([page.status, page.headers.get('content-type'), await page.text()]).toEqual([200, 'text/html; charset=utf-8', '<p>t1 done</p>']);
      const json = await fetch(url, { method: 'POST', headers: { accept: 'application/json' } });
      expect([json.status, await json.json()]).toEqual([200, { id: 't1', size: 1 }]);
      // Saying so without sending anything is a defect of the route.
      expect((await fetch(`${url}?lie=1`, { method: 'POST', headers: { accept: 'application/json' } })).status).toBe(500);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('refuses a role without the declared permission with 403 before the handler runs', async () => {
    const s = await serve(things(), 'agent', true);
    try {
      const res = await s.call('POST', '/things', { size: 3 });
      expect([res.status, res.body.error.code]).toEqual([403, 'forbidden']);
      expect(res.body.error.message).toContain('settings:edit');
    } finally {
      await s.close();
    }
  });

  it('under the response contract, an answer its schema refuses is a 500 naming the field; without it the body goes out', async () => {
    const strict = await serve(things(), 'admin', true);
    try {
      const res = await strict.call('PUT', '/things/abc');
      expect([res.status, res.body.error.code]).toEqual([500, 'response_contract']);
      expect(res.body.error.message).toContain('size');
    } finally {
      await strict.close();
    }
    const lax = await serve(things(), 'admin', false);
    try {
      expect(await lax.call('PUT', '/things/abc')).toEqual({ status: 200, body: { id: 'abc' } });
    } finally {
      await lax.close();
    }
  });

  it('an API-key route declares its scope: refused without it (403 insufficient_scope), documented with it', async () => {
    const area = routeArea({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: contacts' });
    expect(() => area.route('GET /nothing', { summary: 'No scope', response: null, handler: async () => undefined })).toThrow('scope');
    area.route('GET /things/:id', {
      summary: 'One',
      scope: 'contacts:read',
      response: Thing,
      handler: async ({ param }) => ({ id: param('id'), size: 2 }),
    });
    expect(area.ops.map((o) => o.scope)).toEqual(['contacts:read']);
    const app = express();
    let scopes: string[] = [];
    app.use((_req, res, next) => {
      res.locals.principal = { kind: 'api_key', orgId: 'o1', userId: '', role: 'admin', scopes };
      next();
    });
    app.use('/api/public', area.router({} as RouteDeps, strictResponses));
    app.use(errorHandler(createLogger('test', 'silent')));
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/public/things/x`;
      const refused = await fetch(url);
      expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([403, 'insufficient_scope']);
      scopes = ['contacts:read'];
      const allowed = await fetch(url);
      expect([allowed.status, await allowed.json()]).toEqual([200, { id: 'x', size: 2 }]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('RESPONSE_CONTRACT: strict by default only under NODE_ENV=test', () => {
    expect(responseContract({ NODE_ENV: 'test', RESPONSE_CONTRACT: 'auto' })).toBe(strictResponses);
    expect(responseContract({ NODE_ENV: 'production', RESPONSE_CONTRACT: 'auto' })).toBeUndefined();
    expect(responseContract({ NODE_ENV: 'development', RESPONSE_CONTRACT: 'auto' })).toBeUndefined();
    expect(responseContract({ NODE_ENV: 'production', RESPONSE_CONTRACT: 'strict' })).toBe(strictResponses);
    expect(responseContract({ NODE_ENV: 'test', RESPONSE_CONTRACT: 'off' })).toBeUndefined();
  });
});
