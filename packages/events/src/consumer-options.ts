import type { Pool, PoolClient } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { EventEnvelope } from './envelope';
import type { QueueShare } from './queue-shares';
import { topicMatches } from './routing';
import { STAMPED_TYPES, type EventStampVerifier } from './stamps';
import { withEventTrace } from './trace-context';

/** With a pool: applies one event inside the transaction on `db` that also records its id; throw to roll back and retry. */
export type EventHandler = (event: EventEnvelope, db: PoolClient) => Promise<void>;
/** Without a pool: handles one event; nothing is committed for it, and a redelivered event is handled again. */
export type EventHandlerWithoutDb = (event: EventEnvelope) => Promise<void>;
/**
 * With a pool: applies events in the order they were delivered, inside one transaction on `db` that also records
 * their ids. `prepared` is what `batchPrepare` answered for these events (undefined without one).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BatchHandler<P = any> = (events: EventEnvelope[], db: PoolClient, prepared?: P) => Promise<void>;
/** Without a pool: handles events in the order they were delivered; `prepared` as for BatchHandler. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BatchHandlerWithoutDb<P = any> = (events: EventEnvelope[], prepared?: P) => Promise<void>;
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

/** What every consumer is configured with, whatever its handler. */
interface ConsumerBasics {
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
  logger: Logger;
  prefetch?: number;
  /** Handler runs per event, including the first, before the message goes to `<queue>.dlq`. */
  maxAttempts?: number;
  /** Wait before retry n (1-based) is retryDelaysMs[n-1]; the last value repeats. */
  retryDelaysMs?: number[];
  /** Handlers (batch mode: lanes, see batchKey) running at once. 1 (default) keeps the queue's order. */
  concurrency?: number;
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
  /**
   * For a consumer whose handlers call other services for the event (this process's InternalAuth): each delivery's
   * stamp (stamps.ts) is checked, and its handlers read it with eventOrigin to pass as their calls' origin. A stamp that
   * does not verify, was made for another event, or whose issuer is not a producer of the type is refused like a
   * foreign publisher (dead-lettered with the reason in `x-refused-reason`); an event without one is handled, with no
   * origin. Without this option stamps are not looked at (what a verification costs, ~75 µs, is spent only where used).
   */
  stamps?: EventStampVerifier;
  /**
   * A queue being retired (its consumer now takes its events from a shared queue, see `shares`): at each (re)connect
   * its bindings are removed instead of made, and what is still in it, or comes back from its retry queues, is
   * consumed as before. A queue that does not exist (any more) is not created: the consumer then does nothing.
   * The package README, "Retiring a queue".
   */
  draining?: boolean;
}

/** Exactly-once effects: each handler call runs in a transaction that also records the event ids in processed_events. */
interface WithPool {
  pool: Pool;
  /** processed_events rows of this consumer are deleted after this long; duplicates arrive within minutes. */
  processedRetentionMs?: number;
  exclusive?: false;
}

/** No transaction and no idempotency: handlers get no client, and a redelivered event is handled again. */
interface WithoutPool {
  pool?: undefined;
  processedRetentionMs?: undefined;
  /**
   * Per-instance fan-out (a gateway's sockets): a non-durable, exclusive, auto-delete queue named
   * `<queue>.<random>`, no retries. Events published while disconnected are not seen.
   */
  exclusive?: boolean;
}

/** One event per handler call (per transaction, with a pool). */
interface PerEvent<H> {
  handler: H;
  shares?: undefined;
  batchHandler?: undefined;
  batchPrepare?: undefined;
  batchSize?: undefined;
  batchFlushMs?: undefined;
  batchKey?: undefined;
}

