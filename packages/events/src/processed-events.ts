import { escapeLiteral, type QueryResult } from 'pg';
import { withTransaction, type Pool, type PoolClient } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { EventEnvelope } from './envelope';

const PRUNE_PROCESSED = {
  name: 'crm_events_prune_processed',
  text: `DELETE FROM processed_events WHERE consumer = $1 AND processed_at < now() - $2 * interval '1 millisecond'`,
};

/**
 * A consumer's processed_events rows: each transaction first claims the ids of the events it applies for this
 * consumer, so an event redelivered after its transaction committed (a lost ack, a reconnect) takes effect only once.
 * The claim goes with BEGIN in one round trip; a multi-statement query cannot take parameters, so the ids inlined
 * are validated UUIDs (parseEnvelope) and the consumer's name is escaped.
 */
export class ProcessedEvents {
  private readonly consumerLiteral: string;
  private pruneTimer?: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly consumer: string,
    private readonly retentionMs: number,
    private readonly log: Logger,
  ) {
    this.consumerLiteral = escapeLiteral(consumer);
  }

  /**
   * `apply(db)` in a transaction that first claims the event's id; an id this consumer already processed is skipped.
   * The claim blocks while another transaction holds the same id, then sees its outcome.
   */
  async once(event: EventEnvelope, apply: (db: PoolClient) => Promise<void>): Promise<void> {
    const claim = `INSERT INTO processed_events (event_id, consumer) VALUES ('${event.id}', ${this.consumerLiteral}) ON CONFLICT DO NOTHING`;
    await withTransaction(
      this.pool,
      async (db, [claimed]) => {
        if (claimed.rowCount === 0) {
          this.log.debug({ queue: this.consumer, eventId: event.id, eventType: event.type }, 'event consumer: already processed; skipping');
          return;
        }
        await apply(db);
      },
      { begin: claim },
    );
  }

  /**
   * `apply(fresh, db)` in one transaction that first claims every id of the batch in one statement: ids already
   * processed by this consumer come back missing and their events are left out (so is a redelivered copy sitting in
   * the same batch as its original: ON CONFLICT DO NOTHING skips its second row too). Not called when none is left.
   */
  async batch(events: EventEnvelope[], apply: (fresh: EventEnvelope[], db: PoolClient) => Promise<void>): Promise<void> {
    const ids = [...new Set(events.map((e) => e.id.toLowerCase()))];
    const claim = `INSERT INTO processed_events (event_id, consumer) SELECT unnest('{${ids.join(',')}}'::uuid[]), ${this.consumerLiteral} ON CONFLICT DO NOTHING RETURNING event_id`;
    await withTransaction(
      this.pool,
      async (db, [claimed]) => {
        const newlyClaimed = new Set((claimed as QueryResult<{ event_id: string }>).rows.map((r) => r.event_id));
        const fresh: EventEnvelope[] = [];
        for (const e of events) if (newlyClaimed.delete(e.id.toLowerCase())) fresh.push(e);
        if (fresh.length < events.length) {
          const kept = new Set(fresh);
          const eventIds = events.filter((e) => !kept.has(e)).map((e) => e.id);
          this.log.debug({ queue: this.consumer, skipped: eventIds.length, eventIds }, 'event consumer: already processed; skipping');
        }
        if (fresh.length > 0) await apply(fresh, db);
      },
      { begin: claim },
    );
  }

  /** Deletes this consumer's rows older than the retention, now and then; duplicates arrive within minutes. */
  startPruning(): void {
    const every = Math.min(3600_000, Math.max(1_000, this.retentionMs));
    this.pruneTimer = setInterval(() => void this.prune(), every);
  }

  stopPruning(): void {
    clearInterval(this.pruneTimer);
  }

  private async prune(): Promise<void> {
    try {
      await this.pool.query({ ...PRUNE_PROCESSED, values: [this.consumer, this.retentionMs] });
    } catch (err) {
      this.log.warn({ err, queue: this.consumer }, 'event consumer: pruning processed_events failed');
    }
  }
}
