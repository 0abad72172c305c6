import { EventConsumer } from '@crm/events';
import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { SCORING_BINDINGS } from './facts';
import { scoringEventHandler } from './scoring.consumer';
import { scoringHandlers } from './scoring.handler';
import { ScoringWorker } from './scoring.worker';

/**
 * Lead scoring as app.ts wires it: the crm.v1.ScoringService on the service's gRPC server, the event
 * consumer that turns events into scores, and the background worker (org-wide recomputes after rule or
 * config changes, the periodic decay sweep).
 */
export function scoringFeature(deps: Deps, server: GrpcServer) {
  const { config, pool, log } = deps;
  const worker = new ScoringWorker(pool, log, { tickMs: config.SCORING_TICK_MS, sweepMs: config.SCORING_SWEEP_MS, batchSize: config.SCORING_BATCH_SIZE });
  const consumer = new EventConsumer({
    amqpUrl: config.AMQP_URL,
    exchange: config.EVENTS_EXCHANGE,
    queue: `${config.EVENTS_EXCHANGE}.crm.scoring`,
    bindings: SCORING_BINDINGS,
    handler: scoringEventHandler(log),
    logger: log,
    pool,
    prefetch: 100,
    // Events of one contact serialise on its state row; different contacts are scored in parallel.
    concurrency: 4,
  });
  server.add(serviceDefinition(loadProto('crm/v1/scoring.proto'), 'crm.v1.ScoringService'), scoringHandlers(deps, worker));
  return {
    async start() {
      await consumer.start();
      worker.start();
    },
    async stop() {
      await worker.stop();
      await consumer.stop();
    },
  };
}
