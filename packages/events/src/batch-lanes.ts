import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Logger } from '@crm/logger';
import type { Delivery, DeliveryReader } from './delivery';
import type { EventEnvelope } from './envelope';
import { attemptOf, type DeliverySettler } from './settle';
import { eventTraceFields, failSpan, withEventTrace } from './trace-context';

/** How a consumer in batch mode applies events: with a pool, each call in its own transaction. */
export interface BatchApply {
  /** The batch's events, in delivery order, at once. */
  all(events: EventEnvelope[]): Promise<void>;
  /** One event alone: what is left to do for each event of a batch that failed. */
  one(event: EventEnvelope): Promise<void>;
}

export interface BatchLanesOptions {
  queue: string;
  log: Logger;
  /** Lanes running side by side (the consumer's `concurrency`). */
  lanes: number;
  /** Most deliveries per batch. */
  size: number;
  /** A partial batch goes this long after its first delivery arrived. */
  flushMs: number;
  /** Which lane an event goes to (by its hash); needed with more than one lane. */
  key?: (event: EventEnvelope) => string;
  apply: BatchApply;
  reader: DeliveryReader;
  settler: DeliverySettler;
  /** Counts work the consumer's stop() must wait for. */
  track: (work: Promise<void>) => Promise<void>;
  /** The consumer is stopping: no batch starts any more. */
  stopping: () => boolean;
}

/** A delivery waiting in a lane for its batch. */
interface Parsed extends Delivery {
  event: EventEnvelope;
  attempt: number;
  arrivedAt: number;
}

/** Deliveries of one key-range, applied one batch at a time in arrival order. */
interface Lane {
  pending: Parsed[];
  running: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * Batch mode (see the package README, "Batch mode"): deliveries collected per lane into batches of up to `size`,
 * each applied at once and acked together; a batch that fails is applied event by event, so only an event that
 * fails again is retried or dead-lettered.
 */
export class BatchLanes {
  private readonly lanes: Lane[] = [];

  constructor(private readonly o: BatchLanesOptions) {
    for (let i = 0; i < o.lanes; i++) this.lanes.push({ pending: [], running: false });
  }

  /** Parse on arrival (a malformed message leaves alone), then queue in the event's lane. */
  collect(channel: ConfirmChannel, msg: ConsumeMessage): void {
    this.o.settler.received({ channel, msg });
    const attempt = attemptOf(msg);
    let event: EventEnvelope;
    try {
      event = this.o.reader.decode(msg);
    } catch (err) {
      void this.o.track(this.o.settler.malformed({ msg, channel }, attempt, err));
      return;
    }
    const lane = this.lanes[this.laneFor(event)];
    lane.pending.push({ msg, channel, event, attempt, arrivedAt: performance.now() });
    this.schedule(lane);
  }

  /** A lost channel's deliveries: their acks can no longer reach the broker, which redelivers them. */
  forget(channel: ConfirmChannel): void {
    for (const lane of this.lanes) lane.pending = lane.pending.filter((d) => d.channel !== channel);
  }

  /** Stopping: what has not started is dropped (closing the channel hands it back to the broker). */
  clear(): void {
    for (const lane of this.lanes) {
      clearTimeout(lane.timer);
      lane.timer = undefined;
      lane.pending.length = 0;
    }
  }

  private laneFor(event: EventEnvelope): number {
    const { key } = this.o;
    if (this.lanes.length === 1 || !key) return 0;
    try {
      return laneOf(key(event), this.lanes.length);
    } catch (err) {
      // A key function that throws on odd data must not break the channel's delivery callback; such events
      // all share lane 0, so they still keep their order among themselves.
      this.o.log.warn({ err, queue: this.o.queue, eventId: event.id, ...eventTraceFields(event) }, 'event consumer: batchKey failed; using lane 0');
      return 0;
    }
  }

  /** Flush when the lane is free and its batch is full or its oldest delivery has waited flushMs. */
  private schedule(lane: Lane): void {
    if (lane.running || this.o.stopping() || lane.pending.length === 0) return;
    const wait = lane.pending.length >= this.o.size ? 0 : lane.pending[0].arrivedAt + this.o.flushMs - performance.now();
    if (wait > 0) {
      lane.timer ??= setTimeout(() => {
        lane.timer = undefined;
        if (!lane.running && !this.o.stopping() && lane.pending.length > 0) this.flush(lane);
      }, wait);
      return;
    }
    this.flush(lane);
  }

  private flush(lane: Lane): void {
    clearTimeout(lane.timer);
    lane.timer = undefined;
    const batch = lane.pending.splice(0, this.o.size);
    lane.running = true;
    void this.o.track(
      this.run(batch).finally(() => {
        lane.running = false;
        // What arrived meanwhile has already waited for this batch: it goes as soon as it is due.
        this.schedule(lane);
      }),
    );
  }

  /**
   * One span per event of the batch (each a child of its own producer's span, so every event keeps its trace
   * id). The handler runs in the batch's one trace when it has one (a batch of one, or events of one request);
   * otherwise in none, and handlers reach each event's trace with withEventTrace / eventTraceparent.
   */
  private async run(batch: Parsed[]): Promise<void> {
    const spans = batch.map((d) => this.o.reader.trace(d.event, d.msg));
    const traceIds = new Set(spans.map((t) => t.span.spanContext().traceId));
    const shared = traceIds.size === 1 ? spans[0].ctx : ROOT_CONTEXT;
    try {
      await context.with(shared, () => this.settle(batch));
    } finally {
      for (const t of spans) t.span.end();
    }
  }

  private async settle(batch: Parsed[]): Promise<void> {
    try {
      await this.o.apply.all(batch.map((d) => d.event));
    } catch (err) {
      if (batch.length === 1) {
        failSpan(trace.getActiveSpan(), err);
        return this.o.settler.failed(batch[0], batch[0].event, batch[0].attempt, err);
      }
      // One bad event must not hold back the others: each gets its own transaction, and only the ones that
      // fail again take the retry / dead-letter route.
      this.o.log.warn({ err, queue: this.o.queue, size: batch.length }, 'event consumer: batch failed; applying its events one by one');
      await this.oneByOne(batch);
      return;
    }
    this.o.settler.appliedAll(batch);
  }

  /** Each event on its own (in its own transaction), in delivery order; failures go the per-event retry / DLQ route. */
  private async oneByOne(batch: Parsed[]): Promise<void> {
    for (const d of batch) {
      await withEventTrace(d.event, async () => {
        try {
          await this.o.apply.one(d.event);
        } catch (err) {
          failSpan(trace.getActiveSpan(), err);
          await this.o.settler.failed(d, d.event, d.attempt, err);
          return;
        }
        this.o.settler.applied(d);
      });
    }
  }
}

/** FNV-1a: a stable, evenly spread lane for a key, the same in every process. */
function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}
