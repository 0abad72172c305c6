import { randomUUID } from 'node:crypto';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ClaimLoop, type ClaimBatch, withTransaction, type Pool } from '@crm/db';
import type { SecretBox } from '@crm/crypto';
import { enqueueEvent } from '@crm/events';
import { contextFromTraceparent, traceparentOfSpan } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import { Batcher } from '../db/batcher';
import * as deliveries from '../db/deliveries.repo';
import * as feed from '../db/feed.repo';
import type { FeedEvent } from '../db/feed.repo';
import * as webhooks from '../db/webhooks.repo';
import { secretAad } from '../deps';
import { DISABLED_EVENT_TYPE } from '../domain/event-types';
import { deliveryRecorder } from './delivery-metrics';
import { BACKLOG_CLAIM_WAIT_MS, DeliverySlots } from './delivery-slots';
import { type Adopted, FirstRound, within } from './first-attempt';
import type { AttemptResult, WebhookSender } from './sender';
import { SigningKeys } from './signing-keys';

export interface WorkerOptions {
  pool: Pool;
  /** For the worker's own LISTEN connection (ClaimLoop's): the direct URL (DATABASE_DIRECT_URL), not a pooler's. */
  databaseUrl: string;
  log: Logger;
  box: SecretBox;
  sender: WebhookSender;
  /** Waits before retry 1, 2, ...; after the last, the delivery fails. */
  schedule: number[];
  /** Continuous failure after which an endpoint is disabled. */
  disableAfterMs: number;
  /** Attempts in flight at once in this instance. */
  concurrency: number;
  /** Attempts in flight at once to one endpoint in this instance. */
  endpointConcurrency: number;
  pollMs: number;
  /** How long a claimed row stays invisible to other workers: longer than any attempt can take. */
  leaseMs: number;
  retentionMs: number;
  /** Counts attempts by outcome and times them (delivery-metrics.ts). */
  metrics?: Metrics;
}

const tracer = trace.getTracer('@crm/webhooks');

/** A delivery attempt's span, as the attempt passes it on: the request's header and the lines it logs. */
interface Traced {
  traceparent: string | undefined;
  traceId: string;
  spanId: string;
}
const PRUNE_EVERY_MS = 3_600_000;
const TIMER_LIMIT_MS = 60_000;
/** How long a success waits for others to be recorded with it in one statement. */
const SUCCESS_GATHER_MS = 10;
/**
 * How long a fan-out makes first attempts before it writes their rows. A receiver that answers within it costs one
 * written row; a slower one's row is written leased and its attempt recorded when it ends (a second write), and what
 * has not started is left to a claim, so a slow endpoint holds its batch (and the consumer's ack) this long at most.
 */
const FIRST_ATTEMPT_WAIT_MS = 100;
/** Ids of announcements without an endpoint (an earlier version's payload) claimed per statement, at most. */
const IDS_PER_CLAIM = 1_000;
/**
 * Ids without an endpoint looked at per free slot. A claim locks every id it looks at (then ranks them by endpoint
 * slot), so such ids are taken a few per free slot, never a thousand for one slot.
 */
const IDS_PER_FREE_SLOT = 4;

function human(ms: number): string {
  if (ms >= 86_400_000) return `${(ms / 86_400_000).toFixed(1).replace(/\.0$/, '')} days`;
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1).replace(/\.0$/, '')} hours`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} minutes`;
  return `${Math.round(ms / 1000)} seconds`;
}

