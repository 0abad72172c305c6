import { directDatabaseUrl } from '@crm/config';
import { AppError } from '@crm/grpc-kit';
import { ClaimLoop, Queryable, withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import { sendAutomatic } from '../send';
import { sendOutcomeOf as outcomeOf } from '../scheduled';
import * as repo from './repo';

/** Sends that may be retried before the row is given up as failed. */
const MAX_ATTEMPTS = 5;

/** What a kind's owner writes in the transaction that stores its message (the CSAT survey: when it was asked). */
export type OnAutoMessageSent = (db: Queryable, row: repo.AutoMessageRow, sentAt: Date) => Promise<void>;

/**
 * The sender of what the inbox says by itself (ARCHITECTURE.md, Timers): rows are written due at once in the
 * transaction that decided them; each instance claims due rows with FOR UPDATE SKIP LOCKED under a lease (woken by
 * the NOTIFY of the write, or sleeping until a retry falls due) and sends each through the ordinary send (source
 * `auto`, the row's id as idempotency key), so each goes out once across instances and restarts.
 */
export class AutoMessageSender {
  private readonly loop: ClaimLoop<repo.AutoMessageRow>;
  private readonly leaseMs: number;

  constructor(
    private readonly deps: Deps,
    private readonly onSent: Partial<Record<repo.AutoMessageKind, OnAutoMessageSent>> = {},
  ) {
    this.leaseMs = deps.config.CONNECTOR_DEADLINE_MS + 30_000;
    this.loop = new ClaimLoop({
      name: 'auto messages',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.AUTO_MESSAGES_CHANNEL,
      concurrency: 4,
      claim: (free) => repo.claimDue(deps.pool, free, this.leaseMs),
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      work: (r) => this.send(r),
      describe: (r) => ({ autoMessageId: r.id, kind: r.kind, orgId: r.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async stored(db: Queryable, r: repo.AutoMessageRow, messageId: string): Promise<void> {
    const sentAt = await repo.markSent(db, r.id, messageId);
    await this.onSent[r.kind]?.(db, r, sentAt);
  }

  private async send(r: repo.AutoMessageRow): Promise<void> {
    const { deps } = this;
    try {
      const sent = await sendAutomatic(
        deps,
        { key: `auto:${r.id}`, orgId: r.org_id, conversationId: r.conversation_id, content: r.content },
        (db, messageId) => this.stored(db, r, messageId),
      );
      if (sent.replayed) await withTransaction(deps.pool, (db) => this.stored(db, r, sent.id));
      deps.log.debug({ autoMessageId: r.id, kind: r.kind, messageId: sent.id }, 'automatic message sent');
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const outcome = outcomeOf(err, deps.config.IDEMPOTENCY_PENDING_TIMEOUT_MS);
      if ('failed' in outcome || r.attempts >= MAX_ATTEMPTS)
        await repo.markFailed(deps.pool, r.id, 'failed' in outcome ? outcome.failed : outcome.error);
      else await repo.retryLater(deps.pool, r.id, outcome.retryInMs, outcome.error);
      deps.log.warn({ autoMessageId: r.id, kind: r.kind, code: err.code, outcome }, 'automatic message not sent');
    }
  }
}
