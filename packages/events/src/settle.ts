import type { ConfirmChannel, ConsumeMessage, MessagePropertyHeaders, Options } from 'amqplib';
import type { Logger } from '@crm/logger';
import { amqpConsumed, ChildCache, type Counter, type Metrics } from '@crm/metrics';
import { AckLedger } from './acks';
import type { Delivery } from './delivery';
import type { EventEnvelope } from './envelope';
import { REFUSED_REASON_HEADER, RefusedPublisherError } from './publishers';
import { eventTraceFields } from './trace-context';
import { dlqName, retryQueueName } from './topology';

/**
 * How a delivery left the consumer: applied (or a duplicate) and acked, sent to a retry queue, parked in the DLQ,
 * dropped, or refused (its publisher may not publish its type: parked in the DLQ, or dropped from an exclusive queue).
 */
type Outcome = 'ack' | 'retry' | 'dead' | 'dropped' | 'refused';

const ATTEMPT_HEADER = 'x-crm-attempt';
const ERROR_HEADER = 'x-crm-error';
/** Headers the broker adds when dead-lettering or redelivering; a republished copy starts clean. */
const BROKER_HEADERS = /^x-(death|first-death-|last-death-|delivery-count)/;

/** Which run of the handler a delivery is: 1, or what its retry copy's header counts. */
export const attemptOf = (msg: ConsumeMessage): number => Number(msg.properties.headers?.[ATTEMPT_HEADER] ?? 1);

export interface SettlerOptions {
  queue: string;
  log: Logger;
  /** The consumer's broker user: its retry and dead-letter copies are its own publishes (publishers.ts). */
  ownUser: string;
  /** An exclusive queue has no retry queues and no DLQ: what cannot be applied is dropped. */
  exclusive: boolean;
  /** Handler runs per event, including the first, before the message goes to `<queue>.dlq` (default 5). */
  maxAttempts?: number;
  /** Wait before retry n (1-based) is retryDelaysMs[n-1]; the last value repeats. */
  retryDelaysMs?: number[];
  metrics?: Metrics;
}

/**
 * The retry and dead-letter policy, and every ack: a delivery is acked once applied, or once its copy in a retry
 * queue (after a delay) or in `<queue>.dlq` (after `maxAttempts`, or at once when it can never be applied) was
 * confirmed by the broker. Each outcome is counted.
 */
export class DeliverySettler {
  private readonly acks = new AckLedger();
  private readonly settled?: ChildCache<Counter.Internal>;
  private readonly maxAttempts: number;
  private readonly retryDelaysMs: number[];
  /** Retry queues needed: one per distinct delay that can actually be used before maxAttempts. */
  readonly retryLevels: number;

  constructor(private readonly o: SettlerOptions) {
    this.maxAttempts = Math.max(1, o.maxAttempts ?? 5);
    this.retryDelaysMs = o.retryDelaysMs?.length ? o.retryDelaysMs : [1_000, 5_000, 30_000, 120_000];
    this.retryLevels = o.exclusive ? 0 : Math.min(this.retryDelaysMs.length, this.maxAttempts - 1);
    if (o.metrics) {
      const consumed = amqpConsumed(o.metrics);
      this.settled = new ChildCache((outcome: string) => consumed.labels(o.queue, outcome));
    }
  }

  /** Batch mode: a delivery is open until acked (see AckLedger). */
  received({ channel, msg }: Delivery): void {
    this.acks.received(channel, msg);
  }

  /** Applied (or already applied before): ack it. */
  applied(delivery: Delivery): void {
    this.ack(delivery);
    this.count('ack');
  }

