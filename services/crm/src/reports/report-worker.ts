import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop } from '@crm/db';
import type { Deps } from '../deps';
import { generateCsv, ReportFailure } from './report-generator';
import * as repo from './reports.repo';
import type { UserNames } from './user-names';

/** A report whose generation was cut off this many times (crashes, lost database) ends failed, not in a loop. */
const MAX_ATTEMPTS = 3;
/** Asking identity for user names: tries, and the pause before each retry. */
const NAME_TRIES = 3;
const NAME_RETRY_MS = 500;

export interface ReportWorkerSettings {
  pollMs: number;
  concurrency: number;
  leaseMs: number;
  maxRows: number;
}

/**
 * Generates `generating` reports in the background (ClaimLoop: NOTIFY wake-up, a poll, leases). Any
 * instance can take any report; a report held by an instance that died is taken up again when its lease
 * ends, one left by a clean stop at once. The query's timeout is half the lease, so a live worker always
 * finishes (or fails the report) before its lease could be taken over.
 */
export class ReportWorker {
  private readonly loop: ClaimLoop<repo.ClaimedReport>;

  constructor(
    private readonly deps: Deps,
    private readonly users: UserNames,
    private readonly settings: ReportWorkerSettings,
  ) {
    this.loop = new ClaimLoop({
      name: 'report worker',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.REPORTS_CHANNEL,
      pollMs: settings.pollMs,
      concurrency: settings.concurrency,
      claim: (free) => repo.claimReports(deps.pool, free, settings.leaseMs),
      work: (report) => this.generate(report),
      describe: (report) => ({ reportId: report.id, orgId: report.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async generate(report: repo.ClaimedReport): Promise<void> {
    const { pool, log } = this.deps;
    if (report.attempts > MAX_ATTEMPTS) {
      await repo.failReport(pool, report, `Generation did not complete after ${MAX_ATTEMPTS} attempts; create the report again`);
      return;
    }
    try {
      const { csv, rowCount } = await generateCsv(pool, report.org_id, report.request, {
        maxRows: this.settings.maxRows,
        timeoutMs: this.settings.leaseMs / 2,
        userNames: (ids) => this.userNames(report.org_id, ids),
      });
      if (await repo.completeReport(pool, report, csv, rowCount)) log.info({ reportId: report.id, orgId: report.org_id, rowCount }, 'report ready');
    } catch (err) {
      if (err instanceof ReportFailure) {
        if (await repo.failReport(pool, report, err.message))
          log.info({ reportId: report.id, orgId: report.org_id, reason: err.message }, 'report failed');
        return;
      }
      // Unexpected (database trouble...): try again a little later, or at once elsewhere when shutting down.
      log.warn({ err, reportId: report.id, attempt: report.attempts }, 'report generation interrupted; it will be retried');
      if (this.loop.isStopping) await repo.releaseReport(pool, report, 0, true).catch(() => undefined);
      else await repo.releaseReport(pool, report, 5_000 * report.attempts).catch(() => undefined);
    }
  }

  /** Names for the assignedUser column; a report that cannot name its users fails rather than guess. */
  private async userNames(orgId: string, ids: string[]): Promise<Map<string, string>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.users.namesOf(orgId, ids);
      } catch (err) {
        // Shutting down: hand the report back (unexpected error path) instead of failing it.
        if (this.loop.isStopping) throw err;
        if (attempt >= NAME_TRIES) {
          this.deps.log.warn({ err, orgId }, 'report: user names unavailable');
          throw new ReportFailure('User names could not be read (the identity service did not answer); create the report again later');
        }
        await this.loop.sleep(NAME_RETRY_MS * attempt);
      }
    }
  }
}
