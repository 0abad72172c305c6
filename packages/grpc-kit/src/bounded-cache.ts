/**
 * A Map with a bound on its entries, for what a process remembers of values it computed (verified tokens, decrypted
 * keys): past `maxEntries` the oldest tenth goes at once (a Map iterates in insertion order), rather than one entry
 * per insert. No timer: an entry nobody reads just ages out as newer ones come.
 */
export class BoundedCache<V> {
  private readonly map = new Map<string, V>();

  constructor(private readonly maxEntries = 10_000) {}

  has(key: string): boolean {
    return this.map.has(key);
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  set(key: string, value: V): void {
    if (this.map.size >= this.maxEntries) {
      let drop = Math.max(1, Math.floor(this.maxEntries / 10));
      for (const k of this.map.keys()) {
        this.map.delete(k);
        if (--drop === 0) break;
      }
    }
    this.map.set(key, value);
  }
}
