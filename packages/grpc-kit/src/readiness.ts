import type { Logger } from '@crm/logger';

/**
 * One dependency a server needs to do its work (its PostgreSQL, RabbitMQ, Redis): resolves when it answers;
 * rejects, or resolves `false`, when it does not.
 */
export type ReadinessCheck = () => Promise<unknown>;

export interface ReadinessOptions {
  /** A check that has not answered within this long counts as failed (below the gateway's 2 s health deadline). */
  timeoutMs?: number;
  /** A report this young is answered again without running the checks: probes come from every gateway, often. */
  cacheMs?: number;
  /** Logs when the server turns not ready (naming the failed checks) and when it is ready again. */
  log?: Logger;
  now?: () => number;
}

export interface ReadinessReport {
  ready: boolean;
  /** The failed checks with why, e.g. `{ postgres: 'timed out after 1000 ms' }`. */
  failed: Record<string, string>;
}

const DEFAULT_TIMEOUT_MS = 1000;
const DEFAULT_CACHE_MS = 1000;

/**
 * The named checks behind a server's health answer. All run together, each bounded by `timeoutMs`; the report
 * is cached for `cacheMs` and concurrent callers share one run. A check still pending from an earlier run (a
 * dependency that hangs rather than refuses) is awaited again instead of being started a second time, so a hung
 * server never accumulates queries from the probes.
 */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly pending = new Map<string, Promise<unknown>>();
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private readonly now: () => number;
  private last?: { at: number; report: ReadinessReport };
  private running?: Promise<ReadinessReport>;

  constructor(private readonly opts: ReadinessOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.cacheMs = opts.cacheMs ?? DEFAULT_CACHE_MS;
    this.now = opts.now ?? Date.now;
  }

  add(name: string, check: ReadinessCheck): this {
    if (this.checks.has(name)) throw new Error(`Readiness check "${name}" is already registered`);
    this.checks.set(name, check);
    this.last = undefined;
    return this;
  }

  get size(): number {
    return this.checks.size;
  }

  report(): Promise<ReadinessReport> {
    if (this.last && this.now() - this.last.at < this.cacheMs) return Promise.resolve(this.last.report);
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<ReadinessReport> {
    const failed: Record<string, string> = {};
    await Promise.all(
      [...this.checks.keys()].map(async (name) => {
        const reason = await this.runOne(name);
        if (reason !== undefined) failed[name] = reason;
      }),
    );
    const report = { ready: Object.keys(failed).length === 0, failed };
    const wasReady = this.last?.report.ready ?? true;
    if (wasReady && !report.ready) this.opts.log?.warn({ failed }, 'not ready: a dependency does not answer');
    if (!wasReady && report.ready) this.opts.log?.info('ready again: every dependency answers');
    this.last = { at: this.now(), report };
    return report;
  }

  /** undefined when the check passed, else why it failed. */
  private async runOne(name: string): Promise<string | undefined> {
    let call = this.pending.get(name);
    if (!call) {
      // Promise.resolve().then: a check that throws synchronously fails like a rejected one.
      call = Promise.resolve().then(this.checks.get(name)!);
      this.pending.set(name, call);
      const forget = () => {
        if (this.pending.get(name) === call) this.pending.delete(name);
      };
      call.then(forget, forget);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`timed out after ${this.timeoutMs} ms`), this.timeoutMs);
    });
    const outcome = call.then(
      (value) => (value === false ? 'check returned false' : undefined),
      (err: unknown) => (err instanceof Error ? err.message : String(err)) || 'check failed',
    );
    return Promise.race([outcome, timeout]).finally(() => clearTimeout(timer));
  }
}
