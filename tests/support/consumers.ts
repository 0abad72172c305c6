import { parseSamples } from '@crm/metrics';
import { eventually } from '@crm/testing';
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
