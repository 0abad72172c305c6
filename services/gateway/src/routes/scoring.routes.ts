import { z } from 'zod';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps, ServiceRoutes } from './deps';
import { scoreOut, scoringConfigOut, scoringRuleOut } from './scoring.out';
import { ConfigPatch, ContactScore, NewRule, RulePatch, ScoringConfig, ScoringRule } from './scoring.schemas';

/**
 * Lead scoring (crm.v1.ScoringService): the organization's model and rules (admins and owners change them), and a
 * contact's score with its breakdown. Served and documented from these declarations.
 */
export const scoringArea = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Lead scoring' });
const scoring = (deps: RouteDeps) => deps.clients.crmScoring;

scoringArea.route('GET /scoring/config', {
  summary: 'The scoring model: base and maximum score, decay, the high-value threshold',
  response: ScoringConfig,
  handler: async ({ ctx, deps }) => scoringConfigOut(await scoring(deps).GetScoringConfig({}, ctx)),
});
scoringArea.route('PUT /scoring/config', {
  summary: 'Change the scoring model; only the fields sent change (scores are recomputed)',
  body: ConfigPatch,
  response: ScoringConfig,
  handler: async ({ body, ctx, deps }) => scoringConfigOut(await scoring(deps).UpdateScoringConfig(body, ctx)),
});
scoringArea.route('GET /scoring/rules', {
  summary: 'The scoring rules',
  response: z.array(ScoringRule),
  handler: async ({ ctx, deps }) => (await scoring(deps).ListScoringRules({}, ctx)).data.map(scoringRuleOut),
});
scoringArea.route('POST /scoring/rules', {
  summary: 'Add a scoring rule (422 at the organization’s rule limit)',
  body: NewRule,
  status: 201,
  response: ScoringRule,
  errors: [422],
  handler: async ({ body, ctx, deps }) => scoringRuleOut(await scoring(deps).CreateScoringRule(body, ctx)),
});
scoringArea.route('GET /scoring/rules/:id', {
  summary: 'One scoring rule',
  response: ScoringRule,
  handler: async ({ param, ctx, deps }) => scoringRuleOut(await scoring(deps).GetScoringRule({ id: param('id') }, ctx)),
});
scoringArea.route('PUT /scoring/rules/:id', {
  summary: 'Change a scoring rule; only the fields sent change',
  body: RulePatch,
  response: ScoringRule,
  handler: async ({ param, body, ctx, deps }) => scoringRuleOut(await scoring(deps).UpdateScoringRule({ id: param('id'), ...body }, ctx)),
});
scoringArea.route('DELETE /scoring/rules/:id', {
  summary: 'Delete a scoring rule',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await scoring(deps).DeleteScoringRule({ id: param('id') }, ctx);
  },
});
scoringArea.route('GET /contacts/:id/scores', {
  summary: 'A contact’s score and how each rule contributed',
  response: ContactScore,
  handler: async ({ param, ctx, deps }) => scoreOut(await scoring(deps).GetContactScore({ id: param('id') }, ctx)),
});

export function scoringRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: scoringArea.router(deps, responseContract(deps.config)) };
}
