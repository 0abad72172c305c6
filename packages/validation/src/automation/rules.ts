// An automation rule's contract limits: the gateway's schemas are built from these and automation's
// definition checks use the same ones. What a trigger type, field or operator means stays in automation.

export const RULE_STATUSES = ['draft', 'active', 'paused'] as const;
export const RUN_STATUSES = ['running', 'waiting', 'succeeded', 'failed', 'cancelled'] as const;

export const RULE_LIMITS = {
  conditions: 20,
  actions: 20,
  keywords: 50,
  keywordLength: 100,
  inValues: 100,
  /** A message's or template's text. */
  text: 4000,
  title: 200,
  tag: 50,
  name: 200,
  description: 2000,
  /** A type, an operator, a notification type: short slugs. */
  slug: 50,
  conditionField: 200,
  /** Longest wait: a quarter of a year is plenty for follow-ups. */
  waitSeconds: 90 * 86_400,
  /** if steps inside if steps: at most this many levels (a top-level if is level 1). */
  nesting: 5,
  /** Every step of a rule counted, however deep (what one run can take at most). */
  steps: 100,
  url: 2000,
  headers: 20,
  headerValue: 1000,
  bodyTemplate: 10_000,
} as const;

export const TOO_MANY_CONDITIONS = `must have at most ${RULE_LIMITS.conditions} conditions`;
export const TOO_MANY_ACTIONS = `must have at most ${RULE_LIMITS.actions} actions`;
export const TOO_MANY_KEYWORDS = `must have at most ${RULE_LIMITS.keywords} keywords`;
export const KEYWORD_TOO_LONG = `must be at most ${RULE_LIMITS.keywordLength} characters`;
