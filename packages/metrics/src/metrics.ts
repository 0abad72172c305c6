import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds; from a cache hit (a few ms) to a slow report query (10 s). Every duration histogram uses them. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** How long a scrape waits for the on-scrape readings (outbox, queue depths) before answering without them. */
const COLLECT_TIMEOUT_MS = 2_000;

type Collector = () => Promise<void> | void;

let processMetricsByDefault = true;

/**
 * Whether a Metrics made without `processMetrics` collects the process's series (on by default). The test harness
 * turns it off: it runs every service in one jest worker, file after file, and prom-client's process metrics keep a
 * GC observer and an event-loop histogram enabled for ever, with no way to stop them, so each file's services left
 * eight hooks behind that ran on every GC and kept the file's whole module graph alive (~40 MB a file).
 */
export function setProcessMetricsByDefault(on: boolean): void {
  processMetricsByDefault = on;
}

/**
 * One service's metrics: its own registry (not prom-client's global one, because the test stack runs every service
 * in one process and each must show only its own), with a `service` label added to every series at scrape time.
 *
 * Instruments are created on first use and shared by name, so several consumers of one service add to the same
 * counter. Label values must come from bounded sets: a route template, never a path; a queue name, never an id.
 * Readings that cost a query (outbox backlog, queue depth) are taken on scrape by `onCollect` callbacks rather
 * than on a timer, so an unscraped service pays nothing.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly collectors = new Set<Collector>();

  constructor(
    readonly service: string,
    opts: { processMetrics?: boolean } = {},
  ) {
    this.registry.setDefaultLabels({ service });
    // CPU, memory, event-loop delay and GC of the process; off in unit tests that only look at their own series.
    if (opts.processMetrics ?? processMetricsByDefault) collectDefaultMetrics({ register: this.registry });
  }

  counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return (this.registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return (this.registry.getSingleMetric(name) as Gauge<L> | undefined) ?? new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  histogram<L extends string>(name: string, help: string, labelNames: readonly L[] = [], buckets = DURATION_BUCKETS): Histogram<L> {
    return (
      (this.registry.getSingleMetric(name) as Histogram<L> | undefined) ??
      new Histogram({ name, help, labelNames, buckets, registers: [this.registry] })
    );
  }

  /**
   * Run `collect` before every scrape (it sets gauges from a query or a broker call). A collector that fails or
   * is slower than 2 s leaves its gauges at their last value rather than failing the scrape. Returns the removal.
   */
  onCollect(collect: Collector): () => void {
    this.collectors.add(collect);
    return () => this.collectors.delete(collect);
  }

  /** The registry in Prometheus text format, after the on-scrape readings. */
  async scrape(): Promise<string> {
    await Promise.all([...this.collectors].map((collect) => withTimeout(collect, COLLECT_TIMEOUT_MS)));
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

async function withTimeout(collect: Collector, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([Promise.resolve().then(collect), late]);
  } catch {
    // Stale gauges are better than no scrape; the component logs its own failures where it matters.
  } finally {
    clearTimeout(timer);
  }
}
