import { ClaimLoop, type Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import * as feed from '../db/feed.repo';

/**
 * The feed's retention sweep on the timer facility (ARCHITECTURE.md, Timers): each instance sleeps until the oldest
 * row passes EVENT_FEED_RETENTION_DAYS (`nextDueInMs`; an empty feed: one retention from now, as no row written later
 * falls due sooner), then deletes what has passed, a batch per statement, and looks again at once after a full one.
 * Instances sweeping at once only share the work. A NOTIFY on event_feed_sweep makes it look now (after aging rows).
 */
export function feedSweeper(o: { pool: Pool; databaseUrl: string; retentionMs: number; log: Logger }): ClaimLoop<never> {
  return new ClaimLoop<never>({
    name: 'event feed retention',
    databaseUrl: o.databaseUrl,
    channel: feed.FEED_SWEEP_CHANNEL,
    concurrency: 1,
    claim: async () => {
      const deleted = await feed.deleteExpired(o.pool, o.retentionMs);
      if (deleted > 0) o.log.info({ deleted }, 'event feed: deleted events past the retention');
      return { items: [], again: deleted === feed.SWEEP_BATCH, left: false };
    },
    nextDueInMs: () => feed.nextSweepDueInMs(o.pool, o.retentionMs),
    work: async () => undefined,
    log: o.log,
  });
}
