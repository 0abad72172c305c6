import type { Router } from 'express';
import { page } from './common.schemas';
import { badRequest } from '../http/errors';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps } from './deps';
import { namedApiKeyOut } from './identity.out';
import { ApiSettings, CreatedApiKey, ListedApiKey, NewApiKey } from './identity.schemas';

/**
 * Named API keys with scopes (issue #31 item 3), and the org's API settings. Owners and admins manage every key;
 * an agent lists and revokes the keys bound to themselves, and creates one only while the org allows it (identity
 * decides; it checks every rule again). Mounted by the identity routes, before the app's bearer check, so each route
 * checks the bearer itself.
 */
export const apiKeyArea = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'API key', middleware: (deps) => [deps.auth.bearer] });

apiKeyArea.route('POST /api-keys', {
  summary: 'Create a named API key with scopes, optionally bound to a user; the key is shown once',
  description:
    'Owners and admins create any key (bound to a user of a role no higher than their own); another user creates ' +
    'only keys bound to themselves, and only while PUT /settings/api has agentKeys on (else 403). 400 names the field.',
  body: NewApiKey,
  indexedBody: true,
  status: 201,
  response: CreatedApiKey,
  handler: async ({ body: k, ctx, deps }) => {
    if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) throw badRequest([{ field: 'expiresAt', message: 'must be in the future' }]);
    const created = await deps.clients.identity.CreateNamedApiKey(
      { name: k.name, scopes: k.scopes, userId: k.userId ?? '', expiresAt: k.expiresAt ?? '' },
      ctx,
    );
    return namedApiKeyOut(created, created.key ?? '');
  },
});
apiKeyArea.route('GET /api-keys', {
  summary: 'The named API keys (for an agent: those bound to them), newest first; never the key itself',
  paging: { limit: 20, max: 100 },
  response: page(ListedApiKey),
  handler: async ({ page, ctx, deps }) => {
    const out = await deps.clients.identity.ListNamedApiKeys(page, ctx);
    return { data: out.data.map((k) => namedApiKeyOut(k)), pagination: out.pagination! };
  },
});
apiKeyArea.route('DELETE /api-keys/:id', {
  summary: 'Revoke a named API key: it stops working at once on every gateway',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await deps.clients.identity.RevokeNamedApiKey({ id: param('id') }, ctx);
  },
});
apiKeyArea.route('GET /settings/api', {
  summary: 'The organization’s API settings',
  response: ApiSettings,
  handler: async ({ ctx, deps }) => deps.clients.identity.GetApiSettings({}, ctx),
});
apiKeyArea.route('PUT /settings/api', {
  summary: 'Let agents create API keys bound to themselves, or not (owners and admins)',
  permission: 'settings:edit',
  body: ApiSettings,
  response: ApiSettings,
  handler: async ({ body, ctx, deps }) => deps.clients.identity.SetApiSettings(body, ctx),
});

export function apiKeyRoutes(deps: RouteDeps): Router {
  return apiKeyArea.router(deps, responseContract(deps.config));
}
