import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import type { NewContactScoring } from '../contacts';
import type { FamilyModule } from '../events';
import { newContactTags, scoreEvents } from './scoring.consumer';
import { newContactStateSql } from './scoring.repo';
import { scoringHandlers } from './scoring.handler';
import { UsedConditions } from './used-conditions';
import { ScoringWorker } from './scoring.worker';

/**
 * Lead scoring as app.ts wires it, in two steps because the contact writer (in Deps) needs scoring and scoring's
 * gRPC service needs Deps: first `recordFacts`, the function that turns events into facts and scores in the
 * caller's transaction, and the background worker (org-wide recomputes after rule or config changes, the periodic
 * decay sweep); then `serve` adds crm.v1.ScoringService to the service's gRPC server.
 *
 * `recordFacts` is called with crm's own contact changes and appointments by the contact writer, in the
 * transaction that makes them, and with other services' message events by the message family consumer. Scoring
 * consumes no crm event back from the broker, so its own leadScore announcements never return to it.
 */
export function scoringFeature(base: Pick<Deps, 'config' | 'pool' | 'log'>) {
  const { config, pool, log } = base;
  const worker = new ScoringWorker(pool, log, {
    tickMs: config.SCORING_TICK_MS,
    sweepMs: config.SCORING_SWEEP_MS,
    batchSize: config.SCORING_BATCH_SIZE,
  });
  const conditions = new UsedConditions(config.SCORING_RULES_CACHE_MS);
  // Called after a rules or config write committed: this replica sees the new rules at once.
  const changed = {
    kick() {
      conditions.clear();
      worker.kick();
    },
  };
  const recordFacts: FamilyModule = scoreEvents(conditions, log);
  // What the contact writer needs to create a contact in one statement when scoring asks nothing else of it.
  const newContacts: NewContactScoring = { tagsOf: newContactTags(conditions), sql: newContactStateSql };
  return {
    recordFacts,
    newContacts,
    serve(deps: Deps, server: GrpcServer) {
      server.add(serviceDefinition(loadProto('crm/v1/scoring.proto'), 'crm.v1.ScoringService'), scoringHandlers(deps, changed));
    },
    async start() {
      worker.start();
    },
    async stop() {
      await worker.stop();
    },
  };
}
