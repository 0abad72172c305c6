import { directDatabaseUrl } from '@crm/config';
import { AppError } from '@crm/grpc-kit';
import { ClaimLoop, Queryable, withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import { convs } from '../conversations';
import { sendAutomatic } from '../send';
import { applyStatus } from '../status';
import { inboxSettingsOf } from '../inbox-settings';
import { autoCloseDue as repo } from '../auto-close';

/** Statuses auto-close acts on: a snoozed conversation waits for its wake-up, a closed or archived one is done. */
const OPEN = new Set(['active', 'pending']);
/** Tries of a message that could not go out yet before the conversation closes without it. */
const MAX_ATTEMPTS = 5;

/**
 * The auto-close timer (ARCHITECTURE.md, Timers): each instance sleeps until the nearest due row (`nextDueInMs`),
 * woken early by a NOTIFY on messaging_auto_close_due when an earlier one is written; due rows are claimed with
 * FOR UPDATE SKIP LOCKED under a lease, so one instance closes each conversation. The org's auto-close message goes
 * first, through the ordinary send (source `auto`, the arming's id as idempotency key), and the close is written in
 * the transaction that stores it, only if the timer is still this arming (the contact did not write meanwhile):
 * `conversation.status_changed` with `changedBy: null`.
 */
export class AutoCloser {
  private readonly loop: ClaimLoop<repo.AutoCloseRow>;
  private readonly leaseMs: number;

  constructor(private readonly deps: Deps) {
    this.leaseMs = deps.config.CONNECTOR_DEADLINE_MS + 30_000;
    this.loop = new ClaimLoop({
      name: 'auto-close',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.AUTO_CLOSE_CHANNEL,
      concurrency: 4,
      claim: (free) => repo.claimDue(deps.pool, free, this.leaseMs),
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      work: (r) => this.close(r),
      describe: (r) => ({ conversationId: r.conversation_id, orgId: r.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** In the caller's transaction: the timer taken (still this arming) and the conversation closed by nobody. */
  private async closeIn(db: Queryable, r: repo.AutoCloseRow): Promise<boolean> {
    if (!(await repo.take(db, r.conversation_id, r.arming_id))) return false;
    const conv = await convs.findById(db, r.org_id, r.conversation_id, true);
    if (!conv || !OPEN.has(conv.status)) return false;
    // A timer's work: a trace of its own.
    return applyStatus(db, conv, 'closed', null, null, undefined);
  }

  private async close(r: repo.AutoCloseRow): Promise<void> {
    const { deps } = this;
    const conv = await convs.findById(deps.pool, r.org_id, r.conversation_id);
    const settings = await inboxSettingsOf(deps.pool, r.org_id);
    if (!conv || !OPEN.has(conv.status) || settings.autoCloseAfterMinutes === null || !settings.autoCloseMessage) {
      const closed = await withTransaction(deps.pool, (db) => this.closeIn(db, r));
      deps.log.debug({ conversationId: r.conversation_id, closed }, 'auto-close');
      return;
    }
    try {
      const sent = await sendAutomatic(
        deps,
        { key: `auto-close:${r.arming_id}`, orgId: r.org_id, conversationId: r.conversation_id, content: settings.autoCloseMessage },
        (db) => this.closeIn(db, r).then(() => undefined),
      );
      // A repeat after a crash between sending and storing: the stored answer; the close is written now.
      if (sent.replayed) await withTransaction(deps.pool, (db) => this.closeIn(db, r));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const retry = err.kind === 'rate_limited' || err.code === 'send_outcome_unknown' || err.code === 'send_in_progress';
      if (retry && r.attempts < MAX_ATTEMPTS) {
        const ms = err.kind === 'rate_limited' ? Math.max(1, err.retryAfter ?? 60) * 1000 : deps.config.IDEMPOTENCY_PENDING_TIMEOUT_MS;
        await repo.retryLater(deps.pool, r.conversation_id, r.arming_id, ms);
      } else {
        // The message is a courtesy: a network that refuses it (or an account not connected) does not keep the conversation open.
        await withTransaction(deps.pool, (db) => this.closeIn(db, r));
      }
      deps.log.warn({ conversationId: r.conversation_id, code: err.code, retry }, 'auto-close message not sent');
    }
  }
}
