import { z } from 'zod';
import type { scoreOut, scoringConfigOut, scoringRuleOut } from '../../routes/scoring.out';
import { ConfigPatch, NewRule, RulePatch } from '../../routes/scoring.routes';
import { proto } from '../proto-schema';
import { area } from '../registry';
import { keysMatch } from '../schemas/check';

const SCORING = 'crm/v1/scoring.proto';

/** scoring.out scoringConfigOut: updatedAt null until the organization first saves its config. */
const ScoringConfig = z.object({
  orgId: z.string(),
  scoringModel: z.string(),
  baseScore: z.number().int(),
  maxScore: z.number().int(),
  rules: z.array(proto(SCORING, 'crm.v1.ScoringFactor')),
  decayRate: z.number(),
  decayInterval: z.string(),
  highValueThreshold: z.number().int(),
  recomputing: z.boolean().meta({ description: 'scores are being recomputed after a change' }),
  updatedAt: z.string().nullable(),
});
keysMatch<z.infer<typeof ScoringConfig>, ReturnType<typeof scoringConfigOut>>(true);

/** scoring.out scoringRuleOut: value null when the rule scores any tag or status. */
const ScoringRule = z.object({
  id: z.string(),
  name: z.string(),
  condition: z.string(),
  value: z.string().nullable(),
  points: z.number().int(),
  weight: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
keysMatch<z.infer<typeof ScoringRule>, ReturnType<typeof scoringRuleOut>>(true);

/** scoring.out scoreOut. */
const ContactScore = z.object({
  contactId: z.string(),
  totalScore: z.number().int(),
  baseScore: z.number().int(),
  breakdown: z.array(proto(SCORING, 'crm.v1.ScoreBreakdownItem').extend({ value: z.string().nullable() })),
  lastUpdated: z.string(),
});
keysMatch<z.infer<typeof ContactScore>, ReturnType<typeof scoreOut>>(true);

/** Lead scoring (crm): the organization's model and rules (admins and owners change them), and a contact's score. */
const scoring = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Lead scoring' });
scoring.op('GET /scoring/config', {
  summary: 'The scoring model: base and maximum score, decay, the high-value threshold',
  responses: { 200: ScoringConfig },
});
scoring.op('PUT /scoring/config', {
  summary: 'Change the scoring model; only the fields sent change (scores are recomputed)',
  body: ConfigPatch,
  responses: { 200: ScoringConfig },
});
scoring.op('GET /scoring/rules', { summary: 'The scoring rules', responses: { 200: z.array(ScoringRule) } });
scoring.op('POST /scoring/rules', {
  summary: 'Add a scoring rule (422 at the organization’s rule limit)',
  body: NewRule,
  responses: { 201: ScoringRule },
  errors: [422],
});
scoring.op('GET /scoring/rules/:id', { summary: 'One scoring rule', responses: { 200: ScoringRule } });
scoring.op('PUT /scoring/rules/:id', {
  summary: 'Change a scoring rule; only the fields sent change',
  body: RulePatch,
  responses: { 200: ScoringRule },
});
scoring.op('DELETE /scoring/rules/:id', { summary: 'Delete a scoring rule', responses: { 204: null } });
scoring.op('GET /contacts/:id/scores', { summary: 'A contact’s score and how each rule contributed', responses: { 200: ContactScore } });

export const scoringOps = scoring.ops;
