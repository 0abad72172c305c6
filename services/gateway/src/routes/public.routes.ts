import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../http/principal';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps } from './deps';

/**
 * The external API under /api/public, authenticated by X-API-Key (applied by app.ts for every path here).
 * Resource routes are added by each service's route module; this file holds what belongs to no service.
 */
export const apiKeyCheckArea = routeArea({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: key' });

// Lets an integrator check a key without touching data: which organization does it act for?
apiKeyCheckArea.route('GET /whoami', {
  scope: 'none',
  summary: 'Check an API key: the organization it acts for',
  response: z.object({ organizationId: z.string() }),
  handler: async ({ res }) => ({ organizationId: principalOf(res).orgId }),
});

export function publicRoutes(deps: RouteDeps): Router {
  return apiKeyCheckArea.router(deps, responseContract(deps.config));
}
