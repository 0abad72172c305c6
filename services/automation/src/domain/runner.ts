import { Client } from 'pg';
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
  private readonly active = new Set<Promise<void>>();
  private listener?: Client;
  private pollTimer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private listenRetry?: NodeJS.Timeout;
  private wanted = false;
  private filling = false;
  private stopping = false;

  constructor(private readonly deps: Deps) {}

  async start(): Promise<void> {
    this.stopping = false;
    await this.listen();
    this.pollTimer = setInterval(() => this.wake(), this.deps.config.RUN_POLL_MS);
    this.pruneTimer = setInterval(() => void this.prune(), 3_600_000);
    // Runs that fell due while no instance was running.
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.pollTimer);
    clearInterval(this.pruneTimer);
    clearTimeout(this.listenRetry);
    // Let the runs in hand finish their current action and record it; the rest stay in the table.
    await Promise.allSettled([...this.active]);
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
  }

  private async prune(): Promise<void> {
    try {
      const removed = await runs.pruneFinished(this.deps.pool, this.deps.config.RUN_LOG_RETENTION_DAYS);
      if (removed) this.deps.log.info({ removed }, 'automation runner: old run log entries removed');
    } catch (err) {
      this.deps.log.warn({ err }, 'automation runner: pruning the run log failed');
    }
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.deps.config.DATABASE_URL });
    client.on('notification', () => this.wake());
    const lost = (err?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.stopping) return;
      this.deps.log.warn({ err }, 'automation runner: LISTEN connection lost; polling until it is back');
      this.relisten();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    await client.connect();
    await client.query(`LISTEN ${RUNS_CHANNEL}`);
    this.listener = client;
  }

  private relisten(): void {
    if (this.stopping) return;
    this.listenRetry = setTimeout(() => {
      this.listen().catch(() => this.relisten());
    }, 1000);
  }

  wake(): void {
    this.wanted = true;
    if (!this.filling && !this.stopping) void this.fill();
  }

  /** Claim as many due runs as there are free slots and start them; a finishing run calls wake() again. */
  private async fill(): Promise<void> {
    this.filling = true;
    try {
      while (this.wanted && !this.stopping) {
        this.wanted = false;
        const free = this.deps.config.RUN_CONCURRENCY - this.active.size;
        if (free <= 0) break;
        const claimed = await runs.claimDue(this.deps.pool, free, LEASE_MS);
        for (const row of claimed) {
          const p: Promise<void> = this.execute(row)
            .catch((err) => this.deps.log.error({ err, runId: row.id }, 'automation runner: run crashed; it resumes when its lease ends'))
            .finally(() => {
              this.active.delete(p);
              this.wake();
            });
          this.active.add(p);
        }
        // A full batch: there may be more due than slots; look again once the loop comes round.
        if (claimed.length === free) this.wanted = true;
      }
    } catch (err) {
      this.deps.log.warn({ err }, 'automation runner: could not claim runs; retrying at the next poll');
    } finally {
      this.filling = false;
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
