import { randomUUID } from 'node:crypto';
import type { Pool } from '@crm/db';
import type { NewEvent } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import { EVENTS } from './events';
import type { OutboxBatcher } from './outbox-batcher';

/** An event whose id is fixed before it is sent either way. */
type Fixed = NewEvent & { id: string };

/** What this needs of the broker side: DirectPublisher of @crm/events. */
export interface DirectPath {
  readonly connected: boolean;
  /** Resolves once the broker confirmed every event; rejects on a nack, a timeout or no usable channel. */
  publish(events: Fixed[]): Promise<void>;
}

export interface NewsPublisherOptions {
  direct: DirectPath;
  outbox: Pick<OutboxBatcher, 'enqueue' | 'flush' | 'close'>;
  /** The connector's database, whose outbox is asked whether inbound messages are still unsent. */
  pool: Pool;
  log: Logger;
  /** Inbound messages per direct publish (their confirms are awaited together). */
  maxEvents: number;
  /**
   * The longest the first inbound message of a direct publish waits for others to join it (0: only what arrived while
   * the previous publish was being confirmed).
   */
  maxWaitMs: number;
  /** How long a return to the direct path waits for the relay to send the inbound messages the outbox still holds. */
  drainWaitMs: number;
  metrics?: Metrics;
}

interface Waiting {
  event: Fixed;
  arrivedAt: number;
  resolve(): void;
  reject(err: unknown): void;
}

type Path = 'direct' | 'outbox';

/** Ids published directly that are remembered, so the network handing a message over again does not publish it twice. */
const RECENT_IDS = 10_000;
const DRAIN_POLL_MS = 25;
const RESUME_FIRST_MS = 100;
const RESUME_MAX_MS = 5_000;

// Unsent inbound rows of any org: the outbox is the service's own, and a conversation's earlier messages may be in it
// whichever org it is of (the partial index on the unsent tail keeps this small).
const INBOUND_UNSENT = {
  name: 'chatnet_inbound_unsent',
  text: `SELECT EXISTS (SELECT 1 FROM outbox WHERE published_at IS NULL AND type = $1) AS unsent`,
  values: [EVENTS.inbound],
};

/**
 * Hands the network's news on to the bus. `chatnet.inbound` goes straight to RabbitMQ with publisher confirms (the
 * architecture allows it for this one type: after a crash before the confirm the network's catch-up hands the message
 * over again), which saves the outbox's insert, claim and mark per message. Everything else (receipts, recalls,
 * reactions) goes through the outbox batcher as before.
 *
 * - Order: one queue, in arrival order; one direct batch at a time, so a batch that fails is the last one sent directly.
 * - Fallback: a batch that fails (nack, no confirm within the bound, no usable channel) goes to the outbox, and so does
 *   everything after it. The direct path is taken again only when the broker has a usable channel and the outbox holds
 *   no unsent inbound message: the relay has had those confirmed, so the broker confirms again, and a direct message
 *   cannot overtake an earlier one of its conversation still waiting in the outbox.
 * - Same event either way: id, time and trace context are fixed on arrival, so a batch that timed out but was delivered
 *   after all is the same event as its outbox row (consumers de-duplicate by id).
 * - Durability: a caller's promise resolves once its event is confirmed by the broker or committed to the outbox.
 */
export class NewsPublisher {
  private queue: Waiting[] = [];
  private running?: Promise<void>;
  private direct = true;
  private resumeAt = 0;
  private resumeFailures = 0;
  private closed = false;
  /** Ends the wait for a direct publish to fill (flush, close, or a full batch). */
  private gathered?: () => void;
  private flushing = 0;
  private readonly recent = new Set<string>();
  private readonly counted?: (path: Path, n: number) => void;

  constructor(private readonly o: NewsPublisherOptions) {
    if (o.metrics) {
      const counter = o.metrics.counter(
        'chatnet_inbound_events_total',
        'chatnet.inbound events handed on, by path: direct (confirmed by the broker) or outbox (its fallback)',
        ['path'],
      );
      this.counted = (path, n) => counter.labels(path).inc(n);
    }
  }

