import type { Pool } from '@crm/db';
import { enqueueEvent, enqueueEvents, type NewEvent } from '@crm/events';
import type { Logger } from '@crm/logger';

export interface OutboxBatcherOptions {
  pool: Pool;
  log: Logger;
  /** At most this many events per statement; a full batch is written at once. */
  maxEvents: number;
  /** The longest the first event of a batch waits for others to join it (0: no waiting). */
  maxWaitMs: number;
}

interface Waiting {
  event: NewEvent;
  arrivedAt: number;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Writes events that arrive one at a time from the network (inbound messages, read receipts) to the
 * outbox in batches: what arrives within `maxWaitMs` of the first, up to `maxEvents`, goes in with one
 * multi-row insert, which is one transaction, one WAL flush and one relay wake-up (its NOTIFY) instead
 * of one of each per message.
 *
 * - Order: one batch is written at a time, in arrival order, so the outbox's seq order (the relay's
 *   publishing order) is the order events were handed in; per conversation too.
 * - Durability: `enqueue` resolves only once its batch committed. A batch that fails is retried row by
 *   row, so one event PostgreSQL refuses fails only its own caller; any event that cannot be written
 *   rejects its caller, never disappears.
 * - Idempotence: events keep their derived ids, and the outbox skips an id it already holds (or that
 *   appears earlier in the same batch): the network handing a message over twice yields one event.
 */
export class OutboxBatcher {
  private waiting: Waiting[] = [];
  private timer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private closed = false;

  constructor(private readonly o: OutboxBatcherOptions) {}

  /** Queue an event for the next batch; resolves once it is committed to the outbox. */
  enqueue(event: NewEvent): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The outbox batcher is closed'));
    return new Promise<void>((resolve, reject) => {
      // The time it arrived, not the time its batch was written.
      const arrivedAt = Date.now();
      this.waiting.push({ event: { ...event, occurredAt: event.occurredAt ?? new Date(arrivedAt).toISOString() }, arrivedAt, resolve, reject });
      if (!this.timer || this.waiting.length >= this.o.maxEvents) this.schedule();
    });
  }

  /** Write what is waiting and stop taking more (shutdown: after the sessions are closed). */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  /**
   * Write everything handed in so far now, without waiting for the batch window; resolves once it is
   * committed (a session handed to another instance: what it received is stored before the other starts).
   */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing || this.waiting.length > 0) {
      if (!this.writing) this.writeNext();
      await this.writing;
    }
  }

  /** Write now when a batch is full or its first event has waited long enough; otherwise wake up then. */
  private schedule(): void {
    // While a batch is being written the rest waits; when it is done this runs again.
    if (this.writing || this.waiting.length === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const due = this.waiting.length >= this.o.maxEvents ? 0 : this.waiting[0].arrivedAt + this.o.maxWaitMs - Date.now();
    if (due <= 0) {
      this.writeNext();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, due);
  }

  private writeNext(): void {
    const batch = this.waiting.splice(0, this.o.maxEvents);
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined;
      if (!this.closed) this.schedule();
    });
  }

  private async write(batch: Waiting[]): Promise<void> {
    try {
      // A single statement outside BEGIN/COMMIT is its own transaction: committed when the query returns. Each event
      // keeps the trace it was made with (the news's own: none from the network), whatever the others' in the batch.
      await enqueueEvents(
        this.o.pool,
        batch.map((w) => ({ ...w.event, traceparent: w.event.traceparent })),
      );
      for (const w of batch) w.resolve();
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0].reject(err);
        return;
      }
      this.o.log.warn({ err, events: batch.length }, 'writing a batch of network events failed; writing them one by one');
    }
    for (const w of batch) {
      try {
        await enqueueEvent(this.o.pool, { ...w.event, traceparent: w.event.traceparent });
        w.resolve();
      } catch (err) {
        w.reject(err);
      }
    }
  }
}
