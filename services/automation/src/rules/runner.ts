import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop } from '@crm/db';
import type { Deps } from '../deps';
import { ruleState } from '../rule-definitions';
import * as runs from './runs.repo';
import { ActionFailure, classify, RunScope } from './actions';
import { compile, resolve } from './program';

/** NOTIFY channel: a committed new run (or an earlier wait) wakes every runner at once. */
export const RUNS_CHANNEL = runs.RUNS_CHANNEL;
/** A claimed run is this instance's for this long, renewed after every step; a dead instance's runs come back after it. */
const LEASE_MS = 60_000;

/**
 * Executes rule runs from the rule_runs table, which is the durable queue: new runs (pending), ended waits and due
 * retries. Several instances share it through FOR UPDATE SKIP LOCKED and leases, and each sleeps until the nearest
 * due run (the timer facility: no poll decides when a wait ends), so a wait survives any restart: whichever instance
 * is up when it falls due resumes it, within the loop's wake-up of its time.
 */
export class Runner {
  private readonly loop: ClaimLoop<runs.RunRow>;

  constructor(private readonly deps: Deps) {
    this.loop = new ClaimLoop({
      name: 'automation runner',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: RUNS_CHANNEL,
      nextDueInMs: () => runs.nextDueInMs(deps.pool),
      concurrency: deps.config.RUN_CONCURRENCY,
      claim: (free) => runs.claimDue(deps.pool, free, LEASE_MS),
      work: (row) => this.execute(row),
      describe: (row) => ({ runId: row.id }),
      log: deps.log,
    });
  }

  async start(): Promise<void> {
    await this.loop.start();
  }

  /** Let the runs in hand finish their current step and record it; the rest stay in the table. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }

  wake(): void {
    this.loop.wake();
  }

  /** Perform the run's remaining steps in order, recording progress (and the step in its history) after each one. */
  private async execute(row: runs.RunRow): Promise<void> {
    const { pool, log, config } = this.deps;
    const rule = await ruleState(pool, row.org_id, row.rule_id);
    const steps = [...row.steps];
    const last = steps[steps.length - 1];
    // A wait that ended: its step is done now.
    if (last?.status === 'waiting') steps[steps.length - 1] = { ...last, status: 'succeeded', finishedAt: new Date().toISOString() };
    if (!rule || rule.status !== 'active') {
      await runs.finish(pool, row.id, 'cancelled', rule ? `Rule is ${rule.status}` : 'Rule was deleted', false, steps);
      return;
    }
    const program = compile(row.actions);
    const scope = new RunScope(this.deps, row, rule);
    let attempts = row.attempts;
    for (let pc = resolve(program, row.next_action); pc < program.length;) {
      const instruction = program[pc];
      if (instruction.kind !== 'step') throw new Error(`run ${row.id}: instruction ${pc} is not a step`);
      const { action, path } = instruction;
      const startedAt = new Date().toISOString();
      let outcome: { waitUntil?: Date; holds?: boolean };
      try {
        outcome = await scope.perform(pc, action, steps.length);
      } catch (err) {
        const failure: ActionFailure = classify(err, action.type);
        const reason = `${path} ${action.type}: ${failure.message}`;
        const delay = config.RUN_RETRY_SCHEDULE[attempts];
        if (failure.transient && delay !== undefined) {
          log.warn({ runId: row.id, ruleId: row.rule_id, attempt: attempts + 1, retryInMs: delay, reason }, 'automation action failed; will retry');
          await runs.retryLater(pool, row.id, pc, new Date(Date.now() + delay), reason);
        } else {
          log.info({ runId: row.id, ruleId: row.rule_id, reason }, 'automation run failed');
          steps.push({ path, type: action.type, status: 'failed', startedAt, finishedAt: new Date().toISOString(), error: failure.message });
          await runs.finish(pool, row.id, 'failed', reason, true, steps);
        }
        return;
      }
      const next = resolve(program, outcome.holds === false && instruction.elseAt !== undefined ? instruction.elseAt : pc + 1);
      if (outcome.waitUntil) {
        steps.push({ path, type: action.type, status: 'waiting', startedAt, finishedAt: null, error: null });
        await runs.startWait(pool, row.id, pc, next, outcome.waitUntil, steps);
        return;
      }
      const branch = outcome.holds === undefined ? {} : { branch: outcome.holds ? ('then' as const) : ('else' as const) };
      steps.push({ path, type: action.type, status: 'succeeded', startedAt, finishedAt: new Date().toISOString(), error: null, ...branch });
      const kept = await runs.advance(pool, row.id, pc, next, steps, LEASE_MS, scope.contextChanged ? scope.context : undefined);
      scope.contextChanged = false;
      // Another instance took the run over (our lease had run out): it carries on from here.
      if (!kept) return;
      attempts = 0;
      pc = next;
    }
    await runs.finish(pool, row.id, 'completed', '', false, steps);
  }
}
