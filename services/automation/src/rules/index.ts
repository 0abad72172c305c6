/**
 * Rules at work: the API (create, change, activate, pause, delete, the run log, the signing secret, a manual run),
 * the runner that takes runs step by step (actions, program), the timed triggers (schedule, conversation_idle) and the
 * run log sweeper, with their tables (rule_runs, rule_schedules, schedule_firings, idle_timers). What a rule is lives
 * in rule-definitions.
 */
export * as rules from './rules';
export { Runner, RUNS_CHANNEL } from './runner';
export { RunLogSweeper } from './run-log-sweeper';
export { TriggerTimers } from './trigger-timers';
export { insertRun } from './runs.repo';
export { armIdle } from './trigger-timers.repo';
