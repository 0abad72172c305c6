import type { Router } from 'express';
import { z } from 'zod';
import { addressOf } from '../clients';
import { EDGE_REFUSALS } from '../docs/registry';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps } from './deps';

const Readiness = z.object({ status: z.enum(['ready', 'not_ready', 'draining']), checks: z.record(z.string(), z.boolean()) });

/**
 * /healthz: the process is up. /readyz: Redis and every configured service answer their health check (which a
 * service passes only while its own PostgreSQL, RabbitMQ and Redis answer), and the gateway is not shutting down
 * (503 `draining` from SIGTERM on, so no new work is routed here). No credential.
 */
export const healthArea = routeArea({ prefix: '', auth: 'none', tag: 'Health' });

healthArea.route('GET /healthz', {
  summary: 'The process is up',
  response: z.object({ status: z.literal('ok') }),
  errors: EDGE_REFUSALS,
  handler: async () => ({ status: 'ok' as const }),
});
healthArea.route('GET /readyz', {
  summary: 'Redis and every configured service answer, and the gateway is not shutting down',
  description:
    '`checks` names Redis and each service; a service is `false` when it does not answer or cannot reach its own PostgreSQL, RabbitMQ or Redis. 503 with status `not_ready` (a failed check) or `draining` (shutting down).',
  status: [200, 503],
  response: Readiness,
  errors: EDGE_REFUSALS,
  handler: async ({ res, deps: { config, clients, redis, drain } }) => {
    if (drain.isDraining()) {
      res.status(503);
      return { status: 'draining' as const, checks: {} };
    }
    const services = config.SERVICES.split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    const checks: Record<string, boolean> = {};
    await Promise.all([
      redis.ping().then(
        () => (checks.redis = true),
        () => (checks.redis = false),
      ),
      ...services.map(async (name) => {
        const addr = addressOf(config, name);
        checks[name] = addr ? await clients.health.check(addr) : false;
      }),
    ]);
    const ready = Object.values(checks).every(Boolean);
    res.status(ready ? 200 : 503);
    return { status: ready ? ('ready' as const) : ('not_ready' as const), checks };
  },
});

export function healthRoutes(deps: RouteDeps): Router {
  return healthArea.router(deps, responseContract(deps.config));
}
