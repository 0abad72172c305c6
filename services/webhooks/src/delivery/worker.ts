import { withTransaction, type Pool } from '@crm/db';
import type { SecretBox } from '@crm/crypto';
import { enqueueEvent } from '@crm/events';
import type { Logger } from '@crm/logger';
import { Batcher } from '../db/batcher';
import * as deliveries from '../db/deliveries.repo';
import * as webhooks from '../db/webhooks.repo';
import { secretAad } from '../deps';
import { DISABLED_EVENT_TYPE } from '../domain/event-types';
import { secretKey } from '../domain/signing';
import type { AttemptResult, WebhookSender } from './sender';

export interface WorkerOptions {
  pool: Pool;
  log: Logger;
  box: SecretBox;
  sender: WebhookSender;
  /** Waits before retry 1, 2, ...; after the last, the delivery fails. */
  schedule: number[];
  /** Continuous failure after which an endpoint is disabled. */
  disableAfterMs: number;
  concurrency: number;
  pollMs: number;
  /** How long a claimed row stays invisible to other workers: longer than any attempt can take. */
  leaseMs: number;
  retentionMs: number;
}

const PRUNE_EVERY_MS = 3_600_000;
const TIMER_LIMIT_MS = 60_000;

function human(ms: number): string {
  if (ms >= 86_400_000) return `${(ms / 86_400_000).toFixed(1).replace(/\.0$/, '')} days`;
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1).replace(/\.0$/, '')} hours`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} minutes`;
  return `${Math.round(ms / 1000)} seconds`;
}

/**
 * Works the delivery queue in PostgreSQL: claims due deliveries (SKIP LOCKED, so replicas share the
 * queue), sends each, records the attempt and either finishes the delivery or schedules its next attempt.
 * New deliveries wake it at once (wake()); retries due later wake it with a timer in the process that
 * scheduled them, and a slow poll catches everything else (another replica's retries, a lapsed lease).
 */
export class DeliveryWorker {
  private readonly o: WorkerOptions;
  private inFlight = new Set<Promise<void>>();
  private claiming = false;
  private wanted = false;
  private stopping = false;
  private pollTimer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private retryTimers = new Set<NodeJS.Timeout>();
  private readonly successes: Batcher<deliveries.Success>;

  constructor(opts: WorkerOptions) {
    this.o = opts;
    this.successes = new Batcher((items) => deliveries.recordSuccesses(opts.pool, items));
  }

  start(): void {
    this.stopping = false;
    this.pollTimer = setInterval(() => this.wake(), this.o.pollMs);
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    // Whatever was left pending by the previous run (a restart, a crash) is due now or soon.
    this.wake();
  }

  /** Stop claiming, let attempts in flight finish and be recorded. Pending rows simply wait in the table. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.pollTimer);
    clearInterval(this.pruneTimer);
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    while (this.claiming || this.inFlight.size > 0) await Promise.race([...this.inFlight, new Promise((r) => setTimeout(r, 20))]);
  }

  wake(): void {
    this.wanted = true;
    if (this.claiming || this.stopping) return;
    this.claiming = true;
    void this.claimLoop().finally(() => {
      this.claiming = false;
      // An attempt that finished while this pass was ending found `claiming` still set.
      if (this.wanted && !this.stopping && this.inFlight.size < this.o.concurrency) this.wake();
    });
  }

  private async claimLoop(): Promise<void> {
    try {
      while (this.wanted && !this.stopping) {
        this.wanted = false;
        const room = this.o.concurrency - this.inFlight.size;
        if (room <= 0) {
          // A finishing attempt calls wake() again.
          this.wanted = true;
          return;
        }
        const rows = await deliveries.claimDue(this.o.pool, room, this.o.leaseMs);
        for (const row of rows) this.track(this.attempt(row));
        if (rows.length === room) this.wanted = true;
      }
    } catch (err) {
      this.o.log.warn({ err }, 'webhook worker: claiming deliveries failed; will retry');
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => {
      this.inFlight.delete(p);
      if (this.wanted && !this.stopping) this.wake();
    });
  }

  private async attempt(row: deliveries.ClaimedDelivery): Promise<void> {
    const trigger: deliveries.AttemptTrigger = row.manual ? 'manual' : 'auto';
    try {
      let key: Buffer | undefined;
      try {
        key = secretKey(this.o.box.decrypt(row.secret_enc, secretAad(row.org_id, row.webhook_id)));
      } catch (err) {
        this.o.log.error({ err, webhookId: row.webhook_id }, 'webhook worker: secret cannot be decrypted');
      }
      const result: AttemptResult = key
        ? await this.o.sender.send({ url: row.url, id: row.event_id, body: row.payload, key })
        : { ok: false, statusCode: null, durationMs: 0, error: 'the signing secret cannot be decrypted', responseBody: '', responseBodyTruncated: false, startedAt: new Date() };
      if (result.ok) await this.successes.add({ delivery: row, trigger, result });
      else await this.recordFailure(row, trigger, result);
    } catch (err) {
      // Not recorded (database unreachable): the lease runs out and the delivery is attempted again.
      this.o.log.error({ err, deliveryId: row.id }, 'webhook worker: recording an attempt failed');
    }
  }

  private async recordFailure(row: deliveries.ClaimedDelivery, trigger: deliveries.AttemptTrigger, result: AttemptResult): Promise<void> {
    const retryInMs = row.one_shot ? undefined : this.o.schedule[row.retries];
    const disabled = await withTransaction(this.o.pool, async (db) => {
      if (!(await deliveries.recordFailure(db, row, trigger, result, retryInMs))) return undefined;
      const w = await webhooks.recordFailure(db, row.webhook_id);
      if (!w || !w.active || w.failingForMs < this.o.disableAfterMs) return undefined;
      const reason = `failing continuously for ${human(w.failingForMs)} (last error: ${result.error ?? 'unknown'})`;
      await webhooks.disable(db, row.webhook_id, reason);
      await deliveries.failPending(db, row.webhook_id, 'webhook disabled after failing continuously');
      // In the same transaction as the disable, so the notification is sent if and only if it happened.
      await enqueueEvent(db, { type: DISABLED_EVENT_TYPE, orgId: w.orgId, data: { webhookId: row.webhook_id, url: w.url, reason } });
      return reason;
    });
    if (disabled) {
      this.o.log.warn({ webhookId: row.webhook_id, orgId: row.org_id, reason: disabled }, 'webhook disabled');
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
      while ((await deliveries.pruneFinished(this.o.pool, this.o.retentionMs)) === 5000 && !this.stopping);
    } catch (err) {
      this.o.log.warn({ err }, 'webhook worker: pruning the delivery log failed');
    }
  }
}
