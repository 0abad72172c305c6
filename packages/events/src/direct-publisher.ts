import type { ChannelModel, ConfirmChannel } from 'amqplib';
import type { Logger } from '@crm/logger';
import { connectAmqp, reconnectDelay } from './amqp';
import { eventMessage, publishConfirmed } from './message';
import { eventToSend, type NewEvent } from './outbox';
import { amqpUser } from './publishers';
import type { EventStamper } from './stamps';
import { declareExchange } from './topology';

export interface DirectPublisherOptions {
  amqpUrl: string;
  exchange: string;
  logger: Logger;
  /** A batch not confirmed within this fails (and its connection is dropped); also the bound on connecting. */
  confirmTimeoutMs: number;
  /** Stamps every event as the outbox relay does (stamps.ts): the message is the same either way. */
  stamps?: EventStamper;
}

/**
 * Publishes events straight to the exchange on a confirm channel, without an outbox row: for a producer whose
 * source replays what a crash before the confirm loses (the chat network's catch-up), and which keeps its outbox
 * for when this fails. Each message is the one the outbox relay would send for the same event (eventToSend,
 * eventMessage): same envelope, properties, user_id and trace context.
 *
 * It never waits for the broker on a caller's behalf: while it has no usable channel (not yet connected, the
 * connection lost or blocked by a resource alarm) publish fails at once, and it reconnects in the background.
 */
export class DirectPublisher {
  private readonly userId: string;
  private connection?: ChannelModel;
  private channel?: ConfirmChannel;
  private blocked = false;
  private stopping = false;
  private failures = 0;
  private retryTimer?: NodeJS.Timeout;
  private connecting?: Promise<void>;

  constructor(private readonly o: DirectPublisherOptions) {
    this.userId = amqpUser(o.amqpUrl);
  }

  /** A channel is open and the broker has not blocked the connection: a publish may be confirmed. */
  get connected(): boolean {
    return this.channel !== undefined && !this.blocked;
  }

  /** Connects (in the background when the broker is not there: start-up never waits for it). */
  async start(): Promise<void> {
    this.stopping = false;
    this.connect();
    await this.connecting;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.retryTimer);
    await this.connecting;
    const connection = this.connection;
    this.connection = this.channel = undefined;
    await connection?.close().catch(() => undefined);
  }

  /**
   * Publish the events as one window (all sent, confirms awaited together); resolves once the broker confirmed every
   * one. Rejects when any is nacked or not confirmed within confirmTimeoutMs, or when there is no usable channel: then
   * some may still have been delivered, so the caller's fallback must carry the same ids (consumers de-duplicate).
   */
  async publish(events: Array<NewEvent & { id: string }>): Promise<void> {
    const prepared = events.map((e) => eventToSend(e));
    const { channel, connection } = this;
    if (!channel || !connection || this.blocked) throw new Error('direct publisher: no usable RabbitMQ channel');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Late confirms must not count, and a channel with messages stuck in it is no use: start over.
        this.drop(connection, 'no publisher confirms in time');
        reject(new Error(`direct publisher: no confirms within ${this.o.confirmTimeoutMs} ms`));
      }, this.o.confirmTimeoutMs);
    });
    const confirms = Promise.all(
      prepared.map(({ event, data }) =>
        publishConfirmed(
          channel,
          this.o.exchange,
          eventMessage(event, this.userId, () => data, this.o.stamps),
        ),
      ),
    );
    // A window that failed on its own leaves the other promise pending: keep it from becoming an unhandled rejection.
    confirms.catch(() => undefined);
    try {
      await Promise.race([confirms, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private connect(): void {
    if (this.connecting || this.stopping) return;
    this.connecting = this.open()
      .then(() => {
        this.failures = 0;
      })
      .catch((err) => {
        this.o.logger.warn({ err, exchange: this.o.exchange }, 'direct publisher: connecting to RabbitMQ failed; will retry');
        this.retryLater();
      })
      .finally(() => (this.connecting = undefined));
  }

  private retryLater(): void {
    if (this.retryTimer || this.stopping) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect();
    }, reconnectDelay(this.failures++));
  }

  private drop(connection: ChannelModel, reason: string): void {
    if (this.connection !== connection) return;
    this.o.logger.warn({ exchange: this.o.exchange, reason }, 'direct publisher: dropping the RabbitMQ connection');
    // Not awaited: a blocked connection closes at once in amqplib, a dead one may never answer the close.
    connection.close().catch(() => undefined);
    this.forget(connection);
  }

  /** The connection is gone (or going): nothing is published on it any more, and a new one is made. */
  private forget(connection: ChannelModel): void {
    if (this.connection !== connection) return;
    this.connection = this.channel = undefined;
    this.blocked = false;
    if (!this.stopping) this.retryLater();
  }

  private async open(): Promise<void> {
    const connection = await connectAmqp(this.o.amqpUrl, `direct-publisher ${this.o.exchange}`, this.o.confirmTimeoutMs);
    connection.on('error', (err) => this.o.logger.warn({ err, exchange: this.o.exchange }, 'direct publisher: RabbitMQ connection error'));
    let channel: ConfirmChannel;
    try {
      channel = await connection.createConfirmChannel();
      channel.on('error', (err) => this.o.logger.warn({ err, exchange: this.o.exchange }, 'direct publisher: RabbitMQ channel error'));
      // Declared on every connection: the exchange may be gone after a broker reset.
      await declareExchange(channel, this.o.exchange);
    } catch (err) {
      await connection.close().catch(() => undefined);
      throw err;
    }
    if (this.stopping) {
      await connection.close().catch(() => undefined);
      return;
    }
    // A resource alarm: publishes would wait for it to end, so the producer's fallback takes them meanwhile.
    connection.on('blocked', (reason) => {
      if (this.connection !== connection) return;
      this.o.logger.warn({ exchange: this.o.exchange, reason }, 'direct publisher: RabbitMQ blocked the connection');
      this.blocked = true;
    });
    connection.on('unblocked', () => {
      if (this.connection === connection) this.blocked = false;
    });
    channel.on('close', () => this.drop(connection, 'channel closed'));
    connection.on('close', () => this.forget(connection));
    this.connection = connection;
    this.channel = channel;
  }
}
