import { randomBytes } from 'node:crypto';
import type { ChannelModel, ConfirmChannel, ConsumeMessage, MessagePropertyHeaders, Options } from 'amqplib';
import { context, ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { escapeLiteral, type QueryResult } from 'pg';
import type { Pool, PoolClient } from '@crm/db';
import type { Logger } from '@crm/logger';
import { amqpConsumed, amqpQueueReady, ChildCache, type Counter, type Metrics } from '@crm/metrics';
import { AckLedger } from './acks';
import { connectAmqp, reconnectDelay } from './amqp';
import { parseEnvelope, type EventEnvelope } from './envelope';
import { amqpUser, isSharedBrokerUser, publisherRefusal, REFUSED_REASON_HEADER, RefusedPublisherError, type PublisherCheck } from './publishers';
import { queueBindings } from './routing';
import { parseEventData } from './schemas';
import { declareDurableQueue, declareExchange, dlqName, retryQueueName } from './topology';
import { eventContexts, startEventSpan, TRACEPARENT_HEADER, validTraceparent, withEventTrace } from './trace-context';

export type EventHandler = (event: EventEnvelope, db?: PoolClient) => Promise<void>;
/**
 * Applies events in the order they were delivered; with a pool, inside one transaction on `db`. `prepared` is what
 * `batchPrepare` answered for these events (undefined without one).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BatchHandler<P = any> = (events: EventEnvelope[], db?: PoolClient, prepared?: P) => Promise<void>;
/**
 * Work for a batch done before its transaction opens: calls to other services, reads. A consumer's transaction
 * holds a connection and locks while it is open, so a slow service called inside it would hold them too (and time
 * out whole batches). It may run again for the same events (a batch retried or split, an event already processed):
 * it must not write anything that matters.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BatchPrepare<P = any> = (events: EventEnvelope[]) => Promise<P>;

/**
 * A per-event handler as a batch handler: the batch's events applied one after another, in delivery order, in the
 * batch's one transaction, each inside its own trace. A throw fails the batch, which is then applied event by event
 * (each in its own transaction), so only the event that throws again is retried or dead-lettered.
 */
export function eachEvent(handler: EventHandler): BatchHandler {
  return async (events, db) => {
    for (const event of events) await withEventTrace(event, () => handler(event, db));
  };
}

/**
 * The event families every message or contact change produces (issue #28 item 2). A consumer that commits per event
 * pays a transaction per event for them: 2.28 commits per message in automation alone, when measured. So a consumer
 * with a pool (one that commits) binding any of them must take batches; the constructor refuses otherwise.
 */
export const HIGH_VOLUME_PREFIXES = ['message.', 'conversation.', 'contact.', 'chatnet.', 'audit.recorded'] as const;
export const isHighVolume = (binding: string): boolean => HIGH_VOLUME_PREFIXES.some((p) => binding.startsWith(p));

export interface EventConsumerOptions {
  amqpUrl: string;
  exchange: string;
  /** Queue name; also the consumer's name in processed_events, so keep it stable per consumer. */
  queue: string;
  /**
   * Routing-key patterns (`contact.*`, `message.#`, ...). The queue is also bound to the narrower routing keys the
   * event schemas declare for the types they take (`contact.updated.lead_score` with `contact.updated`).
   */
  bindings: string[];
  /** Narrower routing keys (schemas' `routingKeys`) this queue is not bound to: events it would only drop. */
  excludeRoutingKeys?: string[];
  /** With `pool`: runs inside a transaction on `db`; throw to roll back and retry. Give this or `batchHandler`. */
  handler?: EventHandler;
  /** Batch mode (instead of `handler`): up to `batchSize` events applied in one transaction on `db`. */
  batchHandler?: BatchHandler;
  /** Batch mode: what to do for a batch before its transaction (see BatchPrepare); handed to batchHandler. */
  batchPrepare?: BatchPrepare;
  /** Most deliveries per batch (default 100); prefetch defaults to 2× this in batch mode. */
  batchSize?: number;
  /** A partial batch is flushed this long after its first delivery arrived (default 5 ms), so one message when idle is still fast. */
  batchFlushMs?: number;
  /**
   * Batch mode with `concurrency` > 1: events with the same key always go to the same lane, and a lane runs one
   * batch at a time, so events of one key (a conversation, a contact) are applied in delivery order while lanes
   * run in parallel. Without it batch mode runs one batch at a time, and a `concurrency` > 1 is refused.
   */
  batchKey?: (event: EventEnvelope) => string;
  logger: Logger;
  /** Enables exactly-once effects: the handler's transaction also records the event id. */
  pool?: Pool;
  prefetch?: number;
  /** Handler runs per event, including the first, before the message goes to `<queue>.dlq`. */
  maxAttempts?: number;
  /** Wait before retry n (1-based) is retryDelaysMs[n-1]; the last value repeats. */
  retryDelaysMs?: number[];
  /**
   * Per-instance fan-out (a gateway's sockets): a non-durable, exclusive, auto-delete queue named
   * `<queue>.<random>`, no idempotency, no retries. Events published while disconnected are not seen.
   */
  exclusive?: boolean;
  /** Handlers (batch mode: lanes, see batchKey) running at once. 1 (default) keeps the queue's order. */
  concurrency?: number;
  /** processed_events rows of this consumer are deleted after this long; duplicates arrive within minutes. */
  processedRetentionMs?: number;
  /**
   * Parse each event's data with its type's schema (schemas/, `eventSchemas[type][version]`): handlers get the parsed
   * data, and an event whose data does not fit its schema (or of an unknown version) can never be applied, so it goes
   * to `<queue>.dlq` at once with the reason (the fields) in its `x-crm-error` header. Types without a schema pass as
   * they are.
   */
  parseData?: boolean;
  /** Counts settled deliveries (`amqp_messages_consumed_total`) and reads the queue's depth on scrape (`amqp_queue_messages_ready`). */
  metrics?: Metrics;
  /**
   * AMQP_USER_PREFIX: each producer's broker user is this plus its service name. Every delivery's user_id must be the
   * user of one of its type's producers (the catalogue's `producers`) or this consumer's own; any other, or none, is
   * dead-lettered with the reason in `x-refused-reason` and never handled (publishers.ts).
   */
  amqpUserPrefix?: string;
}

/**
 * How a delivery left this consumer: applied (or a duplicate) and acked, sent to a retry queue, parked in the DLQ,
 * dropped, or refused (its publisher may not publish its type: parked in the DLQ, or dropped from an exclusive queue).
 */
type Outcome = 'ack' | 'retry' | 'dead' | 'dropped' | 'refused';

interface Delivery {
  msg: ConsumeMessage;
  channel: ConfirmChannel;
}

/** A delivery waiting in a lane for its batch. */
interface Parsed extends Delivery {
  event: EventEnvelope;
  attempt: number;
  arrivedAt: number;
}

/** Batch mode: deliveries of one key-range, applied one batch at a time in arrival order. */
interface Lane {
  pending: Parsed[];
  running: boolean;
  timer?: NodeJS.Timeout;
}

const ATTEMPT_HEADER = 'x-crm-attempt';
const ERROR_HEADER = 'x-crm-error';
/** Headers the broker adds when dead-lettering or redelivering; a republished copy starts clean. */
const BROKER_HEADERS = /^x-(death|first-death-|last-death-|delivery-count)/;

const PRUNE_PROCESSED = {
  name: 'crm_events_prune_processed',
  text: `DELETE FROM processed_events WHERE consumer = $1 AND processed_at < now() - $2 * interval '1 millisecond'`,
};

/**
 * Consumes events from a quorum queue bound to the exchange. Acks only after the handler (and its
 * transaction) finished; a failed handler is retried after a delay through `<queue>.retry.<n>` queues, and
 * after `maxAttempts` the message is parked in `<queue>.dlq`. amqplib does not reconnect by itself: on
 * connection loss this reconnects and re-declares everything; unacked messages come back and, with a pool,
 * processed_events makes sure none takes effect twice. With `batchHandler` it applies up to `batchSize`
 * deliveries per transaction and acks them together (see the package README, "Batch mode").
 */
export class EventConsumer {
  private readonly opts: EventConsumerOptions;
  /** The routing keys and patterns the queue is bound with (see queueBindings). */
  private readonly bindings: string[];
  private readonly log: Logger;
  private readonly prefetch: number;
  private readonly maxAttempts: number;
  private readonly retryDelaysMs: number[];
  private readonly concurrency: number;
  private readonly retentionMs: number;
  private readonly consumerLiteral: string;
  private readonly batchSize: number;
  private readonly batchFlushMs: number;
  private readonly lanes: Lane[] = [];
  private readonly acks = new AckLedger();
  private readonly settled?: ChildCache<Counter.Internal>;
  private readonly publishers: PublisherCheck;
  private stopCollecting?: () => void;

  private connection?: ChannelModel;
  private channel?: ConfirmChannel;
  private consumerTag?: string;
  /** The queue consumed from: `queue`, or the per-connection name of an exclusive queue. */
  private source?: string;
  private readonly backlog: Delivery[] = [];
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  private started = false;
  private stopping = false;
  private failures = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;

  constructor(opts: EventConsumerOptions) {
    if (opts.bindings.length === 0) throw new Error(`EventConsumer ${opts.queue}: no bindings`);
    if (!opts.handler === !opts.batchHandler) throw new Error(`EventConsumer ${opts.queue}: give either handler or batchHandler`);
    const busy = opts.handler && opts.pool ? opts.bindings.find(isHighVolume) : undefined;
    if (busy) throw new Error(`EventConsumer ${opts.queue}: ${busy} is a high-volume event; commit per batch (batchHandler, eachEvent), not per event`);
    this.opts = opts;
    this.bindings = queueBindings(opts.bindings, opts.excludeRoutingKeys);
    this.log = opts.logger;
    this.batchSize = Math.max(1, opts.batchSize ?? 100);
    this.batchFlushMs = Math.max(0, opts.batchFlushMs ?? 5);
    this.prefetch = opts.prefetch ?? (opts.batchHandler ? 2 * this.batchSize : 50);
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
    this.retryDelaysMs = opts.retryDelaysMs?.length ? opts.retryDelaysMs : [1_000, 5_000, 30_000, 120_000];
    this.concurrency = Math.max(1, opts.concurrency ?? 1);
    if (opts.batchHandler) {
      // Parallel batches without a key would apply two events of one conversation in either order.
      if (this.concurrency > 1 && !opts.batchKey) throw new Error(`EventConsumer ${opts.queue}: batch mode with concurrency > 1 needs batchKey`);
      for (let i = 0; i < this.concurrency; i++) this.lanes.push({ pending: [], running: false });
    }
    this.retentionMs = opts.processedRetentionMs ?? 7 * 24 * 3600_000;
    this.consumerLiteral = escapeLiteral(opts.queue);
    this.publishers = { ownUser: amqpUser(opts.amqpUrl), userPrefix: opts.amqpUserPrefix ?? '' };
    if (opts.metrics) {
      const consumed = amqpConsumed(opts.metrics);
      this.settled = new ChildCache((outcome: string) => consumed.labels(opts.queue, outcome));
    }
  }

  private count(outcome: Outcome, n = 1): void {
    this.settled?.get(outcome).inc(n);
  }

  /**
   * The consumer's lag: messages ready in its queue, asked of the broker on a channel of its own, opened for the
   * question, so a failed check (queue gone) can never close the channel deliveries arrive on.
   */
  private async readQueueDepth(): Promise<void> {
    const { connection, source } = this;
    if (!connection || !source) return;
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    try {
      const { messageCount } = await channel.checkQueue(source);
      amqpQueueReady(this.opts.metrics!).labels(this.opts.queue).set(messageCount);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  private get idempotent(): boolean {
    return this.opts.pool !== undefined && !this.opts.exclusive;
  }

  /** Retry queues needed: one per distinct delay that can actually be used before maxAttempts. */
  private get retryLevels(): number {
    return this.opts.exclusive ? 0 : Math.min(this.retryDelaysMs.length, this.maxAttempts - 1);
  }

  /** Declares the topology and starts consuming; fails when the broker is unreachable at start. */
  /** The consumer holds an open channel to RabbitMQ (false from a lost connection until it has reconnected). */
  get connected(): boolean {
    return this.channel !== undefined;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error(`EventConsumer ${this.opts.queue} already started`);
    this.started = true;
    this.stopping = false;
    try {
      await this.connect();
    } catch (err) {
      this.started = false;
      throw err;
    }
    if (this.opts.metrics) this.stopCollecting = this.opts.metrics.onCollect(() => this.readQueueDepth());
    if (this.idempotent) {
      const every = Math.min(3600_000, Math.max(1_000, this.retentionMs));
      this.pruneTimer = setInterval(() => void this.pruneProcessed(), every);
    }
    this.log.info({ queue: this.source, bindings: this.bindings }, 'event consumer started');
    noteSharedBrokerUser(this.log, this.publishers);
  }

  /** Stops taking deliveries, lets running handlers finish and ack, then closes. Unstarted ones are requeued. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.stopping = true;
    this.stopCollecting?.();
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pruneTimer);
    const { channel, consumerTag } = this;
    if (channel && consumerTag) await channel.cancel(consumerTag).catch(() => undefined);
    // Prefetched but not started: closing the channel hands them back to the broker for another consumer.
    this.backlog.length = 0;
    for (const lane of this.lanes) {
      clearTimeout(lane.timer);
      lane.timer = undefined;
      lane.pending.length = 0;
    }
    await this.idle();
    const connection = this.connection;
    this.connection = this.channel = this.consumerTag = undefined;
    // Channel first: its close-ok comes after the broker processed our acks, closing the connection at once
    // can let the queue see the consumer gone before the acks and redeliver acked messages.
    await channel?.close().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    this.started = false;
    this.log.info({ queue: this.opts.queue }, 'event consumer stopped');
  }

  private idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async connect(): Promise<void> {
    const { queue, exchange } = this.opts;
    const connection = await connectAmqp(this.opts.amqpUrl, `event-consumer ${queue}`);
    connection.on('error', (err) => this.log.warn({ err, queue }, 'event consumer: RabbitMQ connection error'));
    let channel: ConfirmChannel;
    try {
      // A confirm channel: a retry or dead-letter copy must be stored before the original is acked.
      channel = await connection.createConfirmChannel();
      channel.on('error', (err) => this.log.warn({ err, queue }, 'event consumer: RabbitMQ channel error'));
      await declareExchange(channel, exchange);
      let source = queue;
      if (this.opts.exclusive) {
        source = `${queue}.${randomBytes(4).toString('hex')}`;
        await channel.assertQueue(source, { durable: false, exclusive: true, autoDelete: true });
      } else {
        await declareDurableQueue(channel, queue, this.retryLevels);
      }
      for (const pattern of this.bindings) await channel.bindQueue(source, exchange, pattern);
      await channel.prefetch(this.prefetch);
      if (this.stopping) throw new Error('EventConsumer stopping');
      this.connection = connection;
      this.channel = channel;
      this.source = source;
      const ch = channel;
      this.consumerTag = (await channel.consume(source, (msg) => this.onMessage(ch, msg), { noAck: false })).consumerTag;
    } catch (err) {
      if (this.connection === connection) this.connection = this.channel = undefined;
      await connection.close().catch(() => undefined);
      throw err;
    }
    channel.on('close', () => {
      if (this.channel === channel) connection.close().catch(() => undefined);
    });
    connection.on('close', () => this.onConnectionLost(connection));
  }

  private onConnectionLost(connection: ChannelModel): void {
    if (this.connection !== connection) return;
    const lost = this.channel;
    this.connection = this.channel = this.consumerTag = undefined;
    // Their acks can no longer reach the broker, which redelivers them; running them now would be wasted.
    for (let i = this.backlog.length - 1; i >= 0; i--) if (this.backlog[i].channel === lost) this.backlog.splice(i, 1);
    for (const lane of this.lanes) lane.pending = lane.pending.filter((d) => d.channel !== lost);
    if (this.stopping) return;
    this.log.warn({ queue: this.opts.queue }, 'event consumer: RabbitMQ connection lost; reconnecting');
    this.reconnectLater();
  }

  private reconnectLater(): void {
    this.reconnectTimer = setTimeout(() => {
      this.connect().then(
        () => {
          this.failures = 0;
          this.log.info({ queue: this.opts.queue }, 'event consumer: reconnected');
        },
        (err) => {
          if (this.stopping) return;
          this.log.warn({ err, queue: this.opts.queue }, 'event consumer: reconnect failed');
          this.reconnectLater();
        },
      );
    }, reconnectDelay(this.failures++));
  }

  private onMessage(channel: ConfirmChannel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // The broker cancelled us (queue deleted): start over, which declares it again.
      this.log.warn({ queue: this.opts.queue }, 'event consumer: consumer cancelled by broker');
      if (this.channel === channel && !this.stopping) this.connection?.close().catch(() => undefined);
      return;
    }
    if (this.opts.batchHandler) this.collect(channel, msg);
    else {
      this.backlog.push({ msg, channel });
      this.pump();
    }
  }

  private pump(): void {
    while (!this.stopping && this.active < this.concurrency && this.backlog.length > 0) {
      const delivery = this.backlog.shift()!;
      this.active++;
      void this.process(delivery).finally(() => {
        this.active--;
        this.pump();
        if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      });
    }
  }

  private async process({ msg, channel }: Delivery): Promise<void> {
    const attempt = Number(msg.properties.headers?.[ATTEMPT_HEADER] ?? 1);
    let event: EventEnvelope;
    try {
      event = this.decode(msg);
    } catch (err) {
      await this.malformed({ msg, channel }, attempt, err);
      return;
    }
    const { span, ctx } = this.traceOf(event, msg);
    // Inside the event's span: the handler's work and what is logged about its outcome carry its trace id.
    await context.with(ctx, async () => {
      try {
        await this.run(event, this.opts.handler!);
      } catch (err) {
        failSpan(span, err);
        await this.failed({ msg, channel }, event, attempt, err);
        return;
      } finally {
        span.end();
      }
      this.ack(channel, msg);
      this.count('ack');
    });
  }

  /** The event's consumer span, child of the producer's (the message's `traceparent`), and its context. */
  private traceOf(event: EventEnvelope, msg: ConsumeMessage): { span: Span; ctx: Context } {
    const traced = startEventSpan(event, validTraceparent(msg.properties.headers?.[TRACEPARENT_HEADER]), this.opts.queue);
    eventContexts.set(event, traced.ctx);
    return traced;
  }

  /**
   * The envelope, its data parsed by its schema with `parseData`; throws for a body no retry can fix, and
   * RefusedPublisherError for an event its publisher may not publish.
   */
  private decode(msg: ConsumeMessage): EventEnvelope {
    const event = parseEnvelope(msg.content);
    const refusal = publisherRefusal({ type: event.type, routingKey: msg.fields.routingKey, userId: msg.properties.userId }, this.publishers);
    if (refusal) throw new RefusedPublisherError(refusal);
    if (this.opts.parseData) event.data = parseEventData(event.type, event.version ?? 1, event.data);
    return event;
  }

  /** Not an envelope, or data that does not fit its schema: it can never succeed, so it goes to the DLQ at once, alone. */
  private async malformed({ msg, channel }: Delivery, attempt: number, err: unknown): Promise<void> {
    const { queue } = this.opts;
    if (err instanceof RefusedPublisherError) return this.refused({ msg, channel }, attempt, err);
    this.log.error({ err, queue, messageId: msg.properties.messageId, routingKey: msg.fields.routingKey }, 'event consumer: malformed message; dead-lettering');
    if (this.opts.exclusive) {
      this.ack(channel, msg);
      this.count('dropped');
    } else if (await this.forward(channel, msg, dlqName(queue), attempt, err)) this.count('dead');
  }

  /**
   * A publisher that may not publish the event's type (a compromised service speaking for another): never handled, parked
   * in the DLQ with the reason (or dropped from an exclusive queue), and counted, so an operator sees it.
   */
  private async refused({ msg, channel }: Delivery, attempt: number, err: RefusedPublisherError): Promise<void> {
    const { queue } = this.opts;
    this.log.warn({ queue, reason: err.message, messageId: msg.properties.messageId, routingKey: msg.fields.routingKey }, 'event consumer: publisher refused; dead-lettering');
    if (this.opts.exclusive) {
      this.ack(channel, msg);
      this.count('refused');
    } else if (await this.forward(channel, msg, dlqName(queue), attempt, err, undefined, { [REFUSED_REASON_HEADER]: err.message })) this.count('refused');
  }

  /** Counts work that stop() must wait for. */
  private track(work: Promise<void>): Promise<void> {
    this.active++;
    return work.finally(() => {
      this.active--;
      if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  // ---- batch mode -------------------------------------------------------------------------------------

  /** Batch mode: parse on arrival (a malformed message leaves alone), then queue in the event's lane. */
  private collect(channel: ConfirmChannel, msg: ConsumeMessage): void {
    this.acks.received(channel, msg);
    const attempt = Number(msg.properties.headers?.[ATTEMPT_HEADER] ?? 1);
    let event: EventEnvelope;
    try {
      event = this.decode(msg);
    } catch (err) {
      void this.track(this.malformed({ msg, channel }, attempt, err));
      return;
    }
    const lane = this.lanes[this.lanes.length === 1 ? 0 : this.laneFor(event)];
    lane.pending.push({ msg, channel, event, attempt, arrivedAt: performance.now() });
    this.schedule(lane);
  }

  private laneFor(event: EventEnvelope): number {
    try {
      return laneOf(this.opts.batchKey!(event), this.lanes.length);
    } catch (err) {
      // A key function that throws on odd data must not break the channel's delivery callback; such events
      // all share lane 0, so they still keep their order among themselves.
      this.log.warn({ err, queue: this.opts.queue, eventId: event.id }, 'event consumer: batchKey failed; using lane 0');
      return 0;
    }
  }

  /** Flush when the lane is free and its batch is full or its oldest delivery has waited batchFlushMs. */
  private schedule(lane: Lane): void {
    if (lane.running || this.stopping || lane.pending.length === 0) return;
    const wait = lane.pending.length >= this.batchSize ? 0 : lane.pending[0].arrivedAt + this.batchFlushMs - performance.now();
    if (wait > 0) {
      lane.timer ??= setTimeout(() => {
        lane.timer = undefined;
        if (!lane.running && !this.stopping && lane.pending.length > 0) this.flush(lane);
      }, wait);
      return;
    }
    this.flush(lane);
  }

  private flush(lane: Lane): void {
    clearTimeout(lane.timer);
    lane.timer = undefined;
    const batch = lane.pending.splice(0, this.batchSize);
    lane.running = true;
    void this.track(
      this.runBatch(batch).finally(() => {
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
  private async runBatch(batch: Parsed[]): Promise<void> {
    const spans = batch.map((d) => this.traceOf(d.event, d.msg));
    const traceIds = new Set(spans.map((t) => trace.getSpan(t.ctx)!.spanContext().traceId));
    const shared = traceIds.size === 1 ? spans[0].ctx : ROOT_CONTEXT;
    try {
      await context.with(shared, () => this.settleBatch(batch));
    } finally {
      for (const t of spans) t.span.end();
    }
  }

  private async settleBatch(batch: Parsed[]): Promise<void> {
    const { queue } = this.opts;
    try {
      if (this.idempotent) await this.applyBatch(batch);
      else {
        const events = batch.map((d) => d.event);
        await this.opts.batchHandler!(events, undefined, await this.opts.batchPrepare?.(events));
      }
    } catch (err) {
      if (batch.length === 1) {
        failSpan(trace.getActiveSpan(), err);
        return this.failed(batch[0], batch[0].event, batch[0].attempt, err);
      }
      // One bad event must not hold back the others: each gets its own transaction, and only the ones that
      // fail again take the retry / dead-letter route.
      this.log.warn({ err, queue, size: batch.length }, 'event consumer: batch failed; applying its events one by one');
      await this.oneByOne(batch);
      return;
    }
    this.ackBatch(batch);
    this.count('ack', batch.length);
  }

  /**
   * One transaction: claim every event id of the batch in one statement (ids already processed by this
   * consumer come back missing and are only acked), apply the rest in delivery order, commit once.
   */
  private async applyBatch(batch: Parsed[]): Promise<void> {
    const { queue } = this.opts;
    // Before the transaction and its connection: nothing it waits for holds either.
    const prepared = await this.opts.batchPrepare?.(batch.map((d) => d.event));
    const client = await this.opts.pool!.connect();
    let broken = false;
    try {
      // BEGIN and the claim in one round trip (no parameters in a multi-statement query: the ids are
      // validated UUIDs and the consumer name is escaped). A redelivered copy of an event can sit in the same
      // batch as the original; ON CONFLICT DO NOTHING also skips that second row.
      const ids = [...new Set(batch.map((d) => d.event.id.toLowerCase()))];
      const [, claimed] = (await client.query(
        `BEGIN; INSERT INTO processed_events (event_id, consumer) SELECT unnest('{${ids.join(',')}}'::uuid[]), ${this.consumerLiteral} ON CONFLICT DO NOTHING RETURNING event_id`,
      )) as unknown as QueryResult<{ event_id: string }>[];
      const fresh = new Set(claimed.rows.map((r) => r.event_id));
      const events: EventEnvelope[] = [];
      for (const d of batch) if (fresh.delete(d.event.id.toLowerCase())) events.push(d.event);
      if (events.length < batch.length) {
        const kept = new Set(events);
        const eventIds = batch.filter((d) => !kept.has(d.event)).map((d) => d.event.id);
        this.log.debug({ queue, skipped: eventIds.length, eventIds }, 'event consumer: already processed; skipping');
      }
      if (events.length > 0) await this.opts.batchHandler!(events, client, prepared);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /** Each event in its own transaction, in delivery order; failures go the per-event retry / DLQ route. */
  private async oneByOne(batch: Parsed[]): Promise<void> {
    for (const d of batch) {
      await withEventTrace(d.event, async () => {
        try {
          const prepared = await this.opts.batchPrepare?.([d.event]);
          await this.run(d.event, (event, db) => this.opts.batchHandler!([event], db, prepared));
        } catch (err) {
          failSpan(trace.getActiveSpan(), err);
          await this.failed(d, d.event, d.attempt, err);
          return;
        }
        this.ack(d.channel, d.msg);
        this.count('ack');
      });
    }
  }

  /** After the commit: one ack frame per channel when that acks exactly this batch (see AckLedger). */
  private ackBatch(batch: Parsed[]): void {
    const byChannel = new Map<ConfirmChannel, ConsumeMessage[]>();
    for (const d of batch) {
      const list = byChannel.get(d.channel);
      if (list) list.push(d.msg);
      else byChannel.set(d.channel, [d.msg]);
    }
    for (const [channel, msgs] of byChannel) {
      try {
        this.acks.ackAll(channel, msgs);
      } catch (err) {
        // The channel is gone; the broker redelivers the batch and processed_events absorbs the repeat.
        this.log.warn({ err, queue: this.opts.queue }, 'event consumer: ack failed (channel closed)');
      }
    }
  }

  /** A handler failed for good on this delivery: retry it later, park it in the DLQ, or (exclusive) drop it. */
  private async failed({ msg, channel }: Delivery, event: EventEnvelope, attempt: number, err: unknown): Promise<void> {
    const { queue } = this.opts;
    const ctx = { queue, eventId: event.id, eventType: event.type, attempt };
    if (this.opts.exclusive) {
      // Fan-out to live sockets: a late retry is worth nothing, and there is no durable queue to park it in.
      this.log.error({ err, ...ctx }, 'event consumer: handler failed; dropping (exclusive queue)');
      this.ack(channel, msg);
      this.count('dropped');
      return;
    }
    if (attempt >= this.maxAttempts) {
      this.log.error({ err, ...ctx }, 'event consumer: handler failed; attempts exhausted, dead-lettering');
      if (await this.forward(channel, msg, dlqName(queue), attempt, err)) this.count('dead');
      return;
    }
    const level = Math.min(attempt, this.retryLevels);
    const delay = this.retryDelaysMs[level - 1];
    this.log.warn({ err, ...ctx, retryInMs: delay }, 'event consumer: handler failed; retrying later');
    if (await this.forward(channel, msg, retryQueueName(queue, level), attempt + 1, err, delay)) this.count('retry');
  }

  /** Run the handler; with a pool, in a transaction that first claims the event id for this consumer. */
  private async run(event: EventEnvelope, handler: EventHandler): Promise<void> {
    const { pool, queue } = this.opts;
    if (!pool || !this.idempotent) return handler(event);
    const client = await pool.connect();
    let broken = false;
    try {
      // BEGIN and the claim in one round trip (a multi-statement query cannot take parameters; the id is a
      // validated UUID and the name is escaped). Blocks while another consumer's transaction holds the same
      // id, then sees its outcome.
      const [, claimed] = (await client.query(
        `BEGIN; INSERT INTO processed_events (event_id, consumer) VALUES ('${event.id}', ${this.consumerLiteral}) ON CONFLICT DO NOTHING`,
      )) as unknown as QueryResult[];
      if (claimed.rowCount === 0) {
        await client.query('ROLLBACK');
        this.log.debug({ queue, eventId: event.id, eventType: event.type }, 'event consumer: already processed; skipping');
        return;
      }
      await handler(event, client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  private ack(channel: ConfirmChannel, msg: ConsumeMessage): void {
    try {
      this.acks.ack(channel, msg);
    } catch (err) {
      // The channel is gone; the broker redelivers the message and processed_events absorbs the repeat.
      this.log.warn({ err, queue: this.opts.queue }, 'event consumer: ack failed (channel closed)');
    }
  }

  /**
   * Publish a copy to a retry or dead-letter queue, wait for the broker to confirm it, then ack the
   * original. Should either fail, the original is redelivered instead: nothing is lost. True when forwarded.
   */
  private async forward(
    channel: ConfirmChannel,
    msg: ConsumeMessage,
    target: string,
    attempt: number,
    err: unknown,
    delayMs?: number,
    extraHeaders?: MessagePropertyHeaders,
  ): Promise<boolean> {
    const headers: MessagePropertyHeaders = {};
    for (const [k, v] of Object.entries(msg.properties.headers ?? {})) if (!BROKER_HEADERS.test(k)) headers[k] = v;
    headers[ATTEMPT_HEADER] = attempt;
    headers[ERROR_HEADER] = String((err as Error)?.message ?? err).slice(0, 1000);
    Object.assign(headers, extraHeaders);
    const options: Options.Publish = {
      persistent: true,
      // The copy is this consumer's own publish: it comes back from a retry queue as its own user's (publishers.ts).
      userId: this.publishers.ownUser,
      headers,
      contentType: msg.properties.contentType,
      messageId: msg.properties.messageId,
      type: msg.properties.type,
      timestamp: msg.properties.timestamp,
      expiration: delayMs === undefined ? undefined : String(delayMs),
    };
    try {
      await new Promise<void>((resolve, reject) => {
        try {
          channel.publish('', target, msg.content, options, (e) => (e ? reject(e instanceof Error ? e : new Error('nacked by broker')) : resolve()));
        } catch (e) {
          reject(e);
        }
      });
    } catch (publishErr) {
      this.log.warn({ err: publishErr, queue: this.opts.queue, target }, 'event consumer: could not forward message; it will be redelivered');
      return false;
    }
    this.ack(channel, msg);
    return true;
  }

  private async pruneProcessed(): Promise<void> {
    try {
      await this.opts.pool!.query({ ...PRUNE_PROCESSED, values: [this.opts.queue, this.retentionMs] });
    } catch (err) {
      this.log.warn({ err, queue: this.opts.queue }, 'event consumer: pruning processed_events failed');
    }
  }
}

/** Logged once per process: see publisherRefusal. */
let sharedUserNoted = false;

function noteSharedBrokerUser(log: Logger, check: PublisherCheck): void {
  if (sharedUserNoted || !isSharedBrokerUser(check.ownUser, check.userPrefix)) return;
  sharedUserNoted = true;
  log.warn(
    { amqpUser: check.ownUser, amqpUserPrefix: check.userPrefix },
    "event consumer: RabbitMQ user is no service's own, so every service shares it: producer checks cannot hold with one shared broker user (events it publishes are accepted)",
  );
}

function failSpan(span: Span | undefined, err: unknown): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err).slice(0, 200) });
}

/** FNV-1a: a stable, evenly spread lane for a key, the same in every process. */
function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}
