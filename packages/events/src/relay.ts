import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { Client, type ClientBase, type QueryResult } from 'pg';
import { withTransaction, withTransactionOn, type Pool, type TransactionTrips } from '@crm/db';
import type { Logger } from '@crm/logger';
import { amqpPublished, ChildCache, type Counter, type Metrics, outboxBacklog, outboxOldestAge } from '@crm/metrics';
import { connectAmqp, reconnectDelay } from './amqp';
import { eventMessage, publishConfirmed } from './message';
import { amqpUser } from './publishers';
import type { EventStamper } from './stamps';
import { OUTBOX_CHANNEL } from './tables';
import { declareExchange } from './topology';

export interface OutboxRelayOptions {
  pool: Pool;
  /**
   * The database reached directly, not through a transaction pooler (DATABASE_DIRECT_URL): the relay's own
   * connection holds a LISTEN for as long as it runs. Unset: the pool's connection settings.
   */
  directUrl?: string;
  amqpUrl: string;
  exchange: string;
  logger: Logger;
  /** Rows claimed per transaction; they are published together and their confirms awaited together. */
  batchSize?: number;
  /** Fallback poll in case a notification is missed (listener reconnecting); NOTIFY is the fast path. */
  pollMs?: number;
  /** Published rows are kept this long (for inspection), then deleted. */
  retentionMs?: number;
  /** Counts confirmed publishes (`amqp_messages_published_total`) and reads the backlog on scrape (`outbox_backlog_rows`, `outbox_oldest_unsent_age_seconds`). */
  metrics?: Metrics;
  /** Stamps every event with this process's signature (its InternalAuth; stamps.ts), for consumers to act on it. */
  stamps?: EventStamper;
}

interface OutboxRow {
  seq: string | number;
  id: string;
  type: string;
  org_id: string;
  occurred_at: Date;
  /** jsonb as text, so it goes into the message body without a parse/serialise round trip. */
  data: string;
  traceparent: string | null;
  version: number;
}

/**
 * The claim, sent with BEGIN so that both go in one round trip (a multi-statement query takes no parameters:
 * the batch size is an integer the relay was constructed with, the floor a bigint it computed). SKIP LOCKED lets
 * several relays (one per service replica) share the outbox: each claims a different batch. Losing the transaction's
 * commit in a database crash only means its rows get published again (consumers de-duplicate), so it need not wait
 * for the WAL flush. `floor`: no unpublished row below it can be visible yet (see OutboxRelay.floor); 0 reads the
 * whole unpublished index.
 */
