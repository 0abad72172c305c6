import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import { orNull } from '../http/shape';
import type { ContactScore as ContactScoreSchema, ScoringConfig as ScoringConfigSchema, ScoringRule as ScoringRuleSchema } from './scoring.schemas';

type ScoringConfig = crm.ScoringConfig__Output;
type ScoringRule = crm.ScoringRule__Output;
type ContactScore = crm.ContactScore__Output;

/** The spec's Scoring config plus highValueThreshold, recomputing and updatedAt (null until first written). */
export function scoringConfigOut(c: ScoringConfig): z.input<typeof ScoringConfigSchema> {
  return {
    orgId: c.orgId,
    scoringModel: c.scoringModel,
    baseScore: c.baseScore,
    maxScore: c.maxScore,
    rules: c.rules.map((f) => ({ ...f })),
    decayRate: c.decayRate,
    decayInterval: c.decayInterval,
    highValueThreshold: c.highValueThreshold,
    recomputing: c.recomputing,
    updatedAt: orNull(c.updatedAt),
  };
}

/** The spec's Scoring rule plus value (a tag or status the rule is narrowed to; null = any) and updatedAt. */
export function scoringRuleOut(r: ScoringRule): z.input<typeof ScoringRuleSchema> {
  return {
    id: r.id,
    name: r.name,
    condition: r.condition,
    value: orNull(r.value),
    points: r.points,
    weight: r.weight,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function scoreOut(c: ContactScore): z.input<typeof ContactScoreSchema> {
  return {
    contactId: c.contactId,
    totalScore: c.totalScore,
    baseScore: c.baseScore,
    breakdown: c.breakdown.map((b) => ({
      ruleId: b.ruleId,
      ruleName: b.ruleName,
      condition: b.condition,
      value: orNull(b.value),
      occurrences: b.occurrences,
      points: b.points,
      weight: b.weight,
      contribution: b.contribution,
    })),
    lastUpdated: c.lastUpdated,
  };
}
