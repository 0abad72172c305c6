/**
 * Totals of large filtered lists, remembered briefly per crm instance. Counting 25k matching rows on every
 * page turn is the one cost of a list that grows with the organization; a total of that size that is a few
 * seconds old is not something a person can tell. Each entry also remembers the organization's contact
 * count: any create or delete in the org changes it, and the entry is then ignored, so only changes to
 * existing contacts (status, tags, ...) can make a cached total lag, for at most `ttlMs`. Totals below
 * `minTotal` are never cached: small lists are always counted exactly.
 */
export class TotalCache {
  private readonly entries = new Map<string, { total: number; orgTotal: number; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly minTotal: number,
    private readonly maxEntries = 10_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get(key: string): { total: number; orgTotal: number } | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  offer(key: string, total: number, orgTotal: number): void {
    if (!this.enabled) return;
    if (total < this.minTotal) {
      this.entries.delete(key);
      return;
    }
    this.entries.delete(key);
    this.entries.set(key, { total, orgTotal, expires: Date.now() + this.ttlMs });
    // Map keeps insertion order: the first key is the oldest.
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}
