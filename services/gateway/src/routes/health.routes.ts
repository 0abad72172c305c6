import { Router } from 'express';
import { addressOf } from '../clients';
import type { RouteDeps } from './deps';

/**
 * /healthz: the process is up. /readyz: Redis and every configured service answer their health check (which a
 * service passes only while its own PostgreSQL, RabbitMQ and Redis answer), and the gateway is not shutting down
 * (503 `draining` from SIGTERM on, so no new work is routed here).
 */
export function healthRoutes({ config, clients, redis, drain }: RouteDeps): Router {
  const r = Router();
  const services = config.SERVICES.split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
    if (drain.isDraining()) {
      res.status(503).json({ status: 'draining', checks: {} });
      return;
    }
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
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  return r;
}
