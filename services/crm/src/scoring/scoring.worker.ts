import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import { recomputeOrg, sweepOrg } from './engine';
import * as repo from './scoring.repo';

export interface ScoringWorkerOptions {
  /** How often to look for orgs to recompute or sweep (changes made through another replica, due sweeps). */
  tickMs: number;
  /** How often each decaying org's scores are brought up to date. */
  sweepMs: number;
  /** Contacts per transaction. */
  batchSize: number;
  /** A recompute claim lapses after this long without progress (the replica died), and another takes over. */
  leaseMs?: number;
}

class Stopping extends Error {}

/**
 * Background scoring work, safe with several replicas: orgs are claimed one at a time in the database
 * (a lease for recomputes, next_sweep_at for sweeps, both with SKIP LOCKED). kick() runs a pass at once,
 * e.g. right after a rule changed here.
 */
export class ScoringWorker {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = true;
  private readonly leaseMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
    private readonly opts: ScoringWorkerOptions,
  ) {
    this.leaseMs = opts.leaseMs ?? 60_000;
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.opts.tickMs);
    this.timer.unref();
    this.kick();
  }

  /**
   * A pass now. Its work is no call's: a pass claims whichever org waits (maybe not the one whose rules changed, maybe
   * on another replica) and sweeps due orgs too, so what it announces starts a trace of its own (engine.ts, ownTrace),
   * even when a rule or config change kicked it.
   */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async pass(): Promise<void> {
    try {
      while (!this.stopped && (await this.recomputeOne()));
      while (!this.stopped && (await this.sweepOne()));
    } catch (err) {
      this.log.warn({ err }, 'lead scoring: background pass failed; retried on the next tick');
    }
  }

  /** Recompute one claimed org; false when none is waiting. */
  private async recomputeOne(): Promise<boolean> {
    const row = await repo.claimRecompute(this.pool, this.leaseMs);
    if (!row) return false;
    const started = Date.now();
    try {
      const n = await recomputeOrg(this.pool, row.org_id, repo.configOf(row), {
        batchSize: this.opts.batchSize,
        onBatch: async () => {
          if (this.stopped) throw new Stopping();
          await repo.renewRecompute(this.pool, row.org_id, this.leaseMs);
        },
      });
      await repo.finishRecompute(this.pool, row.org_id, row.version);
      this.log.info({ orgId: row.org_id, contacts: n, ms: Date.now() - started }, 'lead scores recomputed');
    } catch (err) {
      // Hand the org back at once (not after the lease) so another replica, or the next start, continues.
      await repo.renewRecompute(this.pool, row.org_id, 0).catch(() => undefined);
      if (!(err instanceof Stopping)) this.log.warn({ err, orgId: row.org_id }, 'lead scoring: recompute failed; retried on the next tick');
      return false;
    }
    return true;
  }

  private async sweepOne(): Promise<boolean> {
    const row = await repo.claimSweep(this.pool, this.opts.sweepMs);
    if (!row) return false;
    try {
      const r = await sweepOrg(this.pool, row.org_id, repo.configOf(row), {
        batchSize: this.opts.batchSize,
        onBatch: async () => {
          if (this.stopped) throw new Stopping();
        },
      });
      if (r.changed || r.pruned) this.log.info({ orgId: row.org_id, ...r }, 'lead scores decayed');
    } catch (err) {
      if (!(err instanceof Stopping)) this.log.warn({ err, orgId: row.org_id }, 'lead scoring: decay sweep failed; retried when next due');
    }
    return true;
  }
}