  /** After a batch's commit: one ack frame per channel when that acks exactly this batch (see AckLedger). */
  appliedAll(batch: Delivery[]): void {
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
        this.o.log.warn({ err, queue: this.o.queue }, 'event consumer: ack failed (channel closed)');
      }
    }
    this.count('ack', batch.length);
  }

  /** A handler failed for good on this delivery: retry it later, park it in the DLQ, or (exclusive) drop it. */
  async failed(delivery: Delivery, event: EventEnvelope, attempt: number, err: unknown): Promise<void> {
    const { queue, log } = this.o;
    const ctx = { queue, eventId: event.id, eventType: event.type, attempt, ...eventTraceFields(event) };
    if (this.o.exclusive) {
      // Fan-out to live sockets: a late retry is worth nothing, and there is no durable queue to park it in.
      log.error({ err, ...ctx }, 'event consumer: handler failed; dropping (exclusive queue)');
      this.ack(delivery);
      this.count('dropped');
      return;
    }
    if (attempt >= this.maxAttempts) {
      log.error({ err, ...ctx }, 'event consumer: handler failed; attempts exhausted, dead-lettering');
      if (await this.forward(delivery, dlqName(queue), attempt, err)) this.count('dead');
      return;
    }
    const level = Math.min(attempt, this.retryLevels);
    const delay = this.retryDelaysMs[level - 1];
    log.warn({ err, ...ctx, retryInMs: delay }, 'event consumer: handler failed; retrying later');
    if (await this.forward(delivery, retryQueueName(queue, level), attempt + 1, err, delay)) this.count('retry');
  }

  /** Not an envelope, or data that does not fit its schema: it can never succeed, so it goes to the DLQ at once, alone. */
  async malformed(delivery: Delivery, attempt: number, err: unknown): Promise<void> {
    const { queue, log } = this.o;
    const { msg } = delivery;
    if (err instanceof RefusedPublisherError) return this.refused(delivery, attempt, err);
    log.error(
      { err, queue, messageId: msg.properties.messageId, routingKey: msg.fields.routingKey },
      'event consumer: malformed message; dead-lettering',
    );
    if (this.o.exclusive) {
      this.ack(delivery);
      this.count('dropped');
    } else if (await this.forward(delivery, dlqName(queue), attempt, err)) this.count('dead');
  }

  /**
   * A publisher that may not publish the event's type (a compromised service speaking for another): never handled, parked
   * in the DLQ with the reason (or dropped from an exclusive queue), and counted, so an operator sees it.
   */
  private async refused(delivery: Delivery, attempt: number, err: RefusedPublisherError): Promise<void> {
    const { queue, log } = this.o;
    const { msg } = delivery;
    log.warn(
      { queue, reason: err.message, messageId: msg.properties.messageId, routingKey: msg.fields.routingKey },
      'event consumer: publisher refused; dead-lettering',
    );
    if (this.o.exclusive) {
      this.ack(delivery);
      this.count('refused');
    } else if (await this.forward(delivery, dlqName(queue), attempt, err, undefined, { [REFUSED_REASON_HEADER]: err.message })) this.count('refused');
  }

  private count(outcome: Outcome, n = 1): void {
    this.settled?.get(outcome).inc(n);
  }

  private ack({ channel, msg }: Delivery): void {
    try {
      this.acks.ack(channel, msg);
    } catch (err) {
      // The channel is gone; the broker redelivers the message and processed_events absorbs the repeat.
      this.o.log.warn({ err, queue: this.o.queue }, 'event consumer: ack failed (channel closed)');
    }
  }

  /**
   * Publish a copy to a retry or dead-letter queue, wait for the broker to confirm it, then ack the
   * original. Should either fail, the original is redelivered instead: nothing is lost. True when forwarded.
   */
  private async forward(
    delivery: Delivery,
    target: string,
    attempt: number,
    err: unknown,
    delayMs?: number,
    extraHeaders?: MessagePropertyHeaders,
  ): Promise<boolean> {
    const { channel, msg } = delivery;
    const headers: MessagePropertyHeaders = {};
    for (const [k, v] of Object.entries(msg.properties.headers ?? {})) if (!BROKER_HEADERS.test(k)) headers[k] = v;
    headers[ATTEMPT_HEADER] = attempt;
    headers[ERROR_HEADER] = String((err as Error)?.message ?? err).slice(0, 1000);
    Object.assign(headers, extraHeaders);
    const options: Options.Publish = {
      persistent: true,
      // The copy is this consumer's own publish: it comes back from a retry queue as its own user's (publishers.ts).
      userId: this.o.ownUser,
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
      this.o.log.warn({ err: publishErr, queue: this.o.queue, target }, 'event consumer: could not forward message; it will be redelivered');
      return false;
    }
    this.ack(delivery);
    return true;
  }
}
