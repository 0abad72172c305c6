import type { Agent } from 'node:http';
import type { RequestHandler } from 'express';
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
