import { NotifyListener, type Queryable } from '@crm/db';
import type { Logger } from '@crm/logger';
import { activeRulesOfOrg, type RuleRow } from './rules.repo';

/** Channel of migration 010's trigger: every write to `rules` names its org here, at commit. */
export const RULES_CHANGED_CHANNEL = 'automation_rules_changed';

export interface RuleCacheOptions {
  pool: Queryable;
  /** For the cache's LISTEN connection: the direct URL (DATABASE_DIRECT_URL), not a pooler's. */
  databaseUrl: string;
  log: Logger;
  /**
   * How long an org's rules are trusted without a word from the database: the bound on staleness should a change
   * notification be lost (the LISTEN connection was down is caught by onConnected; this covers the rest).
   */
  maxAgeMs: number;
  /** Orgs held at most; the least recently used go first. */
  maxOrgs?: number;
}

interface Entry {
  byTrigger: Map<string, RuleRow[]>;
  /** Each rule's place in the database's order (created_at, id): a JS Date keeps milliseconds, created_at microseconds. */
  rank: Map<RuleRow, number>;
  loadedAt: number;
}

/**
 * The active rules of each org, per trigger, in memory (issue #28 item 3): the trigger consumer sees every
 * `message.received`, `contact.*`, `conversation.*` of every org, and most orgs have no rule for most of them, so
 * asking PostgreSQL each time cost a query per event for nothing. An org's rules are loaded once (one query for all
 * its triggers) and dropped when they change: at once in this process (the rules API calls `changed` after its
 * write commits, so a rule saved is applied to the very next event), and through NOTIFY in every replica. Entries
 * older than `maxAgeMs` are reloaded whatever happened, so a lost notification is forgotten within that time.
 */
export class RuleCache {
  private readonly entries = new Map<string, Entry>();
  /** Loads in flight, so a burst of one org's events makes one query. */
  private readonly loading = new Map<string, Promise<Entry>>();
  /** Bumped by every change: a load that started before the change is not kept. */
  private readonly generation = new Map<string, number>();
  private epoch = 0;
  private readonly listener: NotifyListener;
  private readonly maxOrgs: number;

  constructor(private readonly o: RuleCacheOptions) {
    this.maxOrgs = o.maxOrgs ?? 10_000;
    this.listener = new NotifyListener({
      name: 'rule cache',
      databaseUrl: o.databaseUrl,
      channel: RULES_CHANGED_CHANNEL,
      log: o.log,
      onNotification: (orgId) => this.changed(orgId),
      // Changes made while the connection was down were not announced: forget everything.
      onConnected: () => this.clear(),
    });
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  stop(): Promise<void> {
    return this.listener.stop();
  }

  /** The org's active rules listening to any of `triggers`, oldest first. */
  async rulesFor(orgId: string, triggers: readonly string[]): Promise<RuleRow[]> {
    const entry = await this.entryOf(orgId);
    if (triggers.length === 1) return entry.byTrigger.get(triggers[0]) ?? [];
    const out: RuleRow[] = [];
    for (const t of triggers) out.push(...(entry.byTrigger.get(t) ?? []));
    // Several triggers (rare): back to the database's order.
    return out.sort((a, b) => entry.rank.get(a)! - entry.rank.get(b)!);
  }

  /** The org's rules changed (this process wrote them, or a notification said so). */
  changed(orgId: string): void {
    this.generation.set(orgId, (this.generation.get(orgId) ?? 0) + 1);
    this.entries.delete(orgId);
  }

  private clear(): void {
    this.epoch++;
    this.entries.clear();
  }

  private async entryOf(orgId: string): Promise<Entry> {
    const cached = this.entries.get(orgId);
    if (cached && Date.now() - cached.loadedAt <= this.o.maxAgeMs) {
      // Most recently used last: Map keeps insertion order, so eviction takes the first.
      this.entries.delete(orgId);
      this.entries.set(orgId, cached);
      return cached;
    }
    let pending = this.loading.get(orgId);
    if (!pending) {
      pending = this.load(orgId).finally(() => this.loading.delete(orgId));
      this.loading.set(orgId, pending);
    }
    return pending;
  }

  private async load(orgId: string): Promise<Entry> {
    const generation = this.generation.get(orgId) ?? 0;
    const epoch = this.epoch;
    const loadedAt = Date.now();
    const rows = await activeRulesOfOrg(this.o.pool, orgId);
    const byTrigger = new Map<string, RuleRow[]>();
    for (const r of rows) byTrigger.set(r.trigger_type, [...(byTrigger.get(r.trigger_type) ?? []), r]);
    const entry = { byTrigger, rank: new Map(rows.map((r, i) => [r, i])), loadedAt };
    // A change announced while this query ran may not be in its answer: use it for this event, keep it not.
    if ((this.generation.get(orgId) ?? 0) === generation && this.epoch === epoch) {
      this.entries.set(orgId, entry);
      while (this.entries.size > this.maxOrgs) this.entries.delete(this.entries.keys().next().value!);
    }
    return entry;
  }
}
