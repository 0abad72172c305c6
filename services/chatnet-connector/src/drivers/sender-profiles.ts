/**
 * Who wrote a message (name and avatar), asked of the network once per user and kept a few minutes: the
 * listener's messages carry a display name but never an avatar, and a customer writing ten messages in a
 * minute needs one lookup, not ten. Like the group names (group-names.ts), a lookup never holds a message back
 * for long and never fails it: past `timeoutMs`, or when the network errs, the message goes on with what it
 * carried, and the failure is remembered for `failureTtlMs` so a network that is down is not asked per message.
 */
export interface SenderProfile {
  displayName: string;
  avatarUrl: string;
}

export interface SenderProfilesOptions {
  /** Asks the network; resolves with the profile, or undefined when the network does not know the user. */
  lookup(uid: string): Promise<SenderProfile | undefined>;
  ttlMs?: number;
  failureTtlMs?: number;
  timeoutMs?: number;
  /** At most this many users are remembered; the oldest entry goes first. */
  maxEntries?: number;
  now?: () => number;
  onError?: (err: unknown, uid: string) => void;
}

interface Entry {
  profile: Promise<SenderProfile | undefined>;
  expiresAt: number;
}

export class SenderProfiles {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly failureTtlMs: number;
  private readonly timeoutMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly o: SenderProfilesOptions) {
    this.ttlMs = o.ttlMs ?? 5 * 60_000;
    this.failureTtlMs = o.failureTtlMs ?? 30_000;
    this.timeoutMs = o.timeoutMs ?? 3_000;
    this.maxEntries = o.maxEntries ?? 10_000;
    this.now = o.now ?? Date.now;
  }

  /** The user's profile, or undefined when the network cannot say now. Callers waiting together share one lookup. */
  profile(uid: string): Promise<SenderProfile | undefined> {
    const hit = this.entries.get(uid);
    if (hit && hit.expiresAt > this.now()) return hit.profile;
    // Kept until its lookup settles; then for ttlMs (an answer) or failureTtlMs (none).
    const entry = { expiresAt: Number.POSITIVE_INFINITY } as Entry;
    entry.profile = this.fetch(uid, entry);
    this.entries.delete(uid);
    this.entries.set(uid, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return entry.profile;
  }

  private async fetch(uid: string, entry: Entry): Promise<SenderProfile | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.timeoutMs)));
    let profile: SenderProfile | undefined;
    let ok = true;
    try {
      const got = await Promise.race([this.o.lookup(uid), timeout]);
      if (got === 'timeout') throw new Error(`user info took longer than ${this.timeoutMs} ms`);
      profile = got;
    } catch (err) {
      ok = false;
      this.o.onError?.(err, uid);
    } finally {
      clearTimeout(timer);
    }
    entry.expiresAt = this.now() + (ok ? this.ttlMs : this.failureTtlMs);
    return profile;
  }
}