/**
 * Works the delivery queue in PostgreSQL: claims deliveries (SKIP LOCKED under a lease, so replicas share
 * the queue), sends each, records the attempt and either finishes the delivery or schedules its next one.
 *
 * A new delivery the consuming instance has room for is sent first and written after (fanOut: one written row
 * for an attempt that succeeds). The others are announced by NOTIFY from the fan-out's own transaction (so only
 * once committed, and to every instance), by endpoint; the worker then claims the oldest due rows of each endpoint it heard of, as
 * many as the endpoint has free slots, and whichever instance wins a row sends it. Behind a busy endpoint the
 * slots its finished requests free are gathered into one claim (half its slots, or a few milliseconds). The
 * general claim (due rows of the other endpoints, oldest first) runs on the poll, on short retry timers of this
 * process, after a reconnect of the LISTEN connection (notifications are lost while it is down) and when due
 * rows were left behind. So the poll drives retries and is the safety net, never the path of a new delivery.
 *
 * Concurrency is bounded per instance and per endpoint: a claim never takes more rows than there are
 * free slots, overall and for the row's endpoint, so nothing claimed waits in memory while its lease runs.
 * The shared ClaimLoop runs the loop (instance slots, poll, LISTEN with reconnects, stop); DeliverySlots keeps the
 * per-endpoint slots and what was heard of due rows; this class says what to claim (announced ids, then due rows),
 * makes the claims and the attempts and keeps the timers.
 */
export class DeliveryWorker {
  private readonly o: WorkerOptions;
  private readonly loop: ClaimLoop<deliveries.ClaimedDelivery>;
  private readonly slots: DeliverySlots;
  private gatherTimer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private retryTimers = new Set<NodeJS.Timeout>();
  private readonly successes: Batcher<deliveries.Success>;
  private readonly recordAttempt: ReturnType<typeof deliveryRecorder>;
  private readonly signingKeys: SigningKeys;

  constructor(opts: WorkerOptions) {
    this.recordAttempt = deliveryRecorder(opts.metrics);
    this.o = opts;
    this.signingKeys = new SigningKeys(opts.box);
    this.slots = new DeliverySlots({ endpointConcurrency: opts.endpointConcurrency });
    // The delivery is made before its success is recorded; the record only frees this instance's slot (the
    // endpoint's was freed when the request ended), so it can wait a few milliseconds for others.
    this.successes = new Batcher((items) => deliveries.recordSuccesses(opts.pool, items), 500, SUCCESS_GATHER_MS);
    this.loop = new ClaimLoop({
      name: 'webhook worker',
      databaseUrl: opts.databaseUrl,
      channel: deliveries.DUE_CHANNEL,
      // Only this service writes to its database's channel; ids are still checked before they reach SQL.
      onNotification: (payload) => this.slots.announce(deliveries.parseAnnouncement(payload)),
      pollMs: opts.pollMs,
      concurrency: opts.concurrency,
      claim: (free, due) => this.claimDue(free, due),
      work: (row) => this.work(row),
      describe: (row) => ({ deliveryId: row.id }),
      log: opts.log,
    });
  }

  /** Whatever was left pending by the previous run (a restart, a crash) is due now or soon: the loop looks at once. */
  async start(): Promise<void> {
    await this.loop.start();
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
  }

  /** Stop claiming, let attempts in flight finish and be recorded. Pending rows simply wait in the table. */
  async stop(): Promise<void> {
    clearInterval(this.pruneTimer);
    clearTimeout(this.gatherTimer);
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    await this.loop.stop();
  }

