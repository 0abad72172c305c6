import { NotifyListener } from './notify-listener';

interface Log {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ClaimLoopOptions<T> {
  /** Names the loop in log lines, e.g. "campaign sender". */
  name: string;
  /** A dedicated connection LISTENs here (pool connections cannot hold a LISTEN): a service's DATABASE_DIRECT_URL. */
  databaseUrl: string;
  /** NOTIFY channel that new or newly due work is announced on. */
  channel: string;
  /**
   * Poll interval: catches work that fell due by time and notifications lost while reconnecting. A loop with
   * `nextDueInMs` needs none (it sleeps until the nearest due item instead): leave it out.
   */
  pollMs?: number;
  /**
   * The timer facility (ARCHITECTURE.md, Timers): how long until the nearest item falls due (measured by the
   * database's clock; 0 or less: due now; null: nothing is waiting), counting a leased item as due when its lease
   * ends. Asked after every look at the table; the loop then sleeps until that moment, and a NOTIFY on `channel`
   * (an earlier item written) or a reconnect of the LISTEN connection wakes it sooner. No fixed interval decides
   * when an item fires.
   */
  nextDueInMs?(): Promise<number | null>;
  /** Items worked on at once by this instance. */
  concurrency: number;
  /**
   * A channel whose notifications carry a payload the owner reads (e.g. the ids of new rows); the loop
   * claims after it, without asking for a look at the table (`due` is false unless something else asked).
   */
  onNotification?(payload: string): void;
  /**
   * Take up to `free` due items (FOR UPDATE SKIP LOCKED with a lease, so instances share the table). `due`:
   * something asked for a look at the table since the last claim (start, the poll, a NOTIFY, a reconnect of
   * the LISTEN connection, wake()); false when the loop only comes round again (a full batch, a free slot).
   * A plain list means: claim again at once when it filled every slot, and again whenever a slot frees. An
   * owner that knows better answers `again` (look again at once) and `left` (work stayed behind for lack of
   * a slot: look again when one frees).
   */
  claim(free: number, due: boolean): Promise<T[] | ClaimBatch<T>>;
  /** Do one claimed item; an error is logged and the item comes back when its lease ends. */
  work(item: T): Promise<void>;
  /** Fields that identify an item in log lines. */
  describe?(item: T): object;
  log: Log;
}

/** A claim that says whether to come round again: at once (`again`) or when a slot frees (`left`). */
export interface ClaimBatch<T> {
  items: T[];
  again: boolean;
  left: boolean;
}

/**
 * The loop every table-backed job queue here shares (automation runs and campaigns, crm reports and lead
 * syncs): a table row is the durable unit of work, claimed under a lease so several instances can share the
 * table and a crashed instance's work is taken up again. The loop wakes on NOTIFY (a committed new row starts
 * at once), on a poll (work due by time), on a reconnect of the LISTEN connection (notifications sent while
 * it was down are lost) and whenever an item finishes (a free slot); it keeps claiming while every slot it
 * offered was filled. An owner with its own bounds (the webhook worker's per-endpoint slots, its announced
 * ids) answers a ClaimBatch and calls nudge() when a slot of its own frees.
 */
export class ClaimLoop<T> {
  private readonly active = new Set<Promise<void>>();
  private readonly listener: NotifyListener;
  private pollTimer?: NodeJS.Timeout;
  /** With nextDueInMs: the wake-up set for the nearest due item, and which question set it. */
  private dueTimer?: NodeJS.Timeout;
  private dueAsked = 0;
  /** The loop should come round (again). */
  private wanted = false;
  /** A look at the table was asked for since the last claim. */
  private due = false;
  /** The last claim left work behind for lack of a slot: a free slot claims again. */
  private left = true;
  private filling = false;
  /** The claim under way, for stop() to wait for. */
  private fillRun: Promise<void> = Promise.resolve();
  /**
   * Claims and adoptions take turns: each counts the free slots and takes its items before the next one starts.
   * The one under way (settled when it has), undefined when none is.
   */
  private turn?: Promise<void>;
  private stopping = false;
  private stopped: Promise<void> = Promise.resolve();
  private signalStop: () => void = () => undefined;

