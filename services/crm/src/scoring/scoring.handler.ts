import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as scoring from './scoring.service';

/** crm.v1.ScoringService: decode, call the use case, return; errors are mapped by grpc-kit. */
export function scoringHandlers(deps: Deps, worker: scoring.Kick): HandlersFor<'crm.v1.ScoringService'> {
  return {
    GetScoringConfig: (_req, ctx) => scoring.getConfig(deps, ctx),
    UpdateScoringConfig: (req, ctx) => scoring.updateConfig(deps, ctx, worker, req),
    ListScoringRules: (_req, ctx) => scoring.listRules(deps, ctx),
    GetScoringRule: (req, ctx) => scoring.getRule(deps, ctx, req.id),
    CreateScoringRule: (req, ctx) => scoring.createRule(deps, ctx, worker, req),
    UpdateScoringRule: (req, ctx) => scoring.updateRule(deps, ctx, worker, req),
    DeleteScoringRule: (req, ctx) => scoring.deleteRule(deps, ctx, worker, req.id),
    GetContactScore: (req, ctx) => scoring.contactScore(deps, ctx, req.id),
  };
}