/** Batch mode: up to `batchSize` events per handler call (per transaction, with a pool). */
interface Batched<H> {
  batchHandler: H;
  handler?: undefined;
  shares?: undefined;
  /** What to do for a batch before its transaction (see BatchPrepare); handed to batchHandler. */
  batchPrepare?: BatchPrepare;
  /** Most deliveries per batch (default 100); prefetch defaults to 2× this in batch mode. */
  batchSize?: number;
  /** A partial batch is flushed this long after its first delivery arrived (default 25 ms), so one message when idle still goes soon. */
  batchFlushMs?: number;
  /**
   * With `concurrency` > 1: events with the same key always go to the same lane, and a lane runs one batch at a
   * time, so events of one key (a conversation, a contact) are applied in delivery order while lanes run in
   * parallel. Without it batch mode runs one batch at a time, and a `concurrency` > 1 is refused.
   */
  batchKey?: (event: EventEnvelope) => string;
}

/**
 * Batch mode for several consumers on one queue (queue-shares.ts): each batch in one transaction, each share with its
 * own processed_events rows (under its name, not the queue's) and its failures to itself. `bindings` must be the
 * shares' patterns, each taken by some share.
 */
interface Shared {
  shares: QueueShare[];
  handler?: undefined;
  batchHandler?: undefined;
  batchPrepare?: undefined;
  batchSize?: number;
  batchFlushMs?: number;
  batchKey?: (event: EventEnvelope) => string;
}

/**
 * With a `pool`, handlers get the transaction client their effects and the event ids' processed_events rows are
 * written with; without one, they get none. Give `handler` (one event at a time) or `batchHandler` (batch mode).
 */
export type EventConsumerOptions = ConsumerBasics &
  (
    | (WithPool & (PerEvent<EventHandler> | Batched<BatchHandler> | Shared))
    | (WithoutPool & (PerEvent<EventHandlerWithoutDb> | Batched<BatchHandlerWithoutDb>))
  );

/** Refuses, at construction, what the types cannot say or what a caller without them could still pass. */
export function checkOptions(opts: EventConsumerOptions): void {
  const name = `EventConsumer ${opts.queue}`;
  if (opts.bindings.length === 0) throw new Error(`${name}: no bindings`);
  if ([opts.handler, opts.batchHandler, opts.shares].filter(Boolean).length !== 1)
    throw new Error(`${name}: give either handler or batchHandler (or shares)`);
  if (opts.shares && !opts.pool) throw new Error(`${name}: shares keep processed_events rows; give a pool`);
  if (opts.shares) checkShares(name, opts.bindings, opts.shares);
  // Only STAMPED_TYPES carry a stamp: a consumer checking stamps of another type would act with no origin, always.
  const unstamped = opts.stamps ? opts.bindings.find((b) => !STAMPED_TYPES.has(b)) : undefined;
  if (unstamped) throw new Error(`${name}: ${unstamped} carries no event stamp; add it to STAMPED_TYPES (stamps.ts) to check stamps of it`);
  if (opts.draining && opts.exclusive) throw new Error(`${name}: an exclusive queue is gone with its connection; nothing to drain`);
  if (opts.pool && opts.exclusive) throw new Error(`${name}: an exclusive queue keeps no processed_events; give no pool`);
  const busy = opts.handler && opts.pool ? opts.bindings.find(isHighVolume) : undefined;
  if (busy) throw new Error(`${name}: ${busy} is a high-volume event; commit per batch (batchHandler, eachEvent), not per event`);
  // Parallel batches without a key would apply two events of one conversation in either order.
  if (!opts.handler && (opts.concurrency ?? 1) > 1 && !opts.batchKey) throw new Error(`${name}: batch mode with concurrency > 1 needs batchKey`);
}

/** A share that takes what the queue is not bound to would never see it; a binding no share takes brings only waste. */
function checkShares(name: string, bindings: string[], shares: QueueShare[]): void {
  const patterns = shares.flatMap((s) => s.bindings);
  const unbound = patterns.find((p) => !bindings.includes(p));
  if (unbound) throw new Error(`${name}: a share takes ${unbound}, which the queue is not bound to`);
  const untaken = bindings.find((b) => !patterns.some((p) => p === b || topicMatches(p, b)));
  if (untaken) throw new Error(`${name}: no share takes ${untaken}`);
}