function claimSql(batchSize: number, floor: bigint): string {
  return `SET LOCAL synchronous_commit = off;
    SELECT seq, id, type, org_id, occurred_at, data::text AS data, traceparent, version FROM outbox
     WHERE published_at IS NULL${floor > 0n ? ` AND seq >= ${floor}` : ''} ORDER BY seq LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
}

/** A notification's payload: the lowest seq its transaction enqueued; anything else (an older writer's '') is 0. */
function notifiedSeq(payload: string | undefined): bigint {
  return payload && /^\d{1,19}$/.test(payload) ? BigInt(payload) : 0n;
}

/**
 * The statement that marks published rows. Planned with its values on every call, never a named statement: one is
 * planned once per connection for good (a generic plan from its sixth call), and the relay's connection makes that
 * plan in its first seconds, on a nearly empty outbox, where reading the whole table is the cheapest way to find
 * two rows. Published rows stay for the retention period, so until autovacuum's next ANALYZE replaced that plan
 * every batch read the whole outbox (1.6 ms a batch at 6,500 rows in bench/realtime, growing with the table).
 * The seqs are inlined (so the relay can send COMMIT in the same round trip); they are the bigint keys the claim read.
 */
function markPublishedSql(seqs: Array<string | number>): string {
  for (const seq of seqs) if (!/^\d+$/.test(String(seq))) throw new Error(`outbox relay: not an outbox seq: ${String(seq)}`);
  return `UPDATE outbox SET published_at = now() WHERE seq = ANY('{${seqs.join(',')}}'::bigint[])`;
}

/** Mark published rows (what the relay runs before its COMMIT; exported for the plan test). */
export async function markPublished(db: Pick<ClientBase, 'query'>, seqs: Array<string | number>): Promise<void> {
  await db.query(markPublishedSql(seqs));
}

/** A claimed batch after its publishes: the rows the broker confirmed, and the first failure if any. */
interface PublishedBatch {
  rows: OutboxRow[];
  confirmed: OutboxRow[];
  failed?: PromiseRejectedResult;
}

/** How the relay's dedicated connection shows in pg_stat_activity. */
export const RELAY_APPLICATION_NAME = 'crm-outbox-relay';
const CONFIRM_TIMEOUT_MS = 30_000;
const PRUNE_BATCH = 5_000;
/**
 * The unpublished tail (the partial index keeps it an index-only count) and its oldest row's age. One simple query
 * so the statement timeout applies: a scrape must not pile up slow queries on a database in trouble.
 */
const BACKLOG = `BEGIN; SET LOCAL statement_timeout = 1000;
  SELECT count(*)::int AS backlog,
         COALESCE(EXTRACT(EPOCH FROM now() - (SELECT created_at FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT 1)), 0)::float8 AS age
  FROM outbox WHERE published_at IS NULL;
  COMMIT`;
const PRUNE = {
  name: 'crm_events_outbox_prune',
  text: `DELETE FROM outbox WHERE seq IN (
           SELECT seq FROM outbox WHERE published_at < now() - $1 * interval '1 millisecond'
           LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED)`,
};

/** The running relays of each pool, for notifyOutboxCommitted. */
const relaysByPool = new WeakMap<Pool, Set<OutboxRelay>>();

/**
 * Tell the relays on this pool (in this process) that a transaction which enqueued events has just
 * committed. NOTIFY does the same across processes and is enough on its own; this saves its round trip and
 * keeps same-process writers fast while the LISTEN connection is being re-established (otherwise only the
 * fallback poll would see their rows). Call it only after COMMIT returned: a wake-up before the rows are
 * visible finds nothing, and nothing else would come.
 */
export function notifyOutboxCommitted(pool: Pool): void {
  for (const relay of relaysByPool.get(pool) ?? []) relay.wake();
}

/**
 * Publishes committed outbox rows to the topic exchange. A row is marked published only after the broker
 * confirmed it, in the same transaction that claimed it, so a crash or a lost connection leaves it to be
 * published again: delivery is at-least-once and consumers de-duplicate by event id.
 */
export class OutboxRelay {
  private readonly pool: Pool;
  private readonly directUrl?: string;
  private readonly amqpUrl: string;
  /** The connection's user, set as every message's user_id: the broker vouches for it, consumers check it (publishers.ts). */
  private readonly userId: string;
  private readonly exchange: string;
  private readonly log: Logger;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly retentionMs: number;
  private readonly stamps?: EventStamper;

  private connection?: ChannelModel;
  private channel?: ConfirmChannel;
  /** LISTENs and runs the claims; see listen(). */
  private listener?: Client;
  private started = false;
  private stopping = false;
  /** A wake-up arrived since the current drain pass began: look at the outbox again. */
  private wanted = false;
  private draining?: Promise<void>;
  /**
   * Where claims start reading the unpublished index. Marking a row published leaves its entry in that index until
   * VACUUM removes it, and a claim walks every such entry from the first: on a busy outbox (and with autovacuum off
   * or behind) that was most of crm's database time per created contact (1.9 ms a claim over ~3,500 dead entries).
   * After a claim the floor moves past what it claimed; every transaction that enqueues notifies its lowest seq at
   * commit and lowers the floor to it (a transaction still running when a claim passed its seq commits later, and its
   * notification brings the floor back). What comes without a seq (an older writer, the poll, a restored LISTEN, a
   * failure) resets it to 0, a claim over the whole index; so does any claim made without the LISTEN connection.
   */
  private floor = 0n;
  /**
   * The seqs notified since the claim in flight began: one the claim did not read (its transaction committed after
   * the claim's snapshot) keeps the floor from rising above it.
   */
  private notifiedDuringClaim: bigint[] = [];
  /** A claim is in flight (between two claims a notification only lowers the floor: nothing to keep). */
  private claiming = false;
  private failures = 0;
  private retryTimer?: NodeJS.Timeout;
  private listenTimer?: NodeJS.Timeout;
  private pollTimer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private pruning?: Promise<void>;
  private readonly metrics?: Metrics;
  private readonly published?: ChildCache<Counter.Internal>;
  private stopCollecting?: () => void;

  constructor(opts: OutboxRelayOptions) {
    this.pool = opts.pool;
    this.directUrl = opts.directUrl;
    this.amqpUrl = opts.amqpUrl;
    this.userId = amqpUser(opts.amqpUrl);
    this.exchange = opts.exchange;
    this.log = opts.logger;
    this.batchSize = opts.batchSize ?? 500;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1)
      throw new Error(`OutboxRelay: batchSize must be a positive integer, got ${this.batchSize}`);
    this.stamps = opts.stamps;
    this.pollMs = opts.pollMs ?? 2_000;
    this.retentionMs = opts.retentionMs ?? 24 * 3600_000;
    this.metrics = opts.metrics;
    if (opts.metrics) {
      const counter = amqpPublished(opts.metrics);
      this.published = new ChildCache((type: string) => counter.labels(type));
    }
  }

  /** On scrape: how far behind the relay is, in rows and in seconds. */
  private async readBacklog(metrics: Metrics): Promise<void> {
    const results = (await this.pool.query(BACKLOG)) as unknown as Array<{ rows: Array<{ backlog: number; age: number }> }>;
    const { backlog, age } = results[2].rows[0];
    outboxBacklog(metrics).set(backlog);
    outboxOldestAge(metrics).set(Math.max(0, age));
  }

  /** The relay holds an open channel to RabbitMQ (false from a lost connection until it has reconnected). */
  get connected(): boolean {
    return this.channel !== undefined;
  }

  /** Connects to RabbitMQ and starts listening; fails when either is unreachable at start. */
  async start(): Promise<void> {
    if (this.started) throw new Error('OutboxRelay already started');
    this.started = true;
    this.stopping = false;
    try {
      await this.openChannel();
      await this.listen();
    } catch (err) {
      await this.stop();
      throw err;
    }
    let relays = relaysByPool.get(this.pool);
    if (!relays) relaysByPool.set(this.pool, (relays = new Set()));
    relays.add(this);
    // The poll reads the whole index: what a lost notification left below the floor is found here.
    this.pollTimer = setInterval(() => this.notified(undefined), this.pollMs);
    const pruneEvery = Math.min(60_000, Math.max(1_000, this.retentionMs));
    this.pruneTimer = setInterval(() => {
      this.pruning ??= this.prune().finally(() => (this.pruning = undefined));
    }, pruneEvery);
    // Rows committed while no relay was running.
    this.wake();
    const { metrics } = this;
    if (metrics) this.stopCollecting = metrics.onCollect(() => this.readBacklog(metrics));
    this.log.info({ exchange: this.exchange }, 'outbox relay started');
  }

  /** Finishes the batch in flight (its confirms and the update that marks it), then closes. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.stopping = true;
    this.stopCollecting?.();
    relaysByPool.get(this.pool)?.delete(this);
    for (const t of [this.retryTimer, this.listenTimer]) clearTimeout(t);
    for (const t of [this.pollTimer, this.pruneTimer]) clearInterval(t);
    this.retryTimer = this.listenTimer = this.pollTimer = this.pruneTimer = undefined;
    await Promise.all([this.draining, this.pruning]);
    const { listener, connection } = this;
    this.listener = this.connection = this.channel = undefined;
    await listener?.end().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    this.started = false;
    this.log.info({ exchange: this.exchange }, 'outbox relay stopped');
  }

  /** A commit that enqueued rows from `payload` on (the lowest seq, or none known): claim from there at most. */
  private notified(payload: string | undefined): void {
    const seq = notifiedSeq(payload);
    if (seq < this.floor) this.floor = seq;
    if (this.claiming) this.notifiedDuringClaim.push(seq);
    this.wake();
  }

  /**
   * Look at the outbox now (cheap when already draining: it only asks for one more pass). NOTIFY and the
   * poll call it; a writer in this process may call it right after its commit, see notifyOutboxCommitted.
   */
  wake(): void {
    this.wanted = true;
    // While a retry is scheduled, commits only mark work as wanted: with the broker down, connecting on
    // every commit would hammer it.
    if (!this.started || this.draining || this.retryTimer || this.stopping) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      // A wake-up that came after the last pass looked at `wanted` but before this line.
      if (this.wanted) this.wake();
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.wanted && !this.stopping) {
        this.wanted = false;
        const channel = await this.openChannel();
        while (!this.stopping && (await this.publishBatch(channel)) === this.batchSize);
      }
      this.failures = 0;
    } catch (err) {
      // Rows claimed but not published are below the floor now: read from the start next time.
      this.floor = 0n;
      this.log.warn({ err, exchange: this.exchange }, 'outbox relay: publishing failed; will retry');
      this.retryLater();
    }
  }

  private retryLater(): void {
    if (this.retryTimer || this.stopping) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.wake();
    }, reconnectDelay(this.failures++));
  }

  /** Claim a batch, publish it as one window of confirms, mark what the broker confirmed. */
  private async publishBatch(channel: ConfirmChannel): Promise<number> {
    const publish = async (_db: ClientBase, [, claimed]: QueryResult[]): Promise<PublishedBatch> => {
      const { rows } = claimed as QueryResult<OutboxRow>;
      const results = rows.length === 0 ? [] : await this.publishWindow(channel, rows);
      const confirmed = rows.filter((_, i) => results[i].status === 'fulfilled');
      return { rows, confirmed, failed: results.find((r): r is PromiseRejectedResult => r.status === 'rejected') };
    };
    // Two round trips a batch: BEGIN with the claim, then the mark with COMMIT (on this kind of machine a round trip
    // between two processes costs more CPU than the statements in it). Confirmed rows are marked even when others
    // failed, so they are not sent twice. The failed ones stay unpublished and go out on the next pass, possibly after
    // later events: consumers must not depend on strict order (retries reorder anyway). A failed mark or COMMIT leaves
    // the rows to be published again.
    // The LISTEN connection runs the claims too, so a pool drained by request traffic cannot hold events back; the
    // pool stands in while that connection is being re-established. A broken dedicated connection ends, and its 'end'
    // handler re-establishes it. Without it no notification lowers the floor, so the pool's claims read from 0.
    const dedicated = this.listener;
    const floor = dedicated ? this.floor : 0n;
    this.notifiedDuringClaim = [];
    const trips: TransactionTrips<PublishedBatch> = {
      begin: claimSql(this.batchSize, floor),
      commit: ({ confirmed }) => (confirmed.length > 0 ? markPublishedSql(confirmed.map((row) => row.seq)) : undefined),
    };
    this.claiming = true;
    let batch: PublishedBatch;
    try {
      batch = dedicated ? await withTransactionOn(dedicated, publish, trips) : await withTransaction(this.pool, publish, trips);
    } finally {
      this.claiming = false;
    }
    const { rows, confirmed, failed } = batch;
    if (this.published) for (const row of confirmed) this.published.get(row.type).inc();
    if (failed) throw failed.reason;
    if (rows.length > 0) {
      // Past what this claim read: below it every visible row was claimed here or is locked by another relay's claim.
      // A notified seq the claim read belongs to a transaction that had committed before it (its rows were all
      // visible, the notification names its lowest): only the others keep the floor down.
      let next = BigInt(rows[rows.length - 1].seq) + 1n;
      const read = new Set(rows.map((row) => String(row.seq)));
      for (const seq of this.notifiedDuringClaim) if (seq < next && !read.has(String(seq))) next = seq;
      this.floor = next;
    }
    this.notifiedDuringClaim = [];
    return rows.length;
  }

  /**
   * All rows in flight at once, confirms awaited together (one at a time is ~20x slower). A broker that
   * stops confirming (a blocked connection during a resource alarm) must not hold the claimed rows and
   * their transaction forever: past the timeout the connection is closed, which fails what is pending.
   */
  private async publishWindow(channel: ConfirmChannel, rows: OutboxRow[]): Promise<PromiseSettledResult<void>[]> {
    const connection = this.connection;
    const timer = setTimeout(() => {
      this.log.warn({ exchange: this.exchange, pending: rows.length }, 'outbox relay: no publisher confirms in time; reconnecting');
      connection?.close().catch(() => undefined);
    }, CONFIRM_TIMEOUT_MS);
    try {
      return await Promise.allSettled(rows.map((row) => this.publish(channel, row)));
    } finally {
      clearTimeout(timer);
    }
  }

  private publish(channel: ConfirmChannel, row: OutboxRow): Promise<void> {
    const event = {
      id: row.id,
      type: row.type,
      orgId: row.org_id,
      occurredAt: row.occurred_at,
      version: row.version,
      dataJson: row.data,
      traceparent: row.traceparent,
    };
    // Parsed only for the few types with narrower routing keys; every other body goes out as stored text.
    return publishConfirmed(
      channel,
      this.exchange,
      eventMessage(event, this.userId, () => JSON.parse(row.data), this.stamps),
    );
  }

  private async openChannel(): Promise<ConfirmChannel> {
    if (this.channel) return this.channel;
    const connection = await connectAmqp(this.amqpUrl, `outbox-relay ${this.exchange}`);
    connection.on('error', (err) => this.log.warn({ err, exchange: this.exchange }, 'outbox relay: RabbitMQ connection error'));
    let channel: ConfirmChannel;
    try {
      channel = await connection.createConfirmChannel();
      channel.on('error', (err) => this.log.warn({ err, exchange: this.exchange }, 'outbox relay: RabbitMQ channel error'));
      // Declared on every connection: the exchange may be gone after a broker reset.
      await declareExchange(channel, this.exchange);
    } catch (err) {
      await connection.close().catch(() => undefined);
      throw err;
    }
    // A channel the broker closed (e.g. an error on it) is unusable; starting over on a new connection is simplest.
    channel.on('close', () => {
      if (this.channel === channel) connection.close().catch(() => undefined);
    });
    connection.on('close', () => {
      if (this.connection !== connection) return;
      this.connection = this.channel = undefined;
      if (this.stopping) return;
      // Reconnect now rather than with the next event, so that one does not wait for the handshake.
      this.log.warn({ exchange: this.exchange }, 'outbox relay: RabbitMQ connection lost; reconnecting');
      this.retryLater();
    });
    if (this.stopping) {
      await connection.close().catch(() => undefined);
      throw new Error('OutboxRelay stopping');
    }
    this.connection = connection;
    this.channel = channel;
    return channel;
  }

  /**
   * A dedicated connection (not from the pool: it is held forever) that turns commits into wake-ups and
   * runs the claim transactions. Notifications arrive between transactions, never inside one.
   */
  private async listen(): Promise<void> {
    const session = this.directUrl ? { connectionString: this.directUrl } : this.pool.options;
    const client = new Client({ ...session, application_name: RELAY_APPLICATION_NAME });
    client.on('notification', (n) => this.notified(n.payload));
    client.on('error', (err) => this.log.warn({ err }, 'outbox relay: LISTEN connection error'));
    client.on('end', () => {
      if (this.listener !== client) return;
      this.listener = undefined;
      if (!this.stopping) this.relistenLater(0);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopping) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
  }

  /** Until the listener is back, the poll keeps events flowing, only slower. */
  private relistenLater(failures: number): void {
    this.listenTimer = setTimeout(() => {
      this.listen().then(
        () => {
          this.log.info('outbox relay: LISTEN connection restored');
          // Commits made while nobody listened: from the start.
          this.notified(undefined);
        },
        (err) => {
          this.log.warn({ err }, 'outbox relay: LISTEN reconnect failed');
          if (!this.stopping) this.relistenLater(failures + 1);
        },
      );
    }, reconnectDelay(failures));
  }

  private async prune(): Promise<void> {
    try {
      let deleted: number;
      do {
        deleted = (await this.pool.query({ ...PRUNE, values: [this.retentionMs] })).rowCount ?? 0;
      } while (deleted === PRUNE_BATCH && !this.stopping);
    } catch (err) {
      this.log.warn({ err }, 'outbox relay: pruning published rows failed');
    }
  }
}