  /** Queue an event; resolves once the broker confirmed it or the outbox committed it. */
  enqueue(event: NewEvent): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The news publisher is closed'));
    const fixed: Fixed = {
      ...event,
      id: event.id ?? randomUUID(),
      occurredAt: event.occurredAt ?? new Date().toISOString(),
      // As the event was made (events.ts): news from the network has a trace of its own, a sandbox push its call's.
      traceparent: event.traceparent,
    };
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ event: fixed, arrivedAt: Date.now(), resolve, reject });
      if (this.queue.length >= this.o.maxEvents) this.gathered?.();
      this.run();
    });
  }

  /** Everything handed in so far confirmed or committed (a session handed to another instance, shutdown). */
  async flush(): Promise<void> {
    this.flushing++;
    this.gathered?.();
    try {
      while (this.running || this.queue.length > 0) {
        this.run();
        await this.running;
      }
    } finally {
      this.flushing--;
    }
    await this.o.outbox.flush();
  }

  /** Send what is waiting and stop taking more (shutdown: after the sessions are closed). */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    await this.o.outbox.close();
  }

  private run(): void {
    if (this.running || this.queue.length === 0) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      this.run();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      if (!this.direct && Date.now() >= this.resumeAt) await this.tryResume();
      // The head's run of events that take the same path, at most maxEvents.
      const goesDirect = (w: Waiting) => this.direct && w.event.type === EVENTS.inbound;
      if (goesDirect(this.queue[0])) await this.gather();
      const first = goesDirect(this.queue[0]);
      let n = 1;
      while (n < this.queue.length && n < this.o.maxEvents && goesDirect(this.queue[n]) === first) n++;
      const batch = this.queue.splice(0, n);
      if (first) await this.publishDirect(batch);
      else this.toOutbox(batch);
    }
  }

  /**
   * Waits until the head has waited maxWaitMs, the queue holds maxEvents, or a flush: each publish costs the connector,
   * and the broker, a round of frames and confirms whatever its size. The network hands messages over one at a time,
   * and a publish is confirmed within a millisecond or two, so without the wait nearly every message was a publish of
   * its own (bench/realtime at 200 msg/s: the connector's CPU per message 0.79 ms without the wait, 0.55-0.58 with
   * 20 ms; RabbitMQ's 1.75 and 1.34-1.36: bench/RESULTS.md, session 43's runs).
   */
  private async gather(): Promise<void> {
    const due = this.queue[0].arrivedAt + this.o.maxWaitMs - Date.now();
    if (due <= 0 || this.flushing > 0 || this.queue.length >= this.o.maxEvents) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, due);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.gathered = done;
    });
    this.gathered = undefined;
  }

  private async publishDirect(batch: Waiting[]): Promise<void> {
    const inBatch = new Set<string>();
    const fresh = batch.filter((w) => !this.recent.has(w.event.id) && !inBatch.has(w.event.id) && inBatch.add(w.event.id));
    try {
      if (fresh.length > 0) await this.o.direct.publish(fresh.map((w) => w.event));
    } catch (err) {
      this.direct = false;
      this.resumeLater();
      this.o.log.warn({ err, events: batch.length }, 'publishing inbound messages to RabbitMQ failed; they and what follows go through the outbox');
      // The whole batch: some may have been delivered, and their rows carry the same ids.
      this.toOutbox(batch);
      return;
    }
    for (const w of fresh) this.remember(w.event.id);
    this.counted?.('direct', fresh.length);
    for (const w of batch) w.resolve();
  }

  /** In order through the batcher, which writes one batch at a time in arrival order. */
  private toOutbox(batch: Waiting[]): void {
    for (const w of batch) this.o.outbox.enqueue(w.event).then(w.resolve, w.reject);
    this.counted?.('outbox', batch.filter((w) => w.event.type === EVENTS.inbound).length);
  }

  /**
   * Back to the direct path once the broker has a usable channel and the relay has sent every inbound row. The queue
   * waits meanwhile (at most drainWaitMs): under load the rows just written would otherwise always be there.
   */
  private async tryResume(): Promise<void> {
    if (!this.o.direct.connected) return this.resumeLater();
    try {
      // What the fallback handed to the batcher is committed first, so the outbox is asked about all of it.
      await this.o.outbox.flush();
      const deadline = Date.now() + this.o.drainWaitMs;
      while ((await this.o.pool.query<{ unsent: boolean }>(INBOUND_UNSENT)).rows[0].unsent) {
        if (Date.now() >= deadline) return this.resumeLater();
        await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
      }
    } catch (err) {
      this.o.log.warn({ err }, 'checking the outbox before publishing inbound messages directly again failed');
      return this.resumeLater();
    }
    this.direct = true;
    this.resumeFailures = 0;
    this.o.log.info('RabbitMQ confirms again and the outbox has sent its inbound messages: publishing them directly again');
  }

  private resumeLater(): void {
    this.resumeAt = Date.now() + Math.min(RESUME_MAX_MS, RESUME_FIRST_MS * 2 ** this.resumeFailures++);
  }

  private remember(id: string): void {
    this.recent.add(id);
    // A Set iterates in insertion order: the first is the oldest.
    if (this.recent.size > RECENT_IDS) this.recent.delete(this.recent.values().next().value!);
  }
}
