import { Pool } from 'pg';

export interface CoalescedReadsOptions<K, V> {
  /** The key's identity: two asks with the same one share a row (normalise case here). */
  keyOf: (key: K) => string;
  /** One key alone in its turn: the ordinary single-row read. */
  one: (db: Pool, key: K) => Promise<V | undefined>;
  /** Several keys: one query for all of them, each row given with its key (as `keyOf` makes it). */
  many: (db: Pool, keys: K[]) => Promise<Iterable<[string, V]>>;
}

interface Waiting<K, V> {
  key: K;
  answers: { resolve: (v: V | undefined) => void; reject: (err: unknown) => void }[];
}

/**
 * Reads of one row by key, asked of a pool in the same turn of the event loop, answered by one query. A service's
 * calls arrive together when its callers batch them (grpc-kit's call-batch.ts): 50 profile reads at once cost a
 * PostgreSQL backend 50 µs each as 50 statements, 6 µs each as one (bench/gateway/floor, session 46). Only for reads
 * on the pool itself: a read inside a transaction must see that transaction's writes, and goes straight to it.
 * Nothing waits longer than the end of its turn (setImmediate), so a read alone costs what it did.
 */
export function coalescedReads<K, V>(opts: CoalescedReadsOptions<K, V>): (db: Pool, key: K) => Promise<V | undefined> {
  const pending = new WeakMap<Pool, Map<string, Waiting<K, V>>>();

  const flush = (db: Pool) => {
    const waiting = pending.get(db);
    pending.delete(db);
    if (!waiting) return;
    const all = [...waiting.values()];
    if (all.length === 1) {
      const [w] = all;
      opts.one(db, w.key).then(
        (v) => w.answers.forEach((a) => a.resolve(v)),
        (err) => w.answers.forEach((a) => a.reject(err)),
      );
      return;
    }
    opts
      .many(
        db,
        all.map((w) => w.key),
      )
      .then(
        (rows) => {
          const found = new Map(rows);
          for (const [id, w] of waiting) w.answers.forEach((a) => a.resolve(found.get(id)));
        },
        (err) => all.forEach((w) => w.answers.forEach((a) => a.reject(err))),
      );
  };

  return (db, key) =>
    new Promise<V | undefined>((resolve, reject) => {
      let waiting = pending.get(db);
      if (!waiting) {
        pending.set(db, (waiting = new Map()));
        setImmediate(() => flush(db));
      }
      const id = opts.keyOf(key);
      let w = waiting.get(id);
      if (!w) waiting.set(id, (w = { key, answers: [] }));
      w.answers.push({ resolve, reject });
    });
}

/** A pool (reads may be coalesced), not a client checked out for a transaction (they may not). */
export const isPool = (db: unknown): db is Pool => db instanceof Pool;
