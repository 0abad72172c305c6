import { Client } from 'pg';

interface Log {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ClaimLoopOptions<T> {
  /** Names the loop in log lines, e.g. "campaign sender". */
  name: string;
  /** A dedicated connection LISTENs here (pool connections cannot hold a LISTEN). */
  databaseUrl: string;
  /** NOTIFY channel that new or newly due work is announced on. */
  channel: string;
  /** Poll interval: catches work that fell due by time and notifications lost while reconnecting. */
  pollMs: number;
  /** Items worked on at once by this instance. */
  concurrency: number;
  /** Take up to `free` due items (FOR UPDATE SKIP LOCKED with a lease, so instances share the table). */
  claim(free: number): Promise<T[]>;
  /** Do one claimed item; an error is logged and the item comes back when its lease ends. */
  work(item: T): Promise<void>;
  /** Fields that identify an item in log lines. */
  describe?(item: T): object;
  log: Log;
}

/**
 * The loop every table-backed job queue here shares (automation runs and campaigns, crm reports and lead
 * syncs): a table row is the durable unit of work, claimed under a lease so several instances can share the
 * table and a crashed instance's work is taken up again. The loop wakes on NOTIFY (a committed new row starts
 * at once), on a poll (work due by time), and whenever an item finishes (a free slot); it keeps claiming
 * while every slot it offered was filled.
 */
export class ClaimLoop<T> {
  private readonly active = new Set<Promise<void>>();
  private listener?: Client;
  private pollTimer?: NodeJS.Timeout;
  private listenRetry?: NodeJS.Timeout;
  private wanted = false;
  private filling = false;
  private stopping = false;
  private stopped: Promise<void> = Promise.resolve();
  private signalStop: () => void = () => undefined;

  constructor(private readonly opts: ClaimLoopOptions<T>) {}

  get isStopping(): boolean {
    return this.stopping;
  }

  /** Items in hand right now. */
  get busy(): number {
    return this.active.size;
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.stopped = new Promise((r) => (this.signalStop = r));
    await this.listen();
    this.pollTimer = setInterval(() => this.wake(), this.opts.pollMs);
    // Work that fell due while no instance was running.
    this.wake();
  }

  /** Stop claiming, let the items in hand finish (their work() should notice isStopping), drop the LISTEN. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.signalStop();
    clearInterval(this.pollTimer);
    clearTimeout(this.listenRetry);
    await Promise.allSettled([...this.active]);
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
  }

  /** Sleep that stop() cuts short. */
  async sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((r) => (timer = setTimeout(r, ms))), this.stopped]);
    clearTimeout(timer);
  }

  wake(): void {
    this.wanted = true;
    if (!this.filling && !this.stopping) void this.fill();
  }

  private async fill(): Promise<void> {
    this.filling = true;
    try {
      while (this.wanted && !this.stopping) {
        this.wanted = false;
        const free = this.opts.concurrency - this.active.size;
        if (free <= 0) break;
        const claimed = await this.opts.claim(free);
        for (const item of claimed) {
          const p: Promise<void> = this.opts
            .work(item)
            .catch((err) => this.opts.log.error({ err, ...this.opts.describe?.(item) }, `${this.opts.name}: work crashed; it resumes when its lease ends`))
            .finally(() => {
              this.active.delete(p);
              this.wake();
            });
          this.active.add(p);
        }
        // A full batch: there may be more due than slots; look again once the loop comes round.
        if (claimed.length === free) this.wanted = true;
      }
    } catch (err) {
      this.opts.log.warn({ err }, `${this.opts.name}: could not claim work; retrying at the next poll`);
    } finally {
      this.filling = false;
    }
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.opts.databaseUrl });
    client.on('notification', () => this.wake());
    const lost = (err?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.stopping) return;
      this.opts.log.warn({ err }, `${this.opts.name}: LISTEN connection lost; polling until it is back`);
      this.relisten();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    await client.connect();
    await client.query(`LISTEN ${this.opts.channel}`);
    this.listener = client;
  }

  private relisten(): void {
    if (this.stopping) return;
    this.listenRetry = setTimeout(() => {
      this.listen().catch(() => this.relisten());
    }, 1000);
  }
}
