import { Router } from 'express';
import { z } from 'zod';
import { API_KEY_SCOPES } from '@crm/auth';
import type { RouteDeps } from './deps';
import { namedApiKeyOut } from './identity.out';
import { badRequest } from '../http/errors';
import { requirePermission } from '../http/permission';
import { ctxOf } from '../http/principal';
import { body, indexedBody, pageParams, pathParam, s } from '../http/validate';

export const NewApiKey = z.object({
  name: z.string().trim().min(1, 'is required').max(100),
  scopes: z.array(z.enum(API_KEY_SCOPES, { message: `must each be one of ${API_KEY_SCOPES.join(', ')}` })).min(1, 'must name at least one scope'),
  userId: z.string().uuid('must be a user id').nullish(),
  expiresAt: s.timestamp().nullish(),
});

export const ApiSettings = z.object({ agentKeys: z.boolean() });

/**
 * Named API keys with scopes (issue #31 item 3), and the org's API settings. Owners and admins manage every key;
 * an agent lists and revokes the keys bound to themselves, and creates one only while the org allows it (identity
 * decides; it checks every rule again).
 */
export function apiKeyRoutes({ clients, auth }: RouteDeps): Router {
  const r = Router();
  r.post('/api-keys', auth.bearer, async (req, res) => {
    const k = indexedBody(req, NewApiKey);
    if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) throw badRequest([{ field: 'expiresAt', message: 'must be in the future' }]);
    const created = await clients.identity.CreateNamedApiKey(
      { name: k.name, scopes: k.scopes, userId: k.userId ?? '', expiresAt: k.expiresAt ?? '' },
      ctxOf(req, res),
    );
    res.status(201).json(namedApiKeyOut(created, created.key ?? ''));
  });
  r.get('/api-keys', auth.bearer, async (req, res) => {
    const out = await clients.identity.ListNamedApiKeys(pageParams(req, 20), ctxOf(req, res));
    res.json({ data: out.data.map((k) => namedApiKeyOut(k)), pagination: out.pagination });
  });
  r.delete('/api-keys/:id', auth.bearer, async (req, res) => {
    await clients.identity.RevokeNamedApiKey({ id: pathParam(req, 'id') }, ctxOf(req, res));
    res.status(204).end();
  });
  r.get('/settings/api', auth.bearer, async (req, res) => {
    res.json(await clients.identity.GetApiSettings({}, ctxOf(req, res)));
  });
  r.put('/settings/api', auth.bearer, requirePermission('settings:edit'), async (req, res) => {
    res.json(await clients.identity.SetApiSettings(body(req, ApiSettings), ctxOf(req, res)));
  });
  return r;
}
