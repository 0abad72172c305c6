import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop } from '@crm/db';
import type { Deps } from '../deps';
import { ruleState } from '../db/rules.repo';
import * as runs from '../db/runs.repo';
import { ActionFailure, classify, RunScope } from './actions';

/** NOTIFY channel: a committed new run wakes every runner at once instead of at the next poll. */
export const RUNS_CHANNEL = 'automation_runs';
/** A claimed run is this instance's for this long, renewed after every action; a dead instance's runs come back after it. */
const LEASE_MS = 60_000;

/**
 * Executes rule runs from the rule_runs table, which is the durable queue: new runs (pending), ended
 * waits and due retries. Several instances share it through FOR UPDATE SKIP LOCKED and leases, so a wait
 * survives any restart: whichever instance is up when it falls due resumes it.
 */
export class Runner {
  private readonly loop: ClaimLoop<runs.RunRow>;
  private pruneTimer?: NodeJS.Timeout;

  constructor(private readonly deps: Deps) {
    this.loop = new ClaimLoop({
      name: 'automation runner',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: RUNS_CHANNEL,
      pollMs: deps.config.RUN_POLL_MS,
      concurrency: deps.config.RUN_CONCURRENCY,
      claim: (free) => runs.claimDue(deps.pool, free, LEASE_MS),
      work: (row) => this.execute(row),
      describe: (row) => ({ runId: row.id }),
      log: deps.log,
    });
  }

  async start(): Promise<void> {
    await this.loop.start();
    this.pruneTimer = setInterval(() => void this.prune(), 3_600_000);
  }

  /** Let the runs in hand finish their current action and record it; the rest stay in the table. */
  async stop(): Promise<void> {
    clearInterval(this.pruneTimer);
    await this.loop.stop();
  }

  wake(): void {
    this.loop.wake();
  }

  private async prune(): Promise<void> {
    try {
      const removed = await runs.pruneFinished(this.deps.pool, this.deps.config.RUN_LOG_RETENTION_DAYS);
      if (removed) this.deps.log.info({ removed }, 'automation runner: old run log entries removed');
    } catch (err) {
      this.deps.log.warn({ err }, 'automation runner: pruning the run log failed');
    }
  }

  /** Perform the run's remaining actions in order, recording progress after each one. */
  private async execute(row: runs.RunRow): Promise<void> {
    const { pool, log, config } = this.deps;
    const rule = await ruleState(pool, row.org_id, row.rule_id);
    if (!rule || rule.status !== 'active') {
      await runs.finish(pool, row.id, 'cancelled', rule ? `Rule is ${rule.status}` : 'Rule was deleted');
      return;
    }
    const scope = new RunScope(this.deps, row, rule.name);
    let attempts = row.attempts;
    for (let i = row.next_action; i < row.actions.length; i++) {
      const action = row.actions[i];
      let outcome: { waitUntil?: Date };
      try {
        outcome = await scope.perform(i, action);
      } catch (err) {
        const failure: ActionFailure = classify(err, action.type);
        const reason = `actions[${i}] ${action.type}: ${failure.message}`;
        const delay = config.RUN_RETRY_SCHEDULE[attempts];
        if (failure.transient && delay !== undefined) {
          log.warn({ runId: row.id, ruleId: row.rule_id, attempt: attempts + 1, retryInMs: delay, reason }, 'automation action failed; will retry');
          await runs.retryLater(pool, row.id, i, new Date(Date.now() + delay), reason);
        } else {
          log.info({ runId: row.id, ruleId: row.rule_id, reason }, 'automation run failed');
          await runs.finish(pool, row.id, 'failed', reason, true);
        }
        return;
      }
      if (outcome.waitUntil) {
        await runs.startWait(pool, row.id, i, outcome.waitUntil);
        return;
      }
      const kept = await runs.advance(pool, row.id, i, LEASE_MS, scope.contextChanged ? scope.context : undefined);
      scope.contextChanged = false;
      // Another instance took the run over (our lease had run out): it carries on from here.
      if (!kept) return;
      attempts = 0;
    }
    await runs.finish(pool, row.id, 'completed');
  }
}
