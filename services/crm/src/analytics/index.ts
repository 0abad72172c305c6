import { EventConsumer } from '@crm/events';
import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { analyticsHandler, ANALYTICS_BINDINGS } from './analytics.consumer';
import { analyticsHandlers } from './analytics.handler';
import { identityTeamDirectory } from './team-directory';

/**
 * Analytics as app.ts wires it: crm.v1.AnalyticsService on the service's gRPC server and the consumer that keeps
 * the read model current (its own queue, so analytics work never delays lastActivity updates).
 */
export function analyticsFeature(deps: Deps, server: GrpcServer) {
  const { config, pool, log } = deps;
  const team = identityTeamDirectory(deps.identity);
  const consumer = new EventConsumer({
    amqpUrl: config.AMQP_URL,
    exchange: config.EVENTS_EXCHANGE,
    queue: `${config.EVENTS_EXCHANGE}.crm.analytics`,
    bindings: ANALYTICS_BINDINGS,
    handler: analyticsHandler(log),
    logger: log,
    pool,
    prefetch: 100,
    // Events of one conversation or contact serialise on its read-model row; different ones run in parallel.
    concurrency: 4,
  });
  server.add(serviceDefinition(loadProto('crm/v1/analytics.proto'), 'crm.v1.AnalyticsService'), analyticsHandlers({ pool, log, team }));
  return {
    start: () => consumer.start(),
    stop: () => consumer.stop(),
  };
}
