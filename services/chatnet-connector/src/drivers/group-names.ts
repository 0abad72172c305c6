/**
 * The names of the groups a session sees, asked of the network once per group and kept a few minutes: a busy
 * group writes many messages a minute and its name rarely changes, so one lookup serves them all and a rename
 * shows within `ttlMs`. A lookup never holds a message back for long and never fails it: past `timeoutMs`, or
 * when the network errs, the message goes on without a name (and the failure is remembered for `failureTtlMs`,
 * so a network that is down is not asked again for every message).
 */
export interface GroupNamesOptions {
  /** Asks the network; resolves with the name, or undefined when the network does not know the group. */
  lookup(groupId: string): Promise<string | undefined>;
  ttlMs?: number;
  failureTtlMs?: number;
  timeoutMs?: number;
  /** At most this many groups are remembered; the oldest entry goes first. */
  maxEntries?: number;
  now?: () => number;
  onError?: (err: unknown, groupId: string) => void;
}

interface Entry {
  name: Promise<string | undefined>;
  expiresAt: number;
}

export class GroupNames {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly failureTtlMs: number;
  private readonly timeoutMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly o: GroupNamesOptions) {
    this.ttlMs = o.ttlMs ?? 5 * 60_000;
    this.failureTtlMs = o.failureTtlMs ?? 30_000;
    this.timeoutMs = o.timeoutMs ?? 3_000;
    this.maxEntries = o.maxEntries ?? 5_000;
    this.now = o.now ?? Date.now;
  }

  /**
   * The group's name, or undefined when the network cannot say now. Messages of one group that wait together
   * share one lookup and resolve in the order they asked, so their order is kept.
   */
  name(groupId: string): Promise<string | undefined> {
    const hit = this.entries.get(groupId);
    if (hit && hit.expiresAt > this.now()) return hit.name;
    // Kept until its lookup settles; then for ttlMs (a name) or failureTtlMs (no answer).
    const entry = { expiresAt: Number.POSITIVE_INFINITY } as Entry;
    entry.name = this.fetch(groupId, entry);
    this.entries.delete(groupId);
    this.entries.set(groupId, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return entry.name;
  }

  private async fetch(groupId: string, entry: Entry): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.timeoutMs)));
    let name: string | undefined;
    let ok = true;
    try {
      const got = await Promise.race([this.o.lookup(groupId), timeout]);
      if (got === 'timeout') throw new Error(`group info took longer than ${this.timeoutMs} ms`);
      name = got?.trim() || undefined;
    } catch (err) {
      ok = false;
      this.o.onError?.(err, groupId);
    } finally {
      clearTimeout(timer);
    }
    entry.expiresAt = this.now() + (ok ? this.ttlMs : this.failureTtlMs);
    return name;
  }
}
