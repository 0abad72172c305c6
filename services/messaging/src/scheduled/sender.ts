import { directDatabaseUrl } from '@crm/config';
import { AppError } from '@crm/grpc-kit';
import { ClaimLoop, withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import { sendScheduled } from '../send';
import * as repo from './repo';

/** Sends that may be retried before the row is given up as failed. */
const MAX_ATTEMPTS = 10;

/** What to do with a send that threw: give the row up with the reason, or try again after a while. */
export type Outcome = { retryInMs: number; error: string } | { failed: string };

/**
 * A send whose outcome is unknown or whose key is still in flight (a crash mid-send) is retried once the key may
 * be taken over, when the connector answers from its record of the key instead of sending again; a full send
 * budget is retried when it frees. Anything else (the network refused, the account is gone or not connected, the
 * conversation was deleted) fails the row with the reason.
 */
export function outcomeOf(err: AppError, pendingTimeoutMs: number): Outcome {
  if (err.code === 'send_outcome_unknown' || err.code === 'send_in_progress') return { retryInMs: pendingTimeoutMs, error: err.message };
  if (err.kind === 'rate_limited') return { retryInMs: Math.max(1, err.retryAfter ?? 60) * 1000, error: err.message };
  return { failed: err.message };
}

/**
 * The scheduled-message timer (ARCHITECTURE.md, Timers): each instance sleeps until the nearest due row
 * (`nextDueInMs`), woken early by a NOTIFY on messaging_scheduled_due when one is written or moved earlier;
 * due rows are claimed with FOR UPDATE SKIP LOCKED under a lease, so one instance sends each, and a row whose
 * instance died is claimed again when its lease ends. The send is the ordinary one (send/send.ts) keyed by the
 * row's id, and the row is marked sent in the transaction that stores the message: exactly one message.
 */
export class ScheduledSender {
  private readonly loop: ClaimLoop<repo.ScheduledRow>;
  /** Longer than the longest send (one with files), so a row is never claimed again while its send runs. */
  private readonly leaseMs: number;

  constructor(private readonly deps: Deps) {
    this.leaseMs = deps.config.CONNECTOR_FILE_DEADLINE_MS + 30_000;
    this.loop = new ClaimLoop({
      name: 'scheduled messages',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.SCHEDULED_CHANNEL,
      concurrency: 4,
      claim: (free) => repo.claimDue(deps.pool, free, this.leaseMs),
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      work: (r) => this.send(r),
      describe: (r) => ({ scheduledMessageId: r.id, orgId: r.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async send(r: repo.ScheduledRow): Promise<void> {
    const { deps } = this;
    try {
      const sent = await sendScheduled(
        deps,
        {
          id: r.id,
          orgId: r.org_id,
          createdBy: r.created_by,
          conversationId: r.conversation_id,
          content: r.content,
          contentType: r.content_type,
          attachmentIds: r.attachment_ids,
        },
        (db, messageId) => repo.markSent(db, r.id, messageId),
      );
      // A repeat after a crash between storing the message and this row: the stored answer, marked now.
      if (sent.replayed) await repo.markSent(deps.pool, r.id, sent.id);
      deps.log.debug({ scheduledMessageId: r.id, messageId: sent.id }, 'scheduled message sent');
    } catch (err) {
      // Not an answer about the send (the database went away): the lease runs out and the row is claimed again.
      if (!(err instanceof AppError)) throw err;
      const outcome = outcomeOf(err, deps.config.IDEMPOTENCY_PENDING_TIMEOUT_MS);
      await withTransaction(deps.pool, async (db) => {
        if ('failed' in outcome || r.attempts >= MAX_ATTEMPTS) await repo.markFailed(db, r.id, 'failed' in outcome ? outcome.failed : outcome.error);
        else await repo.retryLater(db, r.id, outcome.retryInMs, outcome.error);
      });
      deps.log.warn({ scheduledMessageId: r.id, code: err.code, outcome }, 'scheduled message not sent');
    }
  }
}
