import { authKeys } from '@crm/auth';
import type { Redis } from '../redis';

/** Cache value identity writes over a rotated key's Redis entry (a tombstone). */
export const REVOKED = 'revoked';
/** Cache value for a key identity refused (the negative cache). */
export const INVALID = 'invalid';

interface Entry {
  /** The organization of a valid key, or INVALID. */
  value: string;
  expiresAt: number;
}

/** Hashes per MGET in a resync. */
const MGET_CHUNK = 500;
/**
 * How long a rotation message is remembered: a lookup that was in flight when the key was rotated must not put the
 * old key back into the cache after the message dropped it.
 */
const DROPPED_HOLD_MS = 30_000;

/**
 * API-key hash → organization (or "invalid"), in process: a bounded LRU whose entries expire after the same times
 * the shared Redis cache uses. Rotation reaches it through identity's message on `auth:api-key-revocations`
 * ({@link drop}); a gateway that missed the message finds the Redis tombstone at its next {@link resync}.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly dropped = new Map<string, number>();
  private readonly keys: ReturnType<typeof authKeys>;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly maxEntries: number,
    private readonly validMs: number,
    private readonly invalidMs: number,
  ) {
    this.keys = authKeys(prefix);
  }

  /** The organization, INVALID, or undefined when unknown or expired. A hit becomes the most recently used. */
  get(hash: string, now = Date.now()): string | undefined {
    const e = this.entries.get(hash);
    if (!e) return undefined;
    this.entries.delete(hash);
    if (e.expiresAt <= now) return undefined;
    this.entries.set(hash, e);
    return e.value;
  }

  setValid(hash: string, orgId: string): void {
    // A rotation message that arrived while this key was being verified wins over the verification.
    if (this.dropped.has(hash)) return;
    this.put(hash, orgId, this.validMs);
  }

  setInvalid(hash: string): void {
    this.put(hash, INVALID, this.invalidMs);
  }

  /** A rotation message: the key stops working here at once. */
  drop(hash: string): void {
    this.dropped.set(hash, Date.now() + DROPPED_HOLD_MS);
    this.put(hash, INVALID, this.invalidMs);
  }

  /** Re-read the Redis entries of the keys cached as valid; a tombstone there means we missed a rotation message. */
  async resync(): Promise<void> {
    const valid = [...this.entries].filter(([, e]) => e.value !== INVALID).map(([hash]) => hash);
    const chunks: Promise<(string | null)[]>[] = [];
    for (let i = 0; i < valid.length; i += MGET_CHUNK) chunks.push(this.redis.mGet(valid.slice(i, i + MGET_CHUNK).map((h) => this.keys.apiKey(h))));
    const values = (await Promise.all(chunks)).flat();
    valid.forEach((hash, i) => {
      if (values[i] === REVOKED) this.drop(hash);
    });
  }

  prune(now = Date.now()): void {
    for (const [hash, until] of this.dropped) if (until <= now) this.dropped.delete(hash);
    for (const [hash, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(hash);
  }

  private put(hash: string, value: string, ttlMs: number): void {
    this.entries.delete(hash);
    if (ttlMs <= 0) return;
    this.entries.set(hash, { value, expiresAt: Date.now() + ttlMs });
    // Map iteration follows insertion order: the first entry is the least recently used.
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}
