import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { ClaimLoop, withTransaction, type Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { ContactWriter } from '../../contacts';
import { findIntegration, markAuthExpired, recordSync } from '../integrations.repo';
import { PageAccess, SocialnetDriver, SocialnetError, SocialnetForm } from './driver';
import { importLeads, isPhoneConflict } from './lead-import';
import { pageAccessOf, TokenBox } from './page-access';
import * as syncs from './syncs.repo';

export interface SyncWorkerOptions {
  pool: Pool;
  /** For the worker's own LISTEN connection: the direct URL (DATABASE_DIRECT_URL), not a pooler's. */
  databaseUrl: string;
  log: Logger;
  driver: SocialnetDriver;
  box: TokenBox;
  phoneCountry: string;
  /** Writes the contacts leads become (with their activity, event and scoring facts). */
  contacts: ContactWriter;
  /** Leads asked of the network per page (and imported per transaction). */
  pageSize: number;
  /** Syncs this instance works on at once. */
  concurrency: number;
  /** Fallback poll for retries that came due and leases that lapsed; NOTIFY is the fast path for new syncs. */
  pollMs: number;
  /** How long a claim holds without a committed page; another instance takes over a sync after that. */
  leaseMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Consecutive failed attempts after which a sync fails for good. */
  maxAttempts: number;
}

/** Skipped rows kept with their reasons on a sync (the count goes on past it). */
const SKIPPED_KEPT = 100;
const TIMER_LIMIT_MS = 60_000;

/** Thrown inside a page transaction when the sync is no longer ours: failed meanwhile (page disconnected) or taken over after our lease lapsed. */
class LostClaim extends Error {}

/**
 * Works lead syncs stored in socialnet_syncs through the shared ClaimLoop: a requested sync wakes it at once
 * (LISTEN/NOTIFY); it claims due syncs with SKIP LOCKED and a lease, then pages through the form's leads. Each page is imported in one
 * transaction that also saves the cursor and the counts, so a restart or a crash loses nothing and repeats
 * nothing: the next claim resumes after the last committed page. Retryable network errors release the sync
 * with a backoff; the others (token expired, form gone) fail it.
 */
export class SocialnetSyncWorker {
  private readonly o: SyncWorkerOptions;
  private readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly loop: ClaimLoop<syncs.SyncRow>;
  private readonly retryTimers = new Set<NodeJS.Timeout>();

  constructor(opts: SyncWorkerOptions) {
    this.o = opts;
    this.loop = new ClaimLoop({
      name: 'socialnet sync',
      databaseUrl: opts.databaseUrl,
      channel: syncs.SYNC_CHANNEL,
      pollMs: opts.pollMs,
      concurrency: opts.concurrency,
      claim: (free) => syncs.claimDue(opts.pool, this.workerId, free, opts.leaseMs),
      work: (sync) => this.run(sync),
      describe: (sync) => ({ syncId: sync.id }),
      log: opts.log,
    });
  }

  private get stopping(): boolean {
    return this.loop.isStopping;
  }

  async start(): Promise<void> {
    await this.loop.start();
  }

  /** Stop claiming, let each running sync finish its current page, then hand back what this instance held. */
  async stop(): Promise<void> {
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    await this.loop.stop();
    await syncs.releaseAll(this.o.pool, this.workerId).catch((err) => this.o.log.warn({ err }, 'socialnet sync: releasing claims failed'));
  }

  wake(): void {
    this.loop.wake();
  }

  private async run(sync: syncs.SyncRow): Promise<void> {
    const log = this.o.log.child({ syncId: sync.id, orgId: sync.org_id });
    // Consecutive failures: every committed page starts the count again.
    let attempts = sync.attempts;
    try {
      const integration = await findIntegration(this.o.pool, sync.org_id, sync.integration_id);
      if (integration?.status === 'auth_expired') {
        await syncs.markFailed(this.o.pool, sync.id, this.workerId, 'auth_expired', "The page's access has expired; connect it again");
        return;
      }
      if (!integration || integration.status !== 'connected' || !integration.access_token_enc) {
        await syncs.markFailed(this.o.pool, sync.id, this.workerId, 'page_not_connected', 'The page was disconnected before the sync finished');
        return;
      }
      const access = pageAccessOf(this.o.box, integration);
      const forms = await this.o.driver.listForms(access);
      const form = forms.find((f) => f.id === sync.form_id);
      if (!form) {
        await syncs.markFailed(this.o.pool, sync.id, this.workerId, 'form_not_found', 'The lead form no longer exists on the page');
        return;
      }
      let cursor = sync.cursor;
      while (!this.stopping) {
        const page = await this.o.driver.fetchLeads(access, form.id, cursor, this.o.pageSize);
        // A network that hands back the same cursor with nothing in it has nothing more to give.
        const done = page.next === null || (page.leads.length === 0 && page.next === cursor);
        await this.commitPage(sync, access, form, forms.length, page.leads, done ? cursor : page.next, done);
        attempts = 0;
        if (done) {
          log.info('socialnet lead sync completed');
          return;
        }
        cursor = page.next;
      }
    } catch (err) {
      if (err instanceof LostClaim) {
        log.info('socialnet sync: no longer held by this worker (disconnected, or taken over after a lapsed lease); stopping');
        return;
      }
      await this.failOrRetry(sync, attempts + 1, err, log).catch((e) =>
        log.error({ err: e }, 'socialnet sync: recording a failure failed; the lease will lapse'),
      );
    }
  }

  /** One page: its leads, the cursor and the counts in one transaction (the unit a restart resumes from). */
  private async commitPage(
    sync: syncs.SyncRow,
    access: PageAccess,
    form: SocialnetForm,
    formCount: number,
    leads: Parameters<typeof importLeads>[2],
    cursor: string | null,
    done: boolean,
  ): Promise<void> {
    try {
      await this.importPage(sync, access, form, formCount, leads, cursor, done);
    } catch (err) {
      // Someone created a contact with a lead's phone while this page ran: once more, and it links to that one.
      if (!isPhoneConflict(err)) throw err;
      await this.importPage(sync, access, form, formCount, leads, cursor, done);
    }
  }

  private async importPage(
    sync: syncs.SyncRow,
    access: PageAccess,
    form: SocialnetForm,
    formCount: number,
    leads: Parameters<typeof importLeads>[2],
    cursor: string | null,
    done: boolean,
  ): Promise<void> {
    await withTransaction(this.o.pool, async (tx) => {
      const current = await syncs.lockOwned(tx, sync.id, this.workerId);
      if (!current) throw new LostClaim();
      const counts = await importLeads(
        tx,
        {
          orgId: sync.org_id,
          syncId: sync.id,
          pageId: access.id,
          formId: form.id,
          formName: form.name,
          phoneCountry: this.o.phoneCountry,
          contacts: this.o.contacts,
        },
        leads,
      );
      const kept = [...(current.skipped_leads ?? []), ...counts.skipped].slice(0, SKIPPED_KEPT);
      await syncs.saveProgress(
        tx,
        sync.id,
        {
          cursor,
          created: counts.created,
          linked: counts.linked,
          existing: counts.existing,
          skipped: counts.skipped.length,
          skippedLeads: kept,
          done,
        },
        this.o.leaseMs,
      );
      if (done) await recordSync(tx, sync.org_id, sync.integration_id, formCount);
    });
  }

  private async failOrRetry(sync: syncs.SyncRow, attempt: number, err: unknown, log: Logger): Promise<void> {
    if (err instanceof SocialnetError && !err.retryable) {
      log.warn({ kind: err.kind }, `socialnet sync failed: ${err.message}`);
      await withTransaction(this.o.pool, async (tx) => {
        await syncs.markFailed(tx, sync.id, this.workerId, err.kind, err.message);
        if (err.kind === 'auth_expired') await markAuthExpired(tx, sync.org_id, sync.integration_id);
      });
      return;
    }
    const code = err instanceof SocialnetError ? err.kind : 'internal';
    const message = err instanceof SocialnetError ? err.message : 'An unexpected error interrupted the sync; it will be retried';
    if (!(err instanceof SocialnetError)) log.error({ err }, 'socialnet sync: unexpected error');
    if (attempt >= this.o.maxAttempts) {
      await syncs.markFailed(this.o.pool, sync.id, this.workerId, code, `${message} (gave up after ${attempt} attempts)`);
      log.warn({ code, attempts: attempt }, 'socialnet sync failed after repeated errors');
      return;
    }
    const backoff = Math.min(this.o.retryMaxMs, this.o.retryBaseMs * 2 ** (attempt - 1));
    const delay = err instanceof SocialnetError && err.retryAfterMs !== undefined ? Math.max(err.retryAfterMs, backoff) : backoff;
    await syncs.scheduleRetry(this.o.pool, sync.id, this.workerId, code, message, delay);
    log.info({ code, attempt, delayMs: delay }, 'socialnet sync will be retried');
    if (delay < TIMER_LIMIT_MS && !this.stopping) {
      // Short waits get a timer; longer ones are found by the poll (no timer per parked sync).
      const t = setTimeout(() => {
        this.retryTimers.delete(t);
        this.wake();
      }, delay + 5);
      t.unref();
      this.retryTimers.add(t);
    }
  }
}