  /**
   * The event consumer's fan-out. The deliveries a batch calls for are planned (a read) and sent at once, before
   * anything is written, as far as this instance and each endpoint have free slots; a delivery whose endpoint is at
   * its bound starts when one of this batch's requests to it ends. Their rows are written once, when every one has
   * been made or FIRST_ATTEMPT_WAIT_MS has passed: a success finished, with its attempt; a failed attempt or one still
   * in flight leased to this instance and recorded as a claimed delivery's is; one not started due and announced, for
   * whichever instance has room. Resolves once the rows are committed, so the consumer acks only then. Should the
   * write fail, the batch is redelivered and the attempts made again (at least once, with the same `webhook-id`).
   * The events are appended to the event feed by the same statement (or alone when no endpoint wants them): one
   * commit per batch either way.
   */
  async fanOut(events: (deliveries.FanOutEvent & FeedEvent)[]): Promise<void> {
    const targets = await deliveries.planFanOut(this.o.pool, events);
    if (targets.length === 0) return feed.append(this.o.pool, events);
    const rows = targets.map((t): deliveries.NewDelivery => ({ id: randomUUID(), event: events[t.event], webhookId: t.webhook_id, state: 'due' }));
    const round = new FirstRound(rows, targets);
    const start = (): Promise<void> =>
      // Between the loop's claims, so the slots counted are the ones taken: oldest event first, an endpoint's bound
      // before the instance's.
      this.loop.adopt(async (free) => round.start(free, (endpoint) => this.slots.tryTake(endpoint)));
    // A request of this round that ends frees a slot of its endpoint: what waits for one starts.
    round.onRequestEnd = () => void start().catch((err) => this.o.log.warn({ err }, 'webhook worker: starting a first attempt failed'));
    await start();
    await within(round.settled, FIRST_ATTEMPT_WAIT_MS);
    // Decided here, at once: an attempt that ends after this is recorded on the row written below, one not started
    // is left to a claim.
    const first = round.close();
    let written: Set<string>;
    try {
      written = await deliveries.insertFanOut(this.o.pool, rows, this.o.leaseMs, events);
    } catch (err) {
      for (const attempt of first.values()) attempt.written('unwritten');
      throw err;
    }
    for (const [row, attempt] of first) attempt.written(!written.has(row.id) ? 'unwritten' : row.state === 'succeeded' ? 'final' : 'pending');
  }

  /** Look for due deliveries (poll, retry timers, a manual redelivery in this process). */
  wake(): void {
    this.loop.wake();
  }

  /** Whether notifications are being received (tests, health). */
  get listening(): boolean {
    return this.loop.listening;
  }

  /**
   * What the loop claims when it comes round: the due rows of endpoints heard of (as many as each has free
   * slots), announced ids of no known endpoint, then (when asked for, or when rows were left behind) due rows of
   * the other endpoints, oldest first. `again`: look again at once; `left`: rows stayed behind for lack of a slot,
   * so a freed slot (the instance's or an endpoint's) looks again.
   */
  private async claimDue(free: number, due: boolean): Promise<ClaimBatch<deliveries.ClaimedDelivery>> {
    if (due) this.slots.want();
    const items: deliveries.ClaimedDelivery[] = [];
    let again = false;
    try {
      items.push(...(await this.claimHinted(free)));
      if (this.slots.unplacedCount > 0 && free > items.length) {
        const ids = this.slots.takeUnplaced(Math.min(IDS_PER_CLAIM, (free - items.length) * IDS_PER_FREE_SLOT));
        const { rows, scanned } = await this.claim(ids, 0, free - items.length);
        items.push(...rows);
        // Due but left for lack of a slot (the claim ranks them by endpoint).
        if (scanned > rows.length) this.slots.want();
        if (this.slots.unplacedCount > 0) again = true;
      }
      const room = free - items.length;
      if (room > 0 && this.slots.takeWanted()) {
        const scan = room * 2;
        // Endpoints at their bound are not scanned; endpoints heard of are served by their own claims.
        const full = this.slots.full();
        const { rows, scanned } = await this.claim(undefined, scan, room, this.slots.heardOf());
        items.push(...rows);
        this.slots.afterGeneralClaim(full, rows);
        // Due rows beyond the scan, or beyond this instance's room: look again.
        if (scanned === scan || (rows.length === room && scanned > rows.length)) this.slots.want();
        if (rows.length > 0 && (rows.length === room || scanned === scan)) again = true;
      }
    } catch (err) {
      // Announced ids taken out of the lists are found by the next general claim (rows claimed so far are
      // leased and come back when the lease ends).
      this.slots.want();
      throw err;
    }
    return { items, again, left: this.slots.left };
  }

