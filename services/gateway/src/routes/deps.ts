import type { Agent } from 'node:http';
import type { Request, RequestHandler, Router } from 'express';
import type { InternalAuth } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { Clients } from '../clients';
import type { GatewayConfig } from '../config';
import type { HttpDrain } from '../http/drain';
import type { Redis } from '../redis';

/** What every route module gets: clients for the services, auth middleware, config. */
export interface RouteDeps {
  config: GatewayConfig;
  clients: Clients;
  /** Signs the verified caller for a service (gRPC calls do it themselves; streamed HTTP proxies use it). */
  internalAuth: InternalAuth;
  redis: Redis;
  log: Logger;
  auth: { bearer: RequestHandler; apiKey: RequestHandler };
  /** Per-IP limit for routes without a credential (setup, login, refresh). */
  authLimit: RequestHandler;
  /** Per-IP limit for the links in campaign emails (unsubscribe, open pixel): a bucket of their own. */
  linkLimit: RequestHandler;
  /** Keep-alive connections for requests proxied as streams (attachments). */
  streamAgent: Agent;
  /** Shutdown state: /readyz answers 503 once the drain has begun. */
  drain: HttpDrain;
  /** The gateway's Prometheus registry: request durations (http/request-metrics.ts), 429s, consumers. */
  metrics: Metrics;
}

/**
 * The routes of each backend service, one module per service. `internal` is mounted under /api/v1
 * behind the bearer token, `public` under /api/public behind the API key, `root` at / (pages,
 * sandbox control) with whatever auth the module applies itself. `stream` is mounted under /api/v1
 * before the JSON body parser (request bodies proxied as streams), and each of its routes applies its own auth.
 * `parsesOwnBody` marks requests the shared JSON parser must leave to the module's own (larger) one.
 * What a module gives sits here beside what it gets, not in services.ts: that file imports every module.
 */
export interface ServiceRoutes {
  stream?: Router;
  /** Requests the module parses itself (a bigger body limit, after its own auth): the shared JSON parser leaves them. */
  parsesOwnBody?: (req: Request) => boolean;
  internal?: Router;
  public?: Router;
  root?: Router;
}
