import { randomBytes } from 'node:crypto';
import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { context } from '@opentelemetry/api';
import type { Logger } from '@crm/logger';
import { amqpQueueReady, type Metrics } from '@crm/metrics';
import { connectAmqp, reconnectDelay } from './amqp';
import { BatchLanes, type BatchApply } from './batch-lanes';
import { checkOptions, type EventConsumerOptions } from './consumer-options';
import { DeliveryReader, type Delivery } from './delivery';
import type { EventEnvelope } from './envelope';
import { ProcessedEvents } from './processed-events';
import { QueueShares } from './queue-shares';
import { amqpUser, isSharedBrokerUser, type PublisherCheck } from './publishers';
import { queueBindings } from './routing';
import { attemptOf, DeliverySettler } from './settle';
import { declareDurableQueue, declareExchange } from './topology';
import { failSpan } from './trace-context';

/** Per-event mode: one event applied (with a pool, in its own transaction that claims its id). */
type ApplyEvent = (event: EventEnvelope) => Promise<void>;

/** How deliveries are handled: collected into batches by lanes, or one at a time. */
type Handling = { kind: 'batches'; lanes: BatchLanes } | { kind: 'events'; apply: ApplyEvent };

const DEFAULT_PROCESSED_RETENTION_MS = 7 * 24 * 3600_000;

/**
 * How long a partial batch gathers by default. Under a steady stream every batch costs its checkout, claim, commit and
 * ack frame whatever its size, so a short wait pays for itself: bench/realtime at 200 msg/s, every consumer at 25 ms
 * instead of 5 (one run each, same tree): 4.33 against 5.22 ms of CPU per message along the whole path (RabbitMQ 1.18
 * against 1.48), delivery p50 55 against 41 ms, p99 85 against 79 (bench/RESULTS.md, realtime). A lone event waits
 * this long too: 25 ms a hop is below what a person notices.
 */
const DEFAULT_BATCH_FLUSH_MS = 25;

/**
 * Consumes events from a quorum queue bound to the exchange. Acks only after the handler (and its
 * transaction) finished; a failed handler is retried after a delay through `<queue>.retry.<n>` queues, and
 * after `maxAttempts` the message is parked in `<queue>.dlq` (settle.ts). amqplib does not reconnect by itself: on
 * connection loss this reconnects and re-declares everything; unacked messages come back and, with a pool,
 * processed_events makes sure none takes effect twice (processed-events.ts). With `batchHandler` it applies up to
 * `batchSize` deliveries per transaction and acks them together (batch-lanes.ts; the package README, "Batch mode").
 */
export class EventConsumer {
  private readonly opts: EventConsumerOptions;
  /** The routing keys and patterns the queue is bound with (see queueBindings). */
  private readonly bindings: string[];
  private readonly log: Logger;
  private readonly prefetch: number;
  private readonly concurrency: number;
  private readonly publishers: PublisherCheck;
  private readonly reader: DeliveryReader;
  private readonly settler: DeliverySettler;
  /** With a pool: the idempotency rows every transaction writes (one per share with shares), pruned while running. */
  private readonly processed: ProcessedEvents[] = [];
  private readonly handling: Handling;
  private stopCollecting?: () => void;

  private connection?: ChannelModel;
  private channel?: ConfirmChannel;
  private consumerTag?: string;
  /** The queue consumed from: `queue`, or the per-connection name of an exclusive queue. */
  private source?: string;
  /** Per-event mode: deliveries waiting for a free handler slot. */
  private readonly backlog: Delivery[] = [];
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  private started = false;
  private stopping = false;
  private failures = 0;
  private reconnectTimer?: NodeJS.Timeout;
  /** Draining: the queue is gone (deleted once empty), so there is nothing left to consume. */
  private drained = false;

