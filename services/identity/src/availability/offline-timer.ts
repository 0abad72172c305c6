import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop, withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import { publishChange } from './availability';
import * as repo from './availability.repo';

/**
 * The offline timer (ARCHITECTURE.md, Timers): a user whose last socket went AVAILABILITY_OFFLINE_AFTER_MS ago, none
 * back since, becomes offline. Each instance sleeps until the nearest due row (`nextDueInMs`), woken early by a NOTIFY
 * when a disconnect writes one; the claim changes the rows and enqueues their events in one transaction (FOR UPDATE
 * SKIP LOCKED: once across instances), so there is no work left after it and no lease to run out.
 */
export class OfflineTimer {
  private readonly loop: ClaimLoop<repo.Changed>;

  constructor(deps: Deps) {
    this.loop = new ClaimLoop({
      name: 'availability offline timer',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.OFFLINE_DUE_CHANNEL,
      concurrency: 50,
      claim: (free) =>
        withTransaction(deps.pool, async (db) => {
          const expired = await repo.expireDue(db, free);
          for (const c of expired) await publishChange(db, c);
          return expired;
        }),
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      work: async (c) => {
        if (c.previous !== c.row.availability) deps.log.debug({ userId: c.row.id, orgId: c.row.org_id }, 'availability: offline after no socket');
      },
      describe: (c) => ({ userId: c.row.id, orgId: c.row.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
