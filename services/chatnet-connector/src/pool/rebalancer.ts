import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import { countToKeepAlive } from '../account-store';
import { fairShare } from './fair-share';
import type { Leases } from './leases';

/** What the rebalancer needs of the session pool. */
export interface BalancedSessions {
  /** Sessions held here that count towards the share. */
  load(): number;
  /** The live session to move first, if any. */
  newestLive(): string | undefined;
  /** Close a live session and release its lease so another instance takes it; false when it could not be. */
  handOff(accountId: string, markMs: number): Promise<boolean>;
}

export interface RebalancerOptions {
  sessions: BalancedSessions;
  leases: Leases;
  pool: Pool;
  log: Logger;
  /** 0: off. */
  intervalMs: number;
  /** How long a handed-over account is reserved for the instances under their share. */
  handoffMarkMs: number;
}

/**
 * Spreads the live sessions evenly when instances join or leave. Without it a new instance would take
 * sessions only when others restart. Every `intervalMs` an instance holding more than its fair share
 * hands ONE session over (close, flush, release the lease); an instance under its share takes it at its
 * next scan and reconnects it from the stored session data. The next one goes only once the previous one
 * was taken (or its hand-over mark lapsed), so a move never leaves several accounts offline at once, and
 * N surplus sessions move in about N × intervalMs (instances over their share move theirs in parallel).
 */
export class Rebalancer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** The account handed over last, until another instance holds it. */
  private inFlight?: string;

  constructor(private readonly o: RebalancerOptions) {}

  start(): void {
    if (this.o.intervalMs <= 0) return;
    this.timer = setInterval(() => this.tick(), this.o.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private tick(): void {
    this.running ??= this.step()
      .then(() => undefined)
      .catch((err) => this.o.log.warn({ err }, 'rebalancing step failed'))
      .finally(() => (this.running = undefined));
  }

  /** One rebalancing step; returns the account handed over, if any. */
  async step(): Promise<string | undefined> {
    if (this.inFlight) {
      const [[holder], [mark]] = await Promise.all([this.o.leases.holders([this.inFlight]), this.o.leases.handoffs([this.inFlight])]);
      if (!holder && mark) return undefined;
      this.inFlight = undefined;
    }
    const [total, instances] = await Promise.all([countToKeepAlive(this.o.pool), this.o.leases.liveInstances()]);
    if (instances.length < 2) return undefined;
    const share = fairShare(total, instances, this.o.leases.instanceId);
    const load = this.o.sessions.load();
    if (load <= share) return undefined;
    const accountId = this.o.sessions.newestLive();
    if (!accountId || !(await this.o.sessions.handOff(accountId, this.o.handoffMarkMs))) return undefined;
    this.inFlight = accountId;
    this.o.log.info({ accountId, load, share, instances: instances.length }, 'session handed over to rebalance the pool');
    return accountId;
  }
}
