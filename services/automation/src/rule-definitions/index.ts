/**
 * What a rule is: its trigger, conditions and steps and their validation, with 400s that name the field (definition,
 * triggers), the cron parser of schedule triggers, the `rules` table, and the cache of each org's active rules that
 * the trigger consumer reads. No Deps: deps.ts imports this face (the cache). The rules module (the API, runs, timed
 * triggers) and the events module build on it.
 */
export {
  type ActionDef,
  checkActionsFitTrigger,
  CONVERSATION_ASSIGNEE,
  referencesOf,
  ruleIncomplete,
  STEP_FIELD,
  stepsOf,
  validateActions,
  validateDescription,
  validateName,
  validateRuleType,
  validateTrigger,
  waitSeconds,
} from './definition';
export {
  conditionsHold,
  contactIdOf,
  EVENT_OF_TIMED_TRIGGER,
  type Facts,
  holds,
  type IdleSettings,
  keywordMatches,
  needsContactLookup,
  type ScheduleSettings,
  subjectOf,
  subjectPrefixOf,
  type TriggerDef,
  type TriggerType,
  triggersOfEvent,
  valueOf,
} from './triggers';
export { nextOccurrence, parseCron } from './cron';
export * as rulesRepo from './rules.repo';
export { type RuleRow, type RuleState, type RuleStatus, ruleState, rulesUsingTemplate, triggerOf } from './rules.repo';
export { RuleCache } from './rule-cache';