  /**
   * Claims the due rows of the endpoints heard of: of each, as many as it has free slots, within the instance's
   * free slots; an endpoint with a backlog waits until half its slots are free or BACKLOG_CLAIM_WAIT_MS has
   * passed. Endpoints take turns (one served moves behind the others). An endpoint that had fewer due rows than
   * asked for is forgotten until it is heard of again.
   */
  private async claimHinted(free: number): Promise<deliveries.ClaimedDelivery[]> {
    const plan = this.slots.planEndpointClaims(free, performance.now());
    if (plan.gatherLater) this.gatherLater();
    if (plan.wants.size === 0) return [];
    let rows: deliveries.ClaimedDelivery[];
    try {
      rows = await deliveries.claimEndpoints(this.o.pool, plan.wants, this.o.leaseMs);
    } catch (err) {
      this.slots.endpointClaimFailed(plan);
      throw err;
    }
    this.slots.claimedByEndpoint(plan, rows);
    return rows;
  }

  /** Come round once the oldest gathering endpoint has waited long enough. */
  private gatherLater(): void {
    if (this.gatherTimer) return;
    this.gatherTimer = setTimeout(() => {
      this.gatherTimer = undefined;
      this.loop.nudge();
    }, BACKLOG_CLAIM_WAIT_MS + 1);
    this.gatherTimer.unref();
  }

  /** Claims rows and takes their endpoint slots at once, so the next claim's bound counts them. */
  private async claim(ids: string[] | undefined, scan: number, limit: number, skip: string[] = []): Promise<deliveries.ClaimResult> {
    const result = await deliveries.claim(this.o.pool, {
      ids,
      skip,
      scan,
      limit,
      leaseMs: this.o.leaseMs,
      perEndpoint: this.o.endpointConcurrency,
      busy: this.slots.busy,
    });
    for (const row of result.rows) this.slots.take(row.webhook_id);
    return result;
  }

  private async work(row: deliveries.ClaimedDelivery): Promise<void> {
    const endpoint = row.webhook_id;
    let released = false;
    // The endpoint's slot is given back once its request is over, before the outcome is recorded (the row
    // stays leased until then): the bound is on requests open to the receiver, and recording waits for a
    // batch. The instance's slot is held until the outcome is recorded.
    const releaseEndpoint = () => {
      if (released) return;
      released = true;
      if (this.slots.release(endpoint)) this.loop.nudge();
    };
    try {
      await this.attempt(row, releaseEndpoint);
    } finally {
      releaseEndpoint();
    }
  }

