import { invalid } from '@crm/grpc-kit';
import { isUuid, oneOf, requireText, rules } from '../shared';

/**
 * Lead scoring rules of the game, without I/O: the config and its defaults, the conditions a rule can score,
 * and validation. Score = clamp(baseScore + Σ points × weight × (1 − decayRate)^(age / decayInterval), 0, maxScore),
 * rounded; each matching event counts once, at its own age.
 */

export const SCORING_MODELS = ['weighted'] as const;
export const DECAY_INTERVALS = ['hourly', 'daily', 'weekly'] as const;
export type DecayInterval = (typeof DECAY_INTERVALS)[number];

export const INTERVAL_SECONDS: Record<DecayInterval, number> = { hourly: 3600, daily: 86_400, weekly: 604_800 };

/**
 * What a rule can score. appointment_completed is absent on purpose: scores are computed from the events the
 * scoring consumer reads, and appointment.updated (which says when one is completed) is not among them.
 */
export const CONDITIONS = [
  'message_received',
  'message_replied',
  'appointment_created',
  'tag_added',
  'status_changed',
  'stage_reached',
  'contact_created',
] as const;
export type Condition = (typeof CONDITIONS)[number];

export interface ScoringConfig {
  scoringModel: string;
  baseScore: number;
  maxScore: number;
  decayRate: number;
  decayInterval: DecayInterval;
  highValueThreshold: number;
}

/**
 * For an org that never wrote a config. No default rules: points mean what the org decided, and silent
 * defaults would move every existing contact's score (and raise high-value notifications nobody asked for).
 * 80 is automation's HIGH_VALUE_LEAD_SCORE default; 5% a day halves a contribution in about two weeks.
 */
export const DEFAULT_CONFIG: ScoringConfig = {
  scoringModel: 'weighted',
  baseScore: 0,
  maxScore: 100,
  decayRate: 0.05,
  decayInterval: 'daily',
  highValueThreshold: 80,
};

export const MAX_SCORE_LIMIT = 100_000;
export const POINTS_LIMIT = 1000;
export const WEIGHT_LIMIT = 10;
export const MAX_RULES = 100;

/**
 * When a score change is worth a contact.updated: a move of at least `step` points since the last one
 * published (a tenth of the scale), or reaching the threshold. Falling below the threshold counts only
 * `hysteresis` points under it, so a score wobbling around the threshold raises one notification, not one
 * per wobble.
 */
export function publishRule(c: ScoringConfig) {
  return {
    step: Math.max(1, Math.round(c.maxScore / 10)),
    hysteresis: Math.max(1, Math.round(c.maxScore / 20)),
    threshold: c.highValueThreshold,
  };
}

function integer(value: number, field: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(field, `must be a whole number from ${min} to ${max}`);
  return value;
}

export interface ConfigPatch {
  scoringModel?: string;
  baseScore?: number;
  maxScore?: number;
  decayRate?: number;
  decayInterval?: string;
  highValueThreshold?: number;
}

/** The config after a patch, checked as a whole (cross-field rules name the field the patch should fix). */
export function applyConfigPatch(current: ScoringConfig, p: ConfigPatch): ScoringConfig {
  const next = { ...current };
  if (p.scoringModel !== undefined) next.scoringModel = oneOf(p.scoringModel, SCORING_MODELS, 'scoringModel');
  if (p.maxScore !== undefined) next.maxScore = integer(p.maxScore, 'maxScore', 1, MAX_SCORE_LIMIT);
  if (p.baseScore !== undefined) next.baseScore = integer(p.baseScore, 'baseScore', 0, MAX_SCORE_LIMIT);
  if (p.decayRate !== undefined) {
    if (!Number.isFinite(p.decayRate) || p.decayRate < 0 || p.decayRate >= 1)
      throw invalid('decayRate', 'must be a fraction from 0 (no decay) up to, not including, 1');
    next.decayRate = p.decayRate;
  }
  if (p.decayInterval !== undefined) next.decayInterval = oneOf(p.decayInterval, DECAY_INTERVALS, 'decayInterval');
  if (p.highValueThreshold !== undefined) next.highValueThreshold = integer(p.highValueThreshold, 'highValueThreshold', 1, MAX_SCORE_LIMIT);
  if (next.baseScore > next.maxScore)
    throw invalid(p.baseScore !== undefined ? 'baseScore' : 'maxScore', `baseScore (${next.baseScore}) must not exceed maxScore (${next.maxScore})`);
  if (next.highValueThreshold > next.maxScore) {
    throw invalid(
      p.highValueThreshold !== undefined ? 'highValueThreshold' : 'maxScore',
      `highValueThreshold (${next.highValueThreshold}) must not exceed maxScore (${next.maxScore})`,
    );
  }
  return next;
}

export interface RuleFields {
  name: string;
  condition: Condition;
  value: string;
  points: number;
  weight: number;
}

export interface RulePatch {
  name?: string;
  condition?: string;
  value?: string;
  points?: number;
  weight?: number;
}

/** A rule after a patch (create = patch over nothing), with the value normalised for its condition. */
export function applyRulePatch(current: Partial<RuleFields>, p: RulePatch): RuleFields {
  const name = p.name !== undefined ? requireText(p.name, 'name', 200) : current.name;
  if (name === undefined) throw invalid('name', 'is required');
  const condition = p.condition !== undefined ? oneOf(p.condition, CONDITIONS, 'condition') : current.condition;
  if (condition === undefined) throw invalid('condition', `is required (one of ${CONDITIONS.join(', ')})`);
  const points = p.points !== undefined ? integer(p.points, 'points', -POINTS_LIMIT, POINTS_LIMIT) : current.points;
  if (points === undefined) throw invalid('points', 'is required');
  let weight = current.weight ?? 1;
  if (p.weight !== undefined) {
    if (!Number.isFinite(p.weight) || p.weight < 0 || p.weight > WEIGHT_LIMIT) throw invalid('weight', `must be a number from 0 to ${WEIGHT_LIMIT}`);
    weight = p.weight;
  }
  // A changed condition drops a value that belonged to the old one unless a new value is sent.
  const rawValue = p.value !== undefined ? p.value : p.condition !== undefined && p.condition !== current.condition ? '' : (current.value ?? '');
  return { name, condition, value: ruleValue(condition, rawValue), points, weight };
}

function ruleValue(condition: Condition, raw: string): string {
  const v = raw.trim();
  if (!v) return '';
  if (condition === 'tag_added') {
    if (v.length > rules.MAX_TAG_LENGTH) throw invalid('value', `must be a tag of at most ${rules.MAX_TAG_LENGTH} characters`);
    // Tags match case-insensitively, like the contact's own tag de-duplication.
    return v.toLowerCase();
  }
  if (condition === 'status_changed') return oneOf(v, rules.CONTACT_STATUSES, 'value');
  // A custom status (pipeline stage) of the org; that it exists is checked against the database on write.
  if (condition === 'stage_reached') {
    if (!isUuid(v)) throw invalid('value', "must be the id of one of the organization's custom statuses");
    return v.toLowerCase();
  }
  throw invalid('value', `must be empty for condition ${condition} (only tag_added, status_changed and stage_reached take a value)`);
}

/** How the config shows a rule: the behaviour it scores. */
export function factorOf(r: { condition: string; value: string }): string {
  return r.value ? `${r.condition}:${r.value}` : r.condition;
}
