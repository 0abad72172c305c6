import type { Queryable } from '@crm/db';

/** Beyond this many cached orgs, expired entries are dropped on the next load (bounded memory for many tenants). */
const MAX_ENTRIES = 10_000;

/**
 * The conditions some rule of an org scores, cached per org for `ttlMs`, so the event consumer records only
 * facts that can count. A rule or config change made through this process clears the cache at once (after its
 * transaction committed); one made through another replica is seen here within `ttlMs`. Events handled in
 * that window with a condition no rule used before are not recorded: a new rule on a condition nobody used
 * counts from then on, not over the past (rules on conditions already in use still apply to all history).
 */
export class UsedConditions {
  private readonly cache = new Map<string, { conditions: ReadonlySet<string>; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async of(db: Queryable, orgId: string): Promise<ReadonlySet<string>> {
    const hit = this.cache.get(orgId);
    const now = this.now();
    if (hit && hit.until > now) return hit.conditions;
    const { rows } = await db.query<{ condition: string }>({
      name: 'crm_scoring_used_conditions',
      text: 'SELECT DISTINCT condition FROM scoring_rules WHERE org_id = $1',
      values: [orgId],
    });
    const conditions = new Set(rows.map((r) => r.condition));
    if (this.ttlMs > 0) {
      if (this.cache.size >= MAX_ENTRIES) for (const [k, v] of this.cache) if (v.until <= now) this.cache.delete(k);
      this.cache.set(orgId, { conditions, until: now + this.ttlMs });
    }
    return conditions;
  }

  /** Rules or config changed here: forget everything (a handful of small queries to reload). */
  clear(): void {
    this.cache.clear();
  }
}
