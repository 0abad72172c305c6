import { escapeLiteral, type QueryResult } from 'pg';
import { withTransaction, type Pool, type PoolClient } from '@crm/db';
import type { Logger } from '@crm/logger';
import { amqpConsumed, type Metrics } from '@crm/metrics';
import type { BatchApply } from './batch-lanes';
import type { EventEnvelope } from './envelope';
import { topicMatches } from './routing';

/**
 * One consumer's part of a shared queue (issue #28, CPU per message): what used to be a queue of its own. Every queue
 * bound to `message.received` costs the broker a copy and the service a delivery per message, so consumers of one
 * service that take the same events share one queue and one batch transaction, each still with its own
 * processed_events rows, so each keeps its exactly-once effects and its failures to itself.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface QueueShare<P = any> {
  /**
   * Its name in processed_events (and its settled count, `amqp_messages_consumed_total{queue}`). A share that had a
   * queue of its own keeps that queue's name: its rows still say what it applied, dashboards keep their label, and
   * while the old queue is drained (an upgrade) an event that reached both queues takes effect once.
   */
  name: string;
  /** The routing-key patterns of the events it takes (matched against each event's type); the queue binds them all. */
  bindings: readonly string[];
  /** Work before the transaction, for its events only (see BatchPrepare). */
  prepare?: (events: EventEnvelope[]) => Promise<P>;
  /** Its events in delivery order, in the batch's transaction (a redelivered one it already applied is left out). */
  apply: (events: EventEnvelope[], db: PoolClient, prepared: P | undefined) => Promise<void>;
  /**
   * Which of its events it has nothing to do for, judged after `prepare` (no rule of the org listens, say): they are
   * neither claimed nor applied, and a batch that leaves no share anything to do opens no transaction at all. A
   * redelivered copy is judged again, which changes nothing only because nothing was done: answer true only for an
   * event whose `apply` would write nothing.
   */
  idle?: (event: EventEnvelope, prepared: P | undefined) => boolean;
}

export interface QueueSharesOptions {
  pool: Pool;
  queue: string;
  log: Logger;
  shares: QueueShare[];
  metrics?: Metrics;
}

/**
 * How a consumer with `shares` applies its batches (the package README, "Shared queues"). A batch is one transaction:
 * BEGIN with one INSERT claiming, per share, the ids of the events it takes, then each share's fresh events, COMMIT.
 * When it fails the consumer applies its events one by one (batch-lanes.ts); an event taken by several shares then
 * runs each share in a savepoint with its own claim, so a share that fails rolls back alone: the others' effects and
 * claims commit, the delivery is retried (or dead-lettered), and on its retry only the failed share, whose claim is
 * missing, applies it again.
 */
export class QueueShares implements BatchApply {
  private readonly shares: Array<QueueShare & { literal: string }>;
  private readonly counted?: (share: string, outcome: 'ack' | 'failed', n: number) => void;

  constructor(private readonly o: QueueSharesOptions) {
    if (o.shares.length === 0) throw new Error(`EventConsumer ${o.queue}: no shares`);
    const names = new Set(o.shares.map((s) => s.name));
    if (names.size !== o.shares.length) throw new Error(`EventConsumer ${o.queue}: two shares with one name`);
    this.shares = o.shares.map((s) => ({ ...s, literal: escapeLiteral(s.name) }));
    if (o.metrics) {
      const consumed = amqpConsumed(o.metrics);
      // The share named like the queue is the queue's own count already (settle.ts).
      this.counted = (share, outcome, n) => {
        if (share !== o.queue && n > 0) consumed.labels(share, outcome).inc(n);
      };
    }
  }

  /** The shares' names: the consumers whose processed_events rows this queue writes. */
  get names(): string[] {
    return this.shares.map((s) => s.name);
  }

  /** The events of `events` a share takes, in delivery order. */
  private taken(share: QueueShare, events: EventEnvelope[]): EventEnvelope[] {
    return events.filter((e) => share.bindings.some((p) => topicMatches(p, e.type)));
  }

  /**
   * A batch of one is not tried again event by event (batch-lanes.ts). Taken by several shares (a conversation's single
   * message, most of the time: batches are keyed by conversation), it goes through the shared transaction first, two
   * round trips whatever the shares, instead of a savepoint and a claim per share; only when that fails does it take
   * the isolating path, so a failing share still rolls back alone.
   */
  async all(events: EventEnvelope[]): Promise<void> {
    if (events.length !== 1) return this.together(events);
    if (this.takersOf(events[0]).length <= 1) return this.one(events[0]);
    try {
      await this.together(events);
    } catch {
      await this.one(events[0]);
    }
  }

  private takersOf(event: EventEnvelope) {
    return this.shares.filter((s) => this.taken(s, [event]).length > 0);
  }

