import { ClaimLoop, withTransaction, type Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import * as deliveries from '../db/deliveries.repo';
import * as replays from '../db/replays.repo';

export interface ReplayPumpOptions {
  pool: Pool;
  databaseUrl: string;
  log: Logger;
  /** Replayed deliveries made due per second per replay, at most. */
  perSecond: number;
  /** Replayed deliveries of one endpoint pending and due (or in flight) at once, at most. */
  inFlight: number;
}

/**
 * Sends replays at a bounded rate, on the timer facility (ARCHITECTURE.md, Timers). A replay's deliveries are written
 * pending without a due time; every tick (inFlight / perSecond seconds) the pump makes the next few due, oldest event
 * first, so that the endpoint never has more than `inFlight` replayed deliveries due or in flight, and announces them
 * as a redelivery is announced: the delivery worker of any instance sends them like any other delivery. A replay thus
 * holds at most `inFlight` of the endpoint's slots and live deliveries keep the rest; it goes at most `perSecond`.
 * Each instance sleeps until the nearest replay's next tick (`nextDueInMs`), woken by the NOTIFY of a new replay; a
 * claim moves a replay's tick ahead (SKIP LOCKED: one instance per tick).
 */
export function replayPump(o: ReplayPumpOptions): ClaimLoop<Awaited<ReturnType<typeof replays.claimDue>>[number]> {
  const tickMs = Math.max(10, Math.round((1000 * o.inFlight) / o.perSecond));
  return new ClaimLoop({
    name: 'webhook replay pump',
    databaseUrl: o.databaseUrl,
    channel: replays.REPLAYS_DUE_CHANNEL,
    concurrency: 4,
    claim: (free) => replays.claimDue(o.pool, free, tickMs),
    work: async (replay) => {
      const { ids } = await withTransaction(o.pool, (db) => replays.release(db, replay, o.inFlight));
      // After the commit, so the worker that hears it can claim them; a lost notification is found by the worker's poll.
      if (ids.length > 0) await deliveries.announceDue(o.pool, replay.webhook_id, ids);
    },
    nextDueInMs: () => replays.nextDueInMs(o.pool),
    describe: (replay) => ({ replayId: replay.id, webhookId: replay.webhook_id }),
    log: o.log,
  });
}
