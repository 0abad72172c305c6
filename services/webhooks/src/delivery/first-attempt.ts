import type { ClaimedDelivery, FanOutTarget, NewDelivery } from '../db/deliveries.repo';
import type { AttemptResult } from './sender';

/**
 * What became of a first attempt's row: `final` (written finished, with the attempt: nothing left to record),
 * `pending` (written leased to this instance: the attempt is recorded as a claimed delivery's), `unwritten` (the
 * batch's write failed, so the event comes again, or another instance had written the delivery first).
 */
export type FirstAttemptOutcome = 'final' | 'pending' | 'unwritten';

/**
 * A first attempt made before its delivery's row exists: the attempt tells the fan-out its result, the fan-out
 * tells the attempt how its row was written. Each side settles its half once.
 */
export class FirstAttempt {
  result?: AttemptResult;
  readonly sent: Promise<void>;
  readonly outcome: Promise<FirstAttemptOutcome>;
  private settleSent!: () => void;
  private settleOutcome!: (o: FirstAttemptOutcome) => void;

  constructor() {
    this.sent = new Promise((resolve) => (this.settleSent = resolve));
    this.outcome = new Promise((resolve) => (this.settleOutcome = resolve));
  }

  sentWith(result: AttemptResult): void {
    this.result ??= result;
    this.settleSent();
  }

  written(outcome: FirstAttemptOutcome): void {
    this.settleOutcome(outcome);
  }
}

/** A delivery the worker sends before it is written: the row it will be, as a claim would have returned it. */
export type Adopted = ClaimedDelivery & { first?: FirstAttempt };

function unwritten(row: NewDelivery, target: FanOutTarget, attempt: FirstAttempt): Adopted {
  const now = new Date();
  return {
    id: row.id,
    org_id: row.event.orgId,
    webhook_id: row.webhookId,
    event_id: row.event.eventId,
    event_type: row.event.type,
    payload: row.event.payload,
    status: 'pending',
    attempts: 0,
    retries: 0,
    next_attempt_at: null,
    manual: false,
    one_shot: false,
    last_status_code: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    delivered_at: null,
    traceparent: row.event.traceparent ?? null,
    replay_id: null,
    url: target.url,
    secret_enc: target.secret_enc,
    first: attempt,
  };
}

/**
 * The first attempts of one fan-out: which of its deliveries have started, which wait for a slot of their endpoint,
 * and when the round is settled (every delivery started and every request ended, or nothing of it left in flight to
 * free a slot for what waits).
 */
export class FirstRound {
  /** Called when one of the round's requests ends (a slot of its endpoint is free again). */
  onRequestEnd: () => void = () => undefined;
  readonly settled: Promise<void>;
  private readonly waiting: NewDelivery[];
  private readonly targets = new Map<NewDelivery, FanOutTarget>();
  private readonly attempts = new Map<NewDelivery, FirstAttempt>();
  private inFlight = 0;
  private open = true;
  private settle!: () => void;

  constructor(rows: NewDelivery[], targets: FanOutTarget[]) {
    this.waiting = [...rows];
    rows.forEach((row, i) => this.targets.set(row, targets[i]));
    this.settled = new Promise((resolve) => (this.settle = resolve));
  }

  /**
   * Starts, oldest event first, up to `free` waiting deliveries whose endpoint `take` gives a slot (it counts the
   * slot when it does); returns them as the worker works them.
   */
  start(free: number, take: (endpoint: string) => boolean): Adopted[] {
    const started: Adopted[] = [];
    if (!this.open) return started;
    for (let i = 0; i < this.waiting.length && started.length < free;) {
      const row = this.waiting[i];
      if (!take(row.webhookId)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      const attempt = new FirstAttempt();
      this.attempts.set(row, attempt);
      this.inFlight++;
      void attempt.sent.then(() => {
        this.inFlight--;
        // What waits gets the slot (start() looks whether the round is settled after); else the round may be.
        if (this.open && this.waiting.length > 0) this.onRequestEnd();
        else this.check();
      });
      started.push(unwritten(row, this.targets.get(row)!, attempt));
    }
    this.check();
    return started;
  }

  /** Ends the round: each started delivery's state follows its attempt (succeeded, or leased); what waits stays due. */
  close(): Map<NewDelivery, FirstAttempt> {
    this.open = false;
    for (const [row, attempt] of this.attempts) {
      row.result = attempt.result;
      row.state = attempt.result?.ok ? 'succeeded' : 'leased';
    }
    return this.attempts;
  }

  private check(): void {
    if (this.inFlight === 0) this.settle();
  }
}

/** Resolves when `p` does or after `ms`, whichever comes first (the timer is cleared either way). */
export async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
