import type { Queryable } from '@crm/db';
import { addToFunnel, type FunnelRow, type Reached } from './contacts.repo';

const funnelKey = (day: string, r: Reached) => JSON.stringify([day, r.lead, r.customer, r.statusIds]);

/**
 * Changes to one org's funnel rows (analytics_funnel_days), summed per row. They are written at the end of the
 * transaction, every org's in one statement, in key order (org id, then day and stages): two transactions touching
 * the same rows lock them in the same order and cannot deadlock. Rows whose changes sum to 0 are not written.
 */
export class FunnelDeltas {
  private readonly rows = new Map<string, { day: string; reached: Reached; n: number }>();

  add(day: string, reached: Reached, n: number) {
    const key = funnelKey(day, reached);
    const row = this.rows.get(key) ?? { day, reached, n: 0 };
    row.n += n;
    this.rows.set(key, row);
  }

  /** A contact created on `day` moves from the stages `from` to `to` (undefined: it enters or leaves the counts). */
  move(day: string, from: Reached | undefined, to: Reached | undefined) {
    if (from) this.add(day, from, -1);
    if (to) this.add(day, to, 1);
  }

  /** Writes the changes of every org given, in one statement. */
  static async applyAll(db: Queryable, perOrg: Iterable<[orgId: string, deltas: FunnelDeltas]>): Promise<void> {
    const rows: FunnelRow[] = [];
    for (const [orgId, deltas] of [...perOrg].sort(([a], [b]) => (a < b ? -1 : 1)))
      for (const key of [...deltas.rows.keys()].sort()) {
        const { day, reached, n } = deltas.rows.get(key)!;
        if (n !== 0) rows.push({ orgId, day, reached, n });
      }
    await addToFunnel(db, rows);
  }
}
