import type { Pool } from '@crm/db';
import type { AppError } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { ConnectorConfig } from '../config';
import { accountRows as repo } from '../account-store';
import { fairShare } from './fair-share';
import type { Leases, LiveInfo } from './leases';
import type { LiveSessions } from './live-sessions';
import type { RestoreFlow } from './restore-flow';

export interface LeaseKeeperOptions {
  config: ConnectorConfig;
  pool: Pool;
  log: Logger;
  leases: Leases;
  live: LiveSessions;
  restorer: Pick<RestoreFlow, 'restore'>;
}

/** How many restores one scan runs at once: takeovers of many accounts should not stampede the network. */
const RESTORE_CONCURRENCY = 8;
/** A held entry younger than this is not reconciled against the database (its row may not be committed yet). */
const RECONCILE_GRACE_MS = 10_000;

/**
 * Keeps this instance's leases: the heartbeat registers the instance and renews the lease (and live info) of every
 * account held here, closing a session whose lease another instance took; the scan lets go of held accounts the
 * database no longer wants live and takes over accounts that should be live but that no instance holds (its fair
 * share of them, and any left free for a whole scan), reconnecting them from their stored session data.
 */
export class LeaseKeeper {
  private heartbeatTimer?: NodeJS.Timeout;
  private scanTimer?: NodeJS.Timeout;
  private scanning?: Promise<void>;
  private heartbeating?: Promise<void>;
  /** Accounts seen free in the previous scan: taken over regardless of this instance's fair share. */
  private seenFree = new Set<string>();
  private address = '';

  constructor(private readonly o: LeaseKeeperOptions) {}

  get instanceId(): string {
    return this.o.leases.instanceId;
  }

  /** Registers the instance at `address` (where peers forward calls), starts the heartbeat and scans at once. */
  async start(address: string): Promise<void> {
    this.address = address;
    await this.o.leases.register(address);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.o.config.HEARTBEAT_MS);
    this.scanTimer = setInterval(() => this.scanSoon(), this.o.config.SCAN_INTERVAL_MS);
    this.scanSoon();
  }

  /** No more beats or scans are started (the live sessions are stopping). */
  halt(): void {
    clearInterval(this.heartbeatTimer);
    clearInterval(this.scanTimer);
  }

  /** Waits for a beat or scan in progress. */
  async idle(): Promise<void> {
    await Promise.allSettled([this.scanning, this.heartbeating]);
  }

  /** The instance is gone: peers no longer forward to it. */
  async unregister(): Promise<void> {
    await this.o.leases.unregister().catch(() => undefined);
  }

  private heartbeat(): Promise<void> {
    this.heartbeating ??= this.beat()
      .catch((err) => this.o.log.warn({ err }, 'heartbeat failed'))
      .finally(() => (this.heartbeating = undefined));
    return this.heartbeating;
  }

  private async beat(): Promise<void> {
    await this.o.leases.register(this.address);
    // The states are read after that round trip, right before the renew is written: a snapshot taken before
    // it could be older than a renew that establish() wrote meanwhile, and would set a connected account's
    // live info back to `connecting` until the next beat (commands on the one connection keep their order).
    const list: Array<{ accountId: string; state: LiveInfo['state']; connectedAt?: Date }> = [];
    for (const e of this.o.live.all()) {
      if (e.state === 'connected' && !e.session?.isAlive()) {
        // A driver that lost its connection without telling us: treat it as a drop.
        this.o.live.onDisconnect(e, { reason: 'connection_lost', sessionExpired: false });
        continue;
      }
      list.push({ accountId: e.accountId, state: e.state, connectedAt: e.connectedAt });
    }
    const lost = await this.o.leases.renew(list);
    for (const accountId of lost) await this.o.live.leaseLost(accountId);
  }

  /** Scan now unless a scan is running (or the instance stops). */
  scanSoon(): void {
    if (this.o.live.stopped || this.scanning) return;
    this.scanning = this.scan()
      .catch((err) => this.o.log.warn({ err }, 'session pool scan failed'))
      .finally(() => (this.scanning = undefined));
  }

  private async scan(): Promise<void> {
    await this.reconcile();
    const wanted = await repo.accountsToKeepAlive(this.o.pool);
    const candidates = wanted.filter((r) => !this.o.live.holds(r.id));
    if (candidates.length === 0) {
      this.seenFree.clear();
      return;
    }
    const ids = candidates.map((r) => r.id);
    const [holders, backoffs, handoffs, instances] = await Promise.all([
      this.o.leases.holders(ids),
      this.o.leases.backoffs(ids),
      this.o.leases.handoffs(ids),
      this.o.leases.liveInstances(),
    ]);
    const free = candidates.filter((_, i) => !holders[i] && !backoffs[i]);
    const handedBy = new Map(ids.map((id, i) => [id, handoffs[i]]));
    // Fair share, so that instances started together spread the accounts and the sessions handed over by
    // rebalancing go to the instances under their share (one that just joined). An account left free by
    // the others for a whole scan is taken anyway (they may be full or dying), except one being handed
    // over: that waits for an instance with room until its hand-over mark lapses, and never goes back to
    // the instance handing it over meanwhile.
    const share = fairShare(wanted.length, instances, this.instanceId);
    let room = Math.max(0, share - this.o.live.load());
    const pick: typeof free = [];
    for (const r of shuffle(free)) {
      const handing = handedBy.get(r.id);
      if (handing === this.instanceId) continue;
      if (this.seenFree.has(r.id) && !handing) pick.push(r);
      else if (room > 0) {
        pick.push(r);
        room--;
      }
    }
    this.seenFree = new Set(free.filter((r) => !pick.includes(r)).map((r) => r.id));
    await mapLimit(pick, RESTORE_CONCURRENCY, async (r) => {
      if (this.o.live.stopped || !(await this.o.leases.acquire(r.id, 'connecting'))) return;
      try {
        // A takeover by the scan (a timer): a trace of its own.
        await this.o.restorer.restore(r.id, r.org_id, undefined);
        this.o.log.info({ accountId: r.id }, 'account taken over and reconnected from its session data');
      } catch (err) {
        this.o.log.info({ accountId: r.id, code: (err as AppError).code }, 'reconnecting an account failed');
      }
    });
  }

  /** Let go of held accounts the database no longer wants live (deleted, logged out elsewhere). */
  private async reconcile(): Promise<void> {
    const old = [...this.o.live.all()].filter((e) => Date.now() - e.since > RECONCILE_GRACE_MS).map((e) => e.accountId);
    if (old.length === 0) return;
    const keep = await repo.stillWanted(this.o.pool, old);
    for (const id of old) if (!keep.has(id)) await this.o.live.release(id, false);
  }
}

function shuffle<T>(items: T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
