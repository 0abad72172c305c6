import type { Express, RequestHandler } from 'express';
import type { ApiKeyScope } from '@crm/auth';
import { HttpError } from './errors';
import { principalOf } from './principal';

/**
 * What an API key must hold to call a public route, declared on the route itself:
 *
 *   pub.get('/contacts', requireScope('contacts:read'), handler)
 *   pub.get('/whoami', noScopeNeeded, handler)
 *
 * Every route under /api/public declares one or the other (tests/architecture/public-route-scopes.test.ts reads the
 * router and fails for a route that does not, and checks the OpenAPI document names the same scope), so a route
 * added later cannot be reached by every key by forgetting the check.
 */

/** The property a declaring middleware carries, read by {@link declaredScopes}. */
const SCOPE = Symbol.for('crm.gateway.requiredScope');
type Declared = RequestHandler & { [SCOPE]: ApiKeyScope | 'none' };

export function requireScope(scope: ApiKeyScope): RequestHandler {
  const check: RequestHandler = (_req, res, next) => {
    if (principalOf(res).scopes?.includes(scope)) return next();
    next(new HttpError(403, 'insufficient_scope', `This API key lacks the scope ${scope}`, [{ field: 'scope', message: scope }]));
  };
  return Object.assign(check, { [SCOPE]: scope }) as Declared;
}

/** For a route any valid key may call (it reads nothing of the organization's data, e.g. /whoami). */
export const noScopeNeeded: RequestHandler = Object.assign<RequestHandler, Pick<Declared, typeof SCOPE>>((_req, _res, next) => next(), {
  [SCOPE]: 'none',
});

/** What is read of the router's layers (express 5 / router 2), as in route-table.ts. */
interface Layer {
  rawPath?: string | string[];
  route?: { path: string; methods: Record<string, boolean>; stack: { handle: unknown }[] };
  handle: { stack?: Layer[] };
}

/**
 * Every route mounted under `prefix` (the routers app.ts mounts behind the API-key check) with the scope it declares
 * (undefined when it declares none), found by walking the router as route-table.ts does. A route of another router
 * whose path merely starts with the prefix (the public OpenAPI document, served without a credential) is not one.
 */
export function declaredScopes(app: Express, prefix = '/api/public'): { method: string; path: string; scope: ApiKeyScope | 'none' | undefined }[] {
  const out: { method: string; path: string; scope: ApiKeyScope | 'none' | undefined }[] = [];
  const walk = (stack: Layer[], base: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const declared = layer.route.stack.map((l) => (l.handle as Partial<Declared>)[SCOPE]).find((s) => s !== undefined);
        for (const [m, on] of Object.entries(layer.route.methods))
          if (on) out.push({ method: m.toUpperCase(), path: base + layer.route.path, scope: declared });
      } else if (layer.handle.stack && typeof layer.rawPath === 'string')
        walk(layer.handle.stack, base + (layer.rawPath === '/' ? '' : layer.rawPath));
    }
  };
  for (const layer of (app as unknown as { router: { stack: Layer[] } }).router.stack)
    if (layer.rawPath === prefix && layer.handle.stack) walk(layer.handle.stack, prefix);
  return out;
}