  private async together(events: EventEnvelope[]): Promise<void> {
    const taken = this.shares.map((share) => ({ share, events: this.taken(share, events) })).filter((p) => p.events.length > 0);
    // Only a binding left from an older version could bring one: nothing takes it, so it is only acked.
    if (taken.length === 0) return;
    // Before the transaction, as with batchPrepare; one that fails fails the batch (then each event on its own).
    const prepared = await Promise.all(taken.map((p) => p.share.prepare?.(p.events)));
    const parts = taken
      .map((p, i) => ({ ...p, prepared: prepared[i], events: p.events.filter((e) => !p.share.idle?.(e, prepared[i])) }))
      .filter((p) => p.events.length > 0);
    if (parts.length > 0) await this.inTransaction(parts);
    for (const p of taken) this.counted?.(p.share.name, 'ack', p.events.length);
  }

  private async inTransaction(parts: Array<{ share: QueueShare & { literal: string }; events: EventEnvelope[]; prepared: unknown }>): Promise<void> {
    await withTransaction(
      this.o.pool,
      async (db, [claimed]) => {
        const fresh = freshOf(claimed as QueryResult<ClaimedRow> | undefined);
        for (const { share, events, prepared } of parts) {
          const own = events.filter((e) => fresh.delete(`${e.id.toLowerCase()}|${share.name}`));
          if (own.length > 0) await share.apply(own, db, prepared);
        }
      },
      { begin: this.claim(parts) },
    );
  }

  async one(event: EventEnvelope): Promise<void> {
    const takers = this.takersOf(event);
    // Taken by one share (or none): its failure is the event's, as in any batch of one.
    if (takers.length <= 1) {
      try {
        return await this.together([event]);
      } catch (err) {
        if (takers[0]) this.counted?.(takers[0].name, 'failed', 1);
        throw err;
      }
    }
    const failures: Array<{ share: string; err: unknown }> = [];
    const prepared = await Promise.all(
      takers.map((s) =>
        s.prepare?.([event]).catch((err: unknown) => {
          failures.push({ share: s.name, err });
          return FAILED;
        }),
      ),
    );
    const done: string[] = [];
    // A share whose prepare failed has failed already; one with nothing to do is done without a claim.
    const busy: Array<{ share: (typeof takers)[number]; prepared: unknown }> = [];
    for (const [i, share] of takers.entries()) {
      if (prepared[i] === FAILED) continue;
      if (share.idle?.(event, prepared[i])) done.push(share.name);
      else busy.push({ share, prepared: prepared[i] });
    }
    if (busy.length > 0)
      await withTransaction(this.o.pool, async (db) => {
        for (const { share, prepared: own } of busy) {
          try {
            const [, claimed] = (await db.query(`SAVEPOINT share; ${this.claim([{ share, events: [event] }])}`)) as unknown as QueryResult[];
            if (claimed.rowCount) await share.apply([event], db, own);
            await db.query('RELEASE SAVEPOINT share');
            done.push(share.name);
          } catch (err) {
            await db.query('ROLLBACK TO SAVEPOINT share');
            failures.push({ share: share.name, err });
          }
        }
      });
    for (const name of done) this.counted?.(name, 'ack', 1);
    if (failures.length === 0) return;
    for (const f of failures) {
      this.counted?.(f.share, 'failed', 1);
      this.o.log.warn(
        { err: f.err, queue: this.o.queue, share: f.share, eventId: event.id, applied: done },
        'event consumer: a share failed; the others committed',
      );
    }
    // The delivery takes the retry / dead-letter route for the failed shares only: the others' claims are committed.
    throw failures[0].err;
  }

  /** One INSERT claiming each part's event ids for its share; ids are validated UUIDs (parseEnvelope), names escaped. */
  private claim(parts: Array<{ share: { literal: string }; events: EventEnvelope[] }>): string {
    const rows = parts.map(
      ({ share, events }) => `SELECT unnest('{${[...new Set(events.map((e) => e.id.toLowerCase()))].join(',')}}'::uuid[]), ${share.literal}`,
    );
    return `INSERT INTO processed_events (event_id, consumer) ${rows.join(' UNION ALL ')} ON CONFLICT DO NOTHING RETURNING event_id, consumer`;
  }
}

interface ClaimedRow {
  event_id: string;
  consumer: string;
}

const FAILED = Symbol('prepare failed');

/** `<event id>|<share>` of every claim the batch's INSERT made: each taken once, so a redelivered copy in the batch is left out. */
function freshOf(claimed: QueryResult<ClaimedRow> | undefined): Set<string> {
  return new Set((claimed?.rows ?? []).map((r) => `${r.event_id}|${r.consumer}`));
}
