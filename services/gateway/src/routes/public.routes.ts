import { Router } from 'express';
import type { RouteDeps } from './deps';
import { principalOf } from '../http/principal';
import { noScopeNeeded } from '../http/scopes';

/**
 * The external API under /api/public, authenticated by X-API-Key (applied by app.ts for every path here).
 * Resource routes are added by each service's route module; this file holds what belongs to no service.
 */
export function publicRoutes(_deps: RouteDeps): Router {
  const r = Router();
  // Lets an integrator check a key without touching data: which organization does it act for?
  r.get('/whoami', noScopeNeeded, (_req, res) => {
    res.json({ organizationId: principalOf(res).orgId });
  });
  return r;
}