  constructor(opts: EventConsumerOptions) {
    checkOptions(opts);
    this.opts = opts;
    this.bindings = queueBindings(opts.bindings, opts.excludeRoutingKeys);
    this.log = opts.logger;
    this.concurrency = Math.max(1, opts.concurrency ?? 1);
    this.publishers = { ownUser: amqpUser(opts.amqpUrl), userPrefix: opts.amqpUserPrefix ?? '' };
    this.reader = new DeliveryReader(opts.queue, this.publishers, opts.parseData ?? false, opts.stamps);
    this.settler = new DeliverySettler({
      queue: opts.queue,
      log: this.log,
      ownUser: this.publishers.ownUser,
      exclusive: opts.exclusive ?? false,
      maxAttempts: opts.maxAttempts,
      retryDelaysMs: opts.retryDelaysMs,
      metrics: opts.metrics,
    });
    const batchSize = Math.max(1, opts.batchSize ?? 100);
    this.prefetch = opts.prefetch ?? (opts.batchHandler ? 2 * batchSize : 50);
    const inLanes = (apply: BatchApply): Handling => ({
      kind: 'batches',
      lanes: new BatchLanes({
        queue: opts.queue,
        log: this.log,
        lanes: this.concurrency,
        size: batchSize,
        flushMs: Math.max(0, opts.batchFlushMs ?? DEFAULT_BATCH_FLUSH_MS),
        key: opts.batchKey,
        apply,
        reader: this.reader,
        settler: this.settler,
        track: (work) => this.track(work),
        stopping: () => this.stopping,
      }),
    });

    const retentionMs = opts.processedRetentionMs ?? DEFAULT_PROCESSED_RETENTION_MS;
    if (opts.pool && opts.shares) {
      const shares = new QueueShares({ pool: opts.pool, queue: opts.queue, log: this.log, shares: opts.shares, metrics: opts.metrics });
      for (const name of shares.names) this.processed.push(new ProcessedEvents(opts.pool, name, retentionMs, this.log));
      this.handling = inLanes(shares);
    } else if (opts.pool) {
      // Every handler call in a transaction that first claims its events' ids for this consumer.
      const processed = new ProcessedEvents(opts.pool, opts.queue, retentionMs, this.log);
      this.processed.push(processed);
      if (opts.batchHandler) {
        const { batchHandler, batchPrepare } = opts;
        this.handling = inLanes({
          // The preparation before the transaction and its connection: nothing it waits for holds either.
          all: async (events) => {
            const prepared = await batchPrepare?.(events);
            await processed.batch(events, (fresh, db) => batchHandler(fresh, db, prepared));
          },
          one: async (event) => {
            const prepared = await batchPrepare?.([event]);
            await processed.once(event, (db) => batchHandler([event], db, prepared));
          },
        });
      } else {
        const { handler } = opts;
        this.handling = { kind: 'events', apply: (event) => processed.once(event, (db) => handler(event, db)) };
      }
    } else if (opts.batchHandler) {
      const { batchHandler, batchPrepare } = opts;
      const all = async (events: EventEnvelope[]) => batchHandler(events, await batchPrepare?.(events));
      this.handling = inLanes({ all, one: (event) => all([event]) });
    } else {
      this.handling = { kind: 'events', apply: opts.handler };
    }
  }

