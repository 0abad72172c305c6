import { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps, ServiceRoutes } from './deps';
import { scoreOut, scoringConfigOut, scoringRuleOut } from './scoring.out';
import { ctxOf } from '../http/principal';
import { body, s } from '../http/validate';

// ------------------------------------------------------------------------------------------- request schemas

// Types and shapes here; ranges, cross-field rules and the condition list are crm's (400 naming the field).
const int = () => z.number({ error: 'must be a whole number' }).int('must be a whole number');
const num = () => z.number({ error: 'must be a number' });

export const ConfigPatch = z.object({
  scoringModel: z.string({ error: 'must be a string' }).optional(),
  baseScore: int().optional(),
  maxScore: int().optional(),
  decayRate: num().optional(),
  decayInterval: z.string({ error: 'must be a string' }).optional(),
  highValueThreshold: int().optional(),
});

/** null or "" = the rule scores any tag / any status. */
const ruleValue = z
  .union([z.string({ error: 'must be a string' }).max(50, 'must be at most 50 characters'), z.null()])
  .transform((v) => v ?? '')
  .optional();

export const NewRule = z.object({
  name: s.requiredText(200),
  condition: z.string({ error: 'is required' }),
  value: ruleValue,
  points: int(),
  weight: num().optional(),
});
export const RulePatch = z.object({
  name: s.requiredText(200).optional(),
  condition: z.string({ error: 'must be a string' }).optional(),
  value: ruleValue,
  points: int().optional(),
  weight: num().optional(),
});

// ------------------------------------------------------------------------------------------- routes

/** Lead scoring (crm.v1.ScoringService): config, rules, and a contact's score with its breakdown. */
export function scoringRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const scoring = () => clients.crmScoring;

  internal.get('/scoring/config', async (req, res) => {
    res.json(scoringConfigOut(await scoring().GetScoringConfig({}, ctxOf(req, res))));
  });
  internal.put('/scoring/config', async (req, res) => {
    const b = body(req, ConfigPatch);
    res.json(scoringConfigOut(await scoring().UpdateScoringConfig(b, ctxOf(req, res))));
  });

  internal.get('/scoring/rules', async (req, res) => {
    const out = await scoring().ListScoringRules({}, ctxOf(req, res));
    res.json(out.data.map(scoringRuleOut));
  });
  internal.post('/scoring/rules', async (req, res) => {
    const b = body(req, NewRule);
    res.status(201).json(scoringRuleOut(await scoring().CreateScoringRule(b, ctxOf(req, res))));
  });
  internal.get('/scoring/rules/:id', async (req, res) => {
    res.json(scoringRuleOut(await scoring().GetScoringRule({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/scoring/rules/:id', async (req, res) => {
    const b = body(req, RulePatch);
    res.json(scoringRuleOut(await scoring().UpdateScoringRule({ id: req.params.id, ...b }, ctxOf(req, res))));
  });
  internal.delete('/scoring/rules/:id', async (req, res) => {
    await scoring().DeleteScoringRule({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  internal.get('/contacts/:id/scores', async (req, res) => {
    res.json(scoreOut(await scoring().GetContactScore({ id: req.params.id }, ctxOf(req, res))));
  });

  return { internal };
}
