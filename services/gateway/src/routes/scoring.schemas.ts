import { z } from 'zod';
import { s } from '../http/validate';
import { proto } from '../docs/proto-schema';

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

const SCORING = 'crm/v1/scoring.proto';

/** The scoring config (scoringConfigOut is typed by it): updatedAt null until the organization first saves its config. */
export const ScoringConfig = z.object({
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

/** A scoring rule (scoringRuleOut is typed by it): value null when the rule scores any tag or status. */
export const ScoringRule = z.object({
  id: z.string(),
  name: z.string(),
  condition: z.string(),
  value: z.string().nullable(),
  points: z.number().int(),
  weight: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** A contact's score (scoreOut is typed by it). */
export const ContactScore = z.object({
  contactId: z.string(),
  totalScore: z.number().int(),
  baseScore: z.number().int(),
  breakdown: z.array(proto(SCORING, 'crm.v1.ScoreBreakdownItem').extend({ value: z.string().nullable() })),
  lastUpdated: z.string(),
});