  /**
   * The consumer's lag: messages ready in its queue, asked of the broker on a channel of its own, opened for the
   * question, so a failed check (queue gone) can never close the channel deliveries arrive on.
   */
  private async readQueueDepth(metrics: Metrics): Promise<void> {
    const { connection, source } = this;
    if (!connection || !source) return;
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    try {
      const { messageCount } = await channel.checkQueue(source);
      amqpQueueReady(metrics).labels(this.opts.queue).set(messageCount);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /** The consumer holds an open channel to RabbitMQ (false from a lost connection until it has reconnected). */
  get connected(): boolean {
    return this.channel !== undefined || this.drained;
  }

  /** Declares the topology and starts consuming; fails when the broker is unreachable at start. */
  async start(): Promise<void> {
    if (this.started) throw new Error(`EventConsumer ${this.opts.queue} already started`);
    this.started = true;
    this.stopping = false;
    try {
      await this.connect();
    } catch (err) {
      if (err instanceof QueueGoneError) return this.noteDrained();
      this.started = false;
      throw err;
    }
    const { metrics } = this.opts;
    if (metrics) this.stopCollecting = metrics.onCollect(() => this.readQueueDepth(metrics));
    for (const p of this.processed) p.startPruning();
    this.log.info({ queue: this.source, bindings: this.bindings }, 'event consumer started');
    noteSharedBrokerUser(this.log, this.publishers);
  }

  /** Stops taking deliveries, lets running handlers finish and ack, then closes. Unstarted ones are requeued. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.stopping = true;
    this.stopCollecting?.();
    clearTimeout(this.reconnectTimer);
    for (const p of this.processed) p.stopPruning();
    const { channel, consumerTag } = this;
    if (channel && consumerTag) await channel.cancel(consumerTag).catch(() => undefined);
    // Prefetched but not started: closing the channel hands them back to the broker for another consumer.
    this.backlog.length = 0;
    if (this.handling.kind === 'batches') this.handling.lanes.clear();
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
        // Declaring it would create a retired queue again after it was deleted.
        if (this.opts.draining && !(await queueExists(connection, queue))) throw new QueueGoneError(queue);
        // Its retry queues too: a retry copy published to one that is missing would be dropped by the broker.
        await declareDurableQueue(channel, queue, this.settler.retryLevels);
      }
      for (const pattern of this.bindings) {
        // Unbound at every connect: an instance of the previous version still running binds it again when it reconnects.
        if (this.opts.draining) await channel.unbindQueue(source, exchange, pattern);
        else await channel.bindQueue(source, exchange, pattern);
      }
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

  private noteDrained(): void {
    this.drained = true;
    this.log.info({ queue: this.opts.queue }, 'event consumer: retired queue is gone; nothing left to drain');
  }

  private onConnectionLost(connection: ChannelModel): void {
    if (this.connection !== connection) return;
    const lost = this.channel;
    this.connection = this.channel = this.consumerTag = undefined;
    // Their acks can no longer reach the broker, which redelivers them; running them now would be wasted.
    for (let i = this.backlog.length - 1; i >= 0; i--) if (this.backlog[i].channel === lost) this.backlog.splice(i, 1);
    if (lost && this.handling.kind === 'batches') this.handling.lanes.forget(lost);
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
          if (err instanceof QueueGoneError) return this.noteDrained();
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
    const { handling } = this;
    if (handling.kind === 'batches') handling.lanes.collect(channel, msg);
    else {
      this.backlog.push({ msg, channel });
      this.pump(handling.apply);
    }
  }

  private pump(apply: ApplyEvent): void {
    while (!this.stopping && this.active < this.concurrency) {
      const delivery = this.backlog.shift();
      if (!delivery) return;
      this.active++;
      void this.process(delivery, apply).finally(() => {
        this.active--;
        this.pump(apply);
        if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      });
    }
  }

  private async process(delivery: Delivery, apply: ApplyEvent): Promise<void> {
    const attempt = attemptOf(delivery.msg);
    let event: EventEnvelope;
    try {
      event = this.reader.decode(delivery.msg);
    } catch (err) {
      await this.settler.malformed(delivery, attempt, err);
      return;
    }
    const { span, ctx } = this.reader.trace(event, delivery.msg);
    // Inside the event's span: the handler's work and what is logged about its outcome carry its trace id.
    await context.with(ctx, async () => {
      try {
        await apply(event);
      } catch (err) {
        failSpan(span, err);
        await this.settler.failed(delivery, event, attempt, err);
        return;
      } finally {
        span.end();
      }
      this.settler.applied(delivery);
    });
  }

  /** Counts work that stop() must wait for. */
  private track(work: Promise<void>): Promise<void> {
    this.active++;
    return work.finally(() => {
      this.active--;
      if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }
}

/** Draining: the retired queue does not exist (any more). */
class QueueGoneError extends Error {
  constructor(queue: string) {
    super(`queue ${queue} does not exist`);
  }
}

/** Asked on a channel of its own: a missing queue closes the channel it is asked on. */
async function queueExists(connection: ChannelModel, queue: string): Promise<boolean> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  try {
    await channel.checkQueue(queue);
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw err;
  } finally {
    await channel.close().catch(() => undefined);
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
