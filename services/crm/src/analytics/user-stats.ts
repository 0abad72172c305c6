import type { Queryable } from '@crm/db';

/** analytics_user_stats: per user, UTC day and UTC month, the counters team performance reads. */

/** 'd' a UTC day, 'm' a UTC month; `start` its first day (YYYY-MM-DD). */
export type Unit = 'd' | 'm';

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The day and the month a moment counts in. */
export function periodsOf(ms: number): [Unit, string][] {
  const day = utcDay(ms);
  return [
    ['d', day],
    ['m', `${day.slice(0, 7)}-01`],
  ];
}

const COUNTERS = ['replies', 'responses', 'responseMs', 'assigned', 'converted'] as const;
export type UserCounters = Record<(typeof COUNTERS)[number], number>;

interface Row extends UserCounters {
  unit: Unit;
  start: string;
  userId: string;
}

/**
 * Changes to a transaction's user rows, summed per row and written at its end in key order, so two transactions
 * touching the same rows lock them in the same order and cannot deadlock. Zero changes are dropped.
 */
export class UserStatsDeltas {
  private readonly rows = new Map<string, Row>();

  add(at: number, userId: string, change: Partial<UserCounters>) {
    for (const [unit, start] of periodsOf(at)) {
      const key = `${unit}|${start}|${userId}`;
      let row = this.rows.get(key);
      if (!row) this.rows.set(key, (row = { unit, start, userId, replies: 0, responses: 0, responseMs: 0, assigned: 0, converted: 0 }));
      for (const c of COUNTERS) row[c] += change[c] ?? 0;
    }
  }

  async apply(db: Queryable, orgId: string) {
    await UserStatsDeltas.applyAll(db, [[orgId, this]]);
  }

  /** Writes the changes of every org given in one statement, in key order (org id, then unit, start and user). */
  static async applyAll(db: Queryable, perOrg: Iterable<[orgId: string, deltas: UserStatsDeltas]>): Promise<void> {
    const rows: Array<Row & { orgId: string }> = [];
    for (const [orgId, deltas] of [...perOrg].sort(([a], [b]) => (a < b ? -1 : 1)))
      for (const [, r] of [...deltas.rows.entries()].sort(([a], [b]) => (a < b ? -1 : 1)))
        if (COUNTERS.some((c) => r[c] !== 0)) rows.push({ ...r, orgId });
    if (rows.length === 0) return;
    await db.query({
      name: 'analytics_user_stats_add_many',
      text: `INSERT INTO analytics_user_stats AS u (org_id, unit, start, user_id, replies, responses, response_ms, assigned, converted)
             SELECT * FROM unnest($1::uuid[], $2::"char"[], $3::date[], $4::uuid[], $5::integer[], $6::integer[], $7::bigint[], $8::integer[], $9::integer[])
             ON CONFLICT (org_id, unit, start, user_id) DO UPDATE
               SET replies = u.replies + EXCLUDED.replies, responses = u.responses + EXCLUDED.responses,
                   response_ms = u.response_ms + EXCLUDED.response_ms, assigned = u.assigned + EXCLUDED.assigned,
                   converted = u.converted + EXCLUDED.converted`,
      values: [
        rows.map((r) => r.orgId),
        rows.map((r) => r.unit),
        rows.map((r) => r.start),
        rows.map((r) => r.userId),
        rows.map((r) => r.replies),
        rows.map((r) => r.responses),
        rows.map((r) => r.responseMs),
        rows.map((r) => r.assigned),
        rows.map((r) => r.converted),
      ],
    });
  }
}
