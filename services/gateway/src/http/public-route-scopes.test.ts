import type { RequestHandler } from 'express';
import { buildApp } from '../app';
import { loadConfig } from '../config';
import { OPERATIONS } from '../docs';
import type { RouteDeps } from '../routes/deps';
import { declaredScopes } from './scopes';

// Architecture rule (issue #31 item 3): every route under /api/public declares the scope an API key needs
// (requireScope) or that it needs none (noScopeNeeded). A route added without either would let every key, whatever
// its scopes, reach it. The OpenAPI document names the same scope for each public operation.
describe('public API routes and their scopes', () => {
  const pass: RequestHandler = (_req, _res, next) => next();
  // The app is only built (never served): route modules make their service clients on first use.
  const deps = {
    config: loadConfig({ JWT_SECRET: 'x'.repeat(32), NODE_ENV: 'development' }),
    clients: new Proxy({}, { get: () => undefined }),
    auth: { bearer: pass, apiKey: pass },
    authLimit: pass,
    linkLimit: pass,
    metrics: { histogram: () => ({ observe: () => undefined }), counter: () => ({ inc: () => undefined }) },
  } as unknown as RouteDeps;
  const routes = declaredScopes(buildApp(deps));

  it('finds the public routes (the walk reads the real router)', () => {
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['GET /api/public/contacts', 'POST /api/public/messages/send']),
    );
  });

  it('every /api/public route declares a scope or that it needs none', () => {
    expect(routes.filter((r) => r.scope === undefined).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  it('reads take a read scope, writes a write scope, sending messages:send; whoami needs none', () => {
    const scopeOf = (route: string) => routes.find((r) => `${r.method} ${r.path}` === route)?.scope;
    expect(scopeOf('GET /api/public/contacts')).toBe('contacts:read');
    expect(scopeOf('PUT /api/public/contacts/:id')).toBe('contacts:write');
    expect(scopeOf('POST /api/public/appointments')).toBe('appointments:write');
    expect(scopeOf('GET /api/public/conversations/:id/messages')).toBe('conversations:read');
    expect(scopeOf('POST /api/public/messages/send')).toBe('messages:send');
    expect(scopeOf('GET /api/public/whoami')).toBe('none');
    for (const r of routes.filter((x) => x.scope !== 'none')) {
      if (r.method === 'GET') expect(`${r.path} ${r.scope}`).toMatch(/:read$/);
      else expect(`${r.path} ${r.scope}`).toMatch(/:(write|send|manage)$/);
    }
  });

  it('the OpenAPI document names the same scope for each public operation', () => {
    const documented = OPERATIONS.filter((o) => o.auth === 'apiKey').map((o) => `${o.method} ${o.path} ${o.scope}`);
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path} ${r.scope}`).sort());
  });
});
