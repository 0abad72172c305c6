import { authKeys, parseApiKeyGrant, type ApiKeyGrant } from '@crm/auth';
import type { Redis } from '../redis';

/** Cache value identity writes over a revoked key's Redis entry (a tombstone). */
export const REVOKED = 'revoked';
/** Cache value for a key identity refused (the negative cache). */
export const INVALID = 'invalid';

interface Entry {
  /** The grant of a valid key, or INVALID. */
  value: ApiKeyGrant | typeof INVALID;
  /** The Redis value it came from (a resync compares it). */
  raw: string;
  expiresAt: number;
}

/** Hashes per MGET in a resync. */
const MGET_CHUNK = 500;
/**
 * How long a revocation message is remembered: a lookup that was in flight when the key was revoked (or its user's
 * access changed) must not put the old answer back into the cache after the message dropped it.
 */
const DROPPED_HOLD_MS = 30_000;

/**
 * API-key hash → grant (or "invalid"), in process: a bounded LRU whose entries expire after the same times the
 * shared Redis cache uses. A revocation reaches it through identity's message on `auth:api-key-revocations`
 * ({@link drop}); a change of a bound user's access through `auth:revocations` ({@link dropUser}); a gateway that
 * missed either finds the Redis entry changed at its next {@link resync}.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly dropped = new Map<string, number>();
  /** userId → epoch ms of the last access change heard: a grant of that user issued before it is stale. */
  private readonly userChanges = new Map<string, { at: number; until: number }>();
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

  /** The grant, INVALID, or undefined when unknown or expired. A hit becomes the most recently used. */
  get(hash: string, now = Date.now()): ApiKeyGrant | typeof INVALID | undefined {
    const e = this.entries.get(hash);
    if (!e) return undefined;
    this.entries.delete(hash);
    if (e.expiresAt <= now) return undefined;
    this.entries.set(hash, e);
    return e.value;
  }

  /** Whether a grant (from identity or Redis) predates a revocation or access change this instance heard of. */
  isStale(hash: string, grant: ApiKeyGrant): boolean {
    if (this.dropped.has(hash)) return true;
    const change = grant.userId ? this.userChanges.get(grant.userId) : undefined;
    return change !== undefined && grant.issuedAt <= change.at;
  }

  setValid(hash: string, grant: ApiKeyGrant, raw: string): void {
    // A message that arrived while this key was being verified wins over the verification.
    if (this.isStale(hash, grant)) return;
    this.put(hash, grant, raw, this.validMs);
  }

  setInvalid(hash: string): void {
    this.put(hash, INVALID, INVALID, this.invalidMs);
  }

  /** A revocation message: the key stops working here at once. */
  drop(hash: string): void {
    this.dropped.set(hash, Date.now() + DROPPED_HOLD_MS);
    this.setInvalid(hash);
  }

  /**
   * A user's access changed (deactivation, role change): the grants of keys bound to them are forgotten, so their
   * next use asks identity again (refused, or with the new role).
   */
  dropUser(userId: string, at: number): void {
    // Held as long as a stale answer could still sit in Redis (identity deletes it, but one in flight may land after).
    this.userChanges.set(userId, { at, until: Date.now() + Math.max(DROPPED_HOLD_MS, this.validMs) });
    for (const [hash, e] of this.entries) if (e.value !== INVALID && e.value.userId === userId) this.entries.delete(hash);
  }

  /**
   * Re-read the Redis entries of the keys cached as valid: a tombstone there means we missed a revocation message;
   * an entry gone or changed means identity's answer changed (its user's access), so ours is forgotten.
   */
  async resync(): Promise<void> {
    const valid = [...this.entries].filter(([, e]) => e.value !== INVALID);
    const chunks: Promise<(string | null)[]>[] = [];
    for (let i = 0; i < valid.length; i += MGET_CHUNK) chunks.push(this.redis.mGet(valid.slice(i, i + MGET_CHUNK).map(([h]) => this.keys.apiKey(h))));
    const values = (await Promise.all(chunks)).flat();
    valid.forEach(([hash, e], i) => {
      if (values[i] === REVOKED) this.drop(hash);
      else if (values[i] !== e.raw && this.entries.get(hash) === e) this.entries.delete(hash);
    });
  }

  prune(now = Date.now()): void {
    for (const [hash, until] of this.dropped) if (until <= now) this.dropped.delete(hash);
    for (const [id, c] of this.userChanges) if (c.until <= now) this.userChanges.delete(id);
    for (const [hash, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(hash);
  }

  private put(hash: string, value: Entry['value'], raw: string, ttlMs: number): void {
    this.entries.delete(hash);
    if (ttlMs <= 0) return;
    this.entries.set(hash, { value, raw, expiresAt: Date.now() + ttlMs });
    // Map iteration follows insertion order: the first entry is the least recently used.
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/** A Redis value as the cache reads it: a grant, INVALID, REVOKED, or undefined for nothing usable. */
export function readShared(raw: string | null): ApiKeyGrant | typeof INVALID | typeof REVOKED | undefined {
  if (raw === INVALID || raw === REVOKED) return raw;
  return parseApiKeyGrant(raw);
}
