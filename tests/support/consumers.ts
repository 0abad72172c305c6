import { parseSamples } from '@crm/metrics';
import { eventually } from '@crm/testing';
import type { ClientBase, Pool } from 'pg';
import type { ServiceName, Stack } from './stack';

/**
 * The marker that lets a test assert that something did NOT happen: a consumer's own count of the deliveries
 * it settled (`amqp_messages_consumed_total` of its queue: acked after commit, sent to retry, parked, dropped).
 * A fixed sleep before an absence check passes whether or not the event was handled yet; waiting until the
 * consumer has settled every delivery the test published proves its handling, and so its lack of effect, is
 * over. Unlike a later marker event, this also holds for consumers that run several handlers at once
 * (no order between them) and for redelivered duplicates, which leave no row of their own.
 *
 * Usage: `const mark = await probe.mark()`, publish N events bound to the queue, `await probe.settled(mark, N)`.
 */
export class ConsumerProbe {
  /** `queue` is the consumer's queue name as the service declares it (`<exchange>.automation.triggers`, ...). */
  constructor(
    private readonly stack: Stack,
    private readonly service: ServiceName,
    private readonly queue: string,
  ) {}

  /** Deliveries of the queue settled so far, every outcome included. */
  mark(): Promise<number> {
    return this.count();
  }

  /** Deliveries of the queue settled so far with `outcome` (`ack`, `retry`, `dead`, `dropped`, `refused`), or with any. */
  async count(outcome?: string): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${this.stack.metricsPort(this.service)}/metrics`);
    if (res.status !== 200) throw new Error(`metrics of ${this.service} answered ${res.status}`);
    return parseSamples(await res.text())
      .filter((s) => s.name === 'amqp_messages_consumed_total' && s.labels.queue === this.queue && (!outcome || s.labels.outcome === outcome))
      .reduce((sum, s) => sum + s.value, 0);
  }

  /** Resolves once `count` more deliveries than at `mark` were settled (handled and committed, or given up on). */
  async settled(mark: number, count: number, timeoutMs = 10_000): Promise<void> {
    await eventually(async () => (await this.mark()) >= mark + count, timeoutMs);
  }
}

/**
 * Resolves once `consumer` (its queue name, which is its name in processed_events) has committed its handling of
 * every one of `eventIds`. A consumer with a pool writes that row in the transaction that applies the event, so it
 * exists only once the handler has run and whatever it did (nothing, when an absence check holds) is committed with
 * it: the marker for "this event had its chance". A redelivered copy of an event already processed writes no row of
 * its own; wait for such a copy with ConsumerProbe.
 */
export async function processedBy(db: ClientBase | Pool, consumer: string, eventIds: string[], timeoutMs = 15_000): Promise<void> {
  const ids = [...new Set(eventIds.map((id) => id.toLowerCase()))];
  // No ids would be no marker at all.
  if (ids.length === 0) throw new Error(`processedBy(${consumer}): no event ids to wait for`);
  await eventually(async () => {
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM processed_events WHERE consumer = $1 AND event_id = ANY($2::uuid[])',
      [consumer, ids],
    );
    return rows[0].n === ids.length;
  }, timeoutMs);
}
