/**
 * Answers asked of the network once per key and kept a few minutes (group names, sender profiles): a busy thread
 * writes many messages a minute and the answer rarely changes, so one lookup serves them all and a change shows
 * within `ttlMs`. A lookup never holds a message back for long and never fails it: past `timeoutMs`, or when the
 * network errs, the caller goes on without an answer, and the failure is remembered for `failureTtlMs` so a network
 * that is down is not asked again for every message. Callers that wait together share one lookup and resolve in the
 * order they asked, so the messages keep theirs.
 */
export interface LookupCacheOptions<T> {
  /** What is looked up, for the timeout's error message ("group info"). */
  what: string;
  /** Asks the network; resolves with the answer, or undefined when the network does not know the key. */
  lookup(key: string): Promise<T | undefined>;
  ttlMs?: number;
  failureTtlMs?: number;
  timeoutMs?: number;
  /** At most this many keys are remembered; the oldest entry goes first. */
  maxEntries?: number;
  now?: () => number;
  onError?: (err: unknown, key: string) => void;
}

interface Entry<T> {
  answer: Promise<T | undefined>;
  expiresAt: number;
}

export class LookupCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly ttlMs: number;
  private readonly failureTtlMs: number;
  private readonly timeoutMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly o: LookupCacheOptions<T>,
    defaultMaxEntries: number,
  ) {
    this.ttlMs = o.ttlMs ?? 5 * 60_000;
    this.failureTtlMs = o.failureTtlMs ?? 30_000;
    this.timeoutMs = o.timeoutMs ?? 3_000;
    this.maxEntries = o.maxEntries ?? defaultMaxEntries;
    this.now = o.now ?? Date.now;
  }

  /** The answer for `key`, or undefined when the network cannot say now. */
  get(key: string): Promise<T | undefined> {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.answer;
    // Kept until its lookup settles; then for ttlMs (an answer) or failureTtlMs (none).
    const entry = { expiresAt: Number.POSITIVE_INFINITY } as Entry<T>;
    entry.answer = this.fetch(key, entry);
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return entry.answer;
  }

  private async fetch(key: string, entry: Entry<T>): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.timeoutMs)));
    let answer: T | undefined;
    let ok = true;
    try {
      const got = await Promise.race([this.o.lookup(key), timeout]);
      if (got === 'timeout') throw new Error(`${this.o.what} took longer than ${this.timeoutMs} ms`);
      answer = got;
    } catch (err) {
      ok = false;
      this.o.onError?.(err, key);
    } finally {
      clearTimeout(timer);
    }
    entry.expiresAt = this.now() + (ok ? this.ttlMs : this.failureTtlMs);
    return answer;
  }
}