  /**
   * One attempt in a span that continues the trace of the event that caused the delivery (the row's
   * `traceparent`): the request carries that span's `traceparent` header, so a receiver sees the trace id of
   * the API request that changed the data. A row without one starts a new trace.
   */
  private attempt(row: deliveries.ClaimedDelivery, requestDone: () => void): Promise<void> {
    const parent = contextFromTraceparent(row.traceparent);
    const span = tracer.startSpan(
      `${row.event_type} deliver`,
      { kind: SpanKind.CLIENT, attributes: { 'webhook.delivery_id': row.id, 'webhook.id': row.webhook_id, 'webhook.attempt': row.attempts + 1 } },
      parent,
    );
    // The span's trace travels explicitly (the request's header, the lines logged, a webhook.disabled event): the
    // service runs without an active context unless spans are exported (main.ts). Exporting, the span is also made
    // active, so the database's spans nest under it.
    const { traceId, spanId } = span.spanContext();
    const spanCtx = trace.setSpan(parent, span);
    const traced: Traced = { traceparent: traceparentOfSpan(span.spanContext()), traceId, spanId };
    return context.with(spanCtx, () =>
      this.attemptInSpan(row, traced, requestDone, (result) => {
        if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
        if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? undefined });
      }).finally(() => span.end()),
    );
  }

  private async attemptInSpan(
    row: deliveries.ClaimedDelivery,
    { traceparent, traceId, spanId }: Traced,
    requestDone: () => void,
    sent: (r: AttemptResult) => void,
  ): Promise<void> {
    const trigger: deliveries.AttemptTrigger = row.manual ? 'manual' : 'auto';
    try {
      let key: Buffer | undefined;
      try {
        key = this.signingKeys.keyOf(row.secret_enc, secretAad(row.org_id, row.webhook_id));
      } catch (err) {
        this.o.log.error({ err, webhookId: row.webhook_id, traceId, spanId }, 'webhook worker: secret cannot be decrypted');
      }
      const result: AttemptResult = key
        ? await this.o.sender.send({ url: row.url, id: row.event_id, body: row.payload, key, traceparent })
        : {
            ok: false,
            statusCode: null,
            durationMs: 0,
            error: 'the signing secret cannot be decrypted',
            responseBody: '',
            responseBodyTruncated: false,
            startedAt: new Date(),
          };
      requestDone();
      this.recordAttempt(result, key !== undefined);
      sent(result);
      // A first attempt made before its row: the fan-out writes it (finished when it succeeded in time) or leaves the
      // row to this record; a row that was not written (its batch failed, or another instance had it) has none.
      const first = (row as Adopted).first;
      if (first) {
        first.sentWith(result);
        const outcome = await first.outcome;
        if (outcome !== 'pending') return;
      }
      if (result.ok) await this.successes.add({ delivery: row, trigger, result });
      else await this.recordFailure(row, trigger, result, { traceparent, traceId, spanId });
    } catch (err) {
      // Not recorded (database unreachable): the lease runs out and the delivery is attempted again.
      this.o.log.error({ err, deliveryId: row.id, traceId, spanId }, 'webhook worker: recording an attempt failed');
    }
  }

  private async recordFailure(
    row: deliveries.ClaimedDelivery,
    trigger: deliveries.AttemptTrigger,
    result: AttemptResult,
    { traceparent, traceId, spanId }: Traced,
  ): Promise<void> {
    const retryInMs = row.one_shot ? undefined : this.o.schedule[row.retries];
    const disabled = await withTransaction(this.o.pool, async (db) => {
      if (!(await deliveries.recordFailure(db, row, trigger, result, retryInMs))) return undefined;
      const w = await webhooks.recordFailure(db, row.webhook_id);
      if (!w || !w.active || w.failingForMs < this.o.disableAfterMs) return undefined;
      const reason = `failing continuously for ${human(w.failingForMs)} (last error: ${result.error ?? 'unknown'})`;
      await webhooks.disable(db, row.webhook_id, reason);
      await deliveries.failPending(db, row.webhook_id, 'webhook disabled after failing continuously');
      // In the same transaction as the disable, so the notification is sent if and only if it happened.
      await enqueueEvent(db, { type: DISABLED_EVENT_TYPE, orgId: w.orgId, data: { webhookId: row.webhook_id, url: w.url, reason }, traceparent });
      return reason;
    });
    if (disabled) {
      this.o.log.warn({ webhookId: row.webhook_id, orgId: row.org_id, reason: disabled, traceId, spanId }, 'webhook disabled');
      // A fan-out write that was under way as the disable committed may have left rows pending: they fail too.
      await deliveries.failPendingAfterWrites(this.o.pool, row.webhook_id, 'webhook disabled after failing continuously');
    } else if (retryInMs !== undefined && retryInMs < TIMER_LIMIT_MS) {
      // Short waits get a timer for precision; longer ones are found by the poll (no timer per parked row).
      const t = setTimeout(() => {
        this.retryTimers.delete(t);
        this.wake();
      }, retryInMs + 5);
      t.unref();
      this.retryTimers.add(t);
    }
  }

  private async prune(): Promise<void> {
    try {
      while ((await deliveries.pruneFinished(this.o.pool, this.o.retentionMs)) === 5000 && !this.loop.isStopping);
    } catch (err) {
      this.o.log.warn({ err }, 'webhook worker: pruning the delivery log failed');
    }
  }
}
