import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop } from '@crm/db';
import type { Deps } from '../deps';
import * as runs from './runs.repo';

/** Nobody needs to announce anything here: a run that finishes now falls out of the log later than any already waiting. */
const CHANNEL = 'automation_run_log';

/**
 * Finished runs leave the run history RUN_LOG_RETENTION_DAYS after they finished, through the timer facility: the
 * loop sleeps until the oldest finished run passes the retention, deletes what is past it (a batch at a time, SKIP
 * LOCKED so instances share the work) and sleeps again. No interval decides when.
 */
export class RunLogSweeper {
  private readonly loop: ClaimLoop<number>;

  constructor(deps: Deps) {
    const days = deps.config.RUN_LOG_RETENTION_DAYS;
    this.loop = new ClaimLoop({
      name: 'automation run-log sweeper',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: CHANNEL,
      nextDueInMs: () => runs.nextSweepInMs(deps.pool, days),
      concurrency: 1,
      claim: async () => {
        const removed = await runs.sweepFinished(deps.pool, days);
        if (removed) deps.log.info({ removed }, 'automation run history: runs past the retention removed');
        // A full batch: there may be more past the retention; look again at once.
        return { items: [], again: removed >= 5000, left: false };
      },
      work: async () => undefined,
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
