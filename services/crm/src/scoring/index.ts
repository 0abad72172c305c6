import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import type { FamilyModule } from '../events';
import { scoreEvents } from './scoring.consumer';
import { scoringHandlers } from './scoring.handler';
import { UsedConditions } from './used-conditions';
import { ScoringWorker } from './scoring.worker';

/**
 * Lead scoring as app.ts wires it: the crm.v1.ScoringService on the service's gRPC server, the function that
 * turns events into scores (run by the message and contact family consumers, in their transactions), and the
 * background worker (org-wide recomputes after rule or config changes, the periodic decay sweep).
 */
export function scoringFeature(deps: Deps, server: GrpcServer) {
  const { config, pool, log } = deps;
  const worker = new ScoringWorker(pool, log, { tickMs: config.SCORING_TICK_MS, sweepMs: config.SCORING_SWEEP_MS, batchSize: config.SCORING_BATCH_SIZE });
  const conditions = new UsedConditions(config.SCORING_RULES_CACHE_MS);
  // Called after a rules or config write committed: this replica sees the new rules at once.
  const changed = {
    kick() {
      conditions.clear();
      worker.kick();
    },
  };
  server.add(serviceDefinition(loadProto('crm/v1/scoring.proto'), 'crm.v1.ScoringService'), scoringHandlers(deps, changed));
  const applyEvents: FamilyModule = scoreEvents(conditions, log);
  return {
    applyEvents,
    async start() {
      worker.start();
    },
    async stop() {
      await worker.stop();
    },
  };
}