  constructor(private readonly opts: ClaimLoopOptions<T>) {
    this.listener = new NotifyListener({
      name: opts.name,
      databaseUrl: opts.databaseUrl,
      channel: opts.channel,
      log: opts.log,
      onNotification: (payload) => {
        if (opts.onNotification) {
          opts.onNotification(payload);
          this.nudge();
        } else this.wake();
      },
      onConnected: () => this.wake(),
    });
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  /** Items in hand right now. */
  get busy(): number {
    return this.active.size;
  }

  /** Whether notifications are being received right now (tests, health). */
  get listening(): boolean {
    return this.listener.connected;
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.stopped = new Promise((r) => (this.signalStop = r));
    // A LISTEN that cannot connect is retried in the background; the poll finds the work meanwhile.
    await this.listener.start();
    if (this.opts.pollMs) this.pollTimer = setInterval(() => this.wake(), this.opts.pollMs);
    // Work that fell due while no instance was running.
    this.wake();
  }

  /** Stop claiming, let a claim under way and the items in hand finish (their work() should notice isStopping), drop the LISTEN. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.signalStop();
    clearInterval(this.pollTimer);
    clearTimeout(this.dueTimer);
    await this.listener.stop();
    await this.fillRun;
    // An adoption under way (its take and the items it starts).
    await this.turn;
    await Promise.allSettled([...this.active]);
  }

  /** Sleep that stop() cuts short. */
  async sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((r) => (timer = setTimeout(r, ms))), this.stopped]);
    clearTimeout(timer);
  }

  /**
   * Work items claimed outside the loop's own claim (rows an owner inserted already leased to this instance, so
   * that nobody needs to announce or claim them), under the same slots: `take` is told how many slots are free
   * (0 while stopping), runs between the loop's claims, never beside one, and what it returns is worked on at
   * once. Resolves when `take` is done (its items started), rejects with its error.
   */
  async adopt(take: (free: number) => Promise<T[]>): Promise<void> {
    await this.inTurn(async () => {
      const free = this.stopping ? 0 : Math.max(0, this.opts.concurrency - this.active.size);
      this.begin(await take(free));
    });
  }

  /** Look at the table: work may be due. */
  wake(): void {
    this.due = true;
    this.nudge();
  }

  /** Come round again without asking for a look at the table (a slot of the owner's own freed, ids were announced). */
  nudge(): void {
    this.wanted = true;
    if (!this.filling && !this.stopping) {
      this.filling = true;
      this.fillRun = this.fill();
    }
  }

  private async fill(): Promise<void> {
    try {
      while (this.wanted && !this.stopping) {
        this.wanted = false;
        const batch = await this.inTurn(async () => {
          const free = this.opts.concurrency - this.active.size;
          if (free <= 0) return undefined;
          const due = this.due;
          this.due = false;
          const answer = await this.opts.claim(free, due);
          const claimed = Array.isArray(answer) ? { items: answer, again: answer.length === free, left: true } : answer;
          // Before the items start: one that finishes at once must see whether work stayed behind.
          this.left = claimed.left;
          this.begin(claimed.items);
          return claimed;
        });
        if (!batch) {
          this.left = true;
          break;
        }
        // A full batch: there may be more due than slots; look again once the loop comes round.
        if (batch.again) this.wanted = true;
      }
    } catch (err) {
      this.left = true;
      this.opts.log.warn({ err }, `${this.opts.name}: could not claim work; retrying at the next poll`);
    } finally {
      // Cleared with no await after the loop's last look, so a nudge() from here on starts a new fill.
      this.filling = false;
      void this.armNextDue();
    }
  }

  /**
   * Sets the one wake-up for the nearest due item (nextDueInMs). Only the latest question's answer sets it, so a
   * slow answer to an earlier look cannot push the wake-up past an item written since. When the question fails
   * (the database is away), the loop looks again in a second.
   */
  private async armNextDue(): Promise<void> {
    if (!this.opts.nextDueInMs || this.stopping) return;
    const asked = ++this.dueAsked;
    let ms: number | null;
    try {
      ms = await this.opts.nextDueInMs();
    } catch (err) {
      this.opts.log.warn({ err }, `${this.opts.name}: could not read the next due time; looking again in 1 s`);
      ms = 1000;
    }
    if (asked !== this.dueAsked || this.stopping) return;
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    if (ms === null) return;
    // A few ms past the due time, so the database's now() has reached it when the claim runs; setTimeout takes
    // at most 2^31-1 ms (a wake-up that far away is re-armed on the way).
    this.dueTimer = setTimeout(() => this.wake(), Math.min(Math.max(0, ms) + 5, 2 ** 31 - 1));
    this.dueTimer.unref?.();
  }

  /**
   * Runs `fn` once the claim or adoption before it has finished (whether it succeeded or not); at once, in the
   * caller's tick, when none is under way.
   */
  private inTurn<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.turn ? this.turn.then(fn) : fn();
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.turn = settled;
    void settled.then(() => {
      if (this.turn === settled) this.turn = undefined;
    });
    return run;
  }

  /** Works on items taken by a claim or an adoption; each frees its slot when done. */
  private begin(items: T[]): void {
    for (const item of items) {
      const p: Promise<void> = this.opts
        .work(item)
        .catch((err) =>
          this.opts.log.error({ err, ...this.opts.describe?.(item) }, `${this.opts.name}: work crashed; it resumes when its lease ends`),
        )
        .finally(() => {
          this.active.delete(p);
          if (this.left || this.due) this.nudge();
        });
      this.active.add(p);
    }
  }
}
