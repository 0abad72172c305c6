import { NotifyListener } from '@crm/db';
import type { Logger } from '@crm/logger';
import { FEED_CHANNEL } from '../db/feed.repo';

/**
 * Long-polling readers of the feed, woken when their organization's feed grows. Every append notifies FEED_CHANNEL
 * with the org id when it commits, whichever instance consumed the event, and every instance LISTENs (on the
 * process's shared LISTEN connection), so a reader held by any instance behind any gateway wakes at once; nothing
 * polls. While the connection is down notifications are lost: a reader then waits out its time (an empty page the
 * client asks again), and when the connection is back every reader looks once.
 */
export class FeedWaiters {
  private readonly listener: NotifyListener;
  private readonly byOrg = new Map<string, Set<() => void>>();
  private stopping = false;

  constructor(databaseUrl: string, log: Logger) {
    this.listener = new NotifyListener({
      name: 'event feed waiters',
      databaseUrl,
      channel: FEED_CHANNEL,
      log,
      onNotification: (orgId) => this.wakeOrg(orgId),
      onConnected: () => this.wakeAll(),
    });
  }

  start(): Promise<void> {
    this.stopping = false;
    return this.listener.start();
  }

  /** Held readers answer at once (an empty page), so a stopping server does not wait for them. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeAll();
    await this.listener.stop();
  }

  /**
   * A promise settled at the next append for `orgId` (or at `ms`, or at stop). Registered before the reader looks at
   * the table, so an append committed between its look and its wait is not missed. `cancel` forgets it. Undefined
   * when there is no time left to wait, or the instance is stopping.
   */
  next(orgId: string, ms: number): { woken: Promise<void>; cancel(): void } | undefined {
    if (this.stopping || ms <= 0) return undefined;
    let set = this.byOrg.get(orgId);
    if (!set) this.byOrg.set(orgId, (set = new Set()));
    let timer: NodeJS.Timeout | undefined;
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const done = () => {
      clearTimeout(timer);
      set.delete(done);
      if (set.size === 0 && this.byOrg.get(orgId) === set) this.byOrg.delete(orgId);
      wake();
    };
    set.add(done);
    timer = setTimeout(done, ms);
    return { woken, cancel: done };
  }

  /** Readers held now (tests, metrics). */
  get held(): number {
    let n = 0;
    for (const s of this.byOrg.values()) n += s.size;
    return n;
  }

  private wakeOrg(orgId: string): void {
    for (const done of [...(this.byOrg.get(orgId) ?? [])]) done();
  }

  private wakeAll(): void {
    for (const set of [...this.byOrg.values()]) for (const done of [...set]) done();
  }
}
