import type { Queryable } from '@crm/db';
import { Period, splitPeriod } from './period';

/**
 * Read queries of the analytics endpoints. Each reads a period as whole months and days from the aggregates and
 * the partial days at its edges from the raw rows (see splitPeriod), so its cost follows the number of months
 * and days, not of the rows behind them.
 */

/** $2..$3 months, $4..$7 the whole days outside them, $8..$11 the partial days. */
const monthsDaysEdges = (p: Period) => {
  const s = splitPeriod(p);
  return [...s.months, ...s.monthEdgeDays, ...s.edges];
};
/** Condition on a table with unit/start: whole months, then the other whole days. */
const inMonthsAndDays = `((unit = 'm' AND start >= $2 AND start < $3)
                          OR (unit = 'd' AND ((start >= $4 AND start < $5) OR (start >= $6 AND start < $7))))`;
/** Condition on a raw timestamp column: the partial days. */
const onEdges = (col: string, first = 8) =>
  `((${col} >= $${first} AND ${col} < $${first + 1}) OR (${col} >= $${first + 2} AND ${col} < $${first + 3}))`;

export interface HistogramRow {
  series: number;
  bucket: number;
  n: number;
  sumMs: number;
}

/** Counts and total milliseconds per series (1 responses, 2 first responses, 3 resolutions) and bucket. */
export async function histogram(db: Queryable, orgId: string, p: Period): Promise<HistogramRow[]> {
  const { rows } = await db.query({
    name: 'analytics_stats_histogram',
    text: `SELECT series, bucket, sum(n)::bigint AS n, sum(sum_ms)::bigint AS sum_ms FROM (
             SELECT series, bucket, n, sum_ms FROM analytics_histogram WHERE org_id = $1 AND ${inMonthsAndDays}
             UNION ALL
             SELECT s.series, d.bucket, 1, d.ms
             FROM analytics_durations d
             CROSS JOIN LATERAL (VALUES (CASE WHEN d.kind = 2 THEN 3 ELSE 1 END), (CASE WHEN d.kind = 1 AND d.first THEN 2 END)) AS s(series)
             WHERE d.org_id = $1 AND d.kind IN (1, 2) AND ${onEdges('d.ended_at')} AND s.series IS NOT NULL
           ) x GROUP BY series, bucket`,
    values: [orgId, ...monthsDaysEdges(p)],
  });
  return rows.map((r) => ({ series: r.series, bucket: r.bucket, n: r.n, sumMs: r.sum_ms }));
}

/**
 * The response times at the given 0-based ranks within their buckets (the k-th smallest value of bucket b in
 * the period), read from the bucket index: one bucket's values, not the period's.
 */
export async function responseValuesAt(db: Queryable, orgId: string, p: Period, targets: { bucket: number; rank: number }[]): Promise<number[]> {
  if (targets.length === 0) return [];
  const { rows } = await db.query({
    name: 'analytics_stats_values_at',
    text: `SELECT t.i, (SELECT d.ms FROM analytics_durations d
                        WHERE d.org_id = $1 AND d.kind = 1 AND d.bucket = t.bucket AND d.ended_at >= $2 AND d.ended_at < $3
                        ORDER BY d.ms OFFSET t.rank LIMIT 1) AS ms
           FROM unnest($4::int[], $5::int[]) WITH ORDINALITY AS t(bucket, rank, i) ORDER BY t.i`,
    values: [orgId, p.from, p.to, targets.map((t) => t.bucket), targets.map((t) => t.rank)],
  });
  return rows.map((r) => r.ms);
}

/** Responses of bucket `bucket` in the period that took at most `maxMs`. */
export async function responsesAtMost(db: Queryable, orgId: string, p: Period, bucket: number, maxMs: number): Promise<number> {
  const { rows } = await db.query({
    name: 'analytics_stats_at_most',
    text: `SELECT count(*) AS n FROM analytics_durations
           WHERE org_id = $1 AND kind = 1 AND bucket = $4 AND ended_at >= $2 AND ended_at < $3 AND ms <= $5`,
    values: [orgId, p.from, p.to, bucket, maxMs],
  });
  return rows[0].n;
}

export interface FunnelGroup {
  /** Start (YYYY-MM-DD) of the day, week or month the contacts were created in; null without groupBy. */
  bucket: string | null;
  /** The furthest stage reached: 0 new, 1 lead, 2.. the custom statuses in `statusIds` order, then customer. */
  stage: number;
  n: number;
}

/**
 * Contacts created in the period by the furthest stage they reached (and by day/week/month when grouped),
 * against the pipeline as it is now (`statusIds` in order). Ranked here, so a few small rows per slice come back
 * (letting the driver parse the ~2k uuid[] sets of a year by day cost more than the query).
 */
export async function funnelGroups(
  db: Queryable,
  orgId: string,
  p: Period,
  statusIds: string[],
  groupBy: 'day' | 'week' | 'month' | undefined,
): Promise<FunnelGroup[]> {
  const bucket = groupBy ? `to_char(date_trunc('${groupBy}', day::timestamp), 'YYYY-MM-DD')` : 'NULL::text';
  const s = splitPeriod(p);
  const { rows } = await db.query({
    name: `analytics_stats_funnel_${groupBy ?? 'all'}`,
    text: `SELECT ${bucket} AS bucket,
                  CASE WHEN reached_customer THEN cardinality($8::uuid[]) + 2
                       ELSE greatest(reached_lead::int, coalesce((SELECT max(array_position($8::uuid[], id)) + 1 FROM unnest(reached_status_ids) AS id), 0))
                  END AS stage,
                  sum(n)::bigint AS n
           FROM (
             SELECT day, reached_lead, reached_customer, reached_status_ids, n FROM analytics_funnel_days
             WHERE org_id = $1 AND day >= $2 AND day < $3
             UNION ALL
             SELECT (created_at AT TIME ZONE 'UTC')::date, reached_lead, reached_customer, reached_status_ids, 1 FROM analytics_contacts
             WHERE org_id = $1 AND NOT deleted AND ${onEdges('created_at', 4)}
           ) x GROUP BY 1, 2 HAVING sum(n) <> 0`,
    values: [orgId, ...s.days, ...s.edges, statusIds],
  });
  return rows.map((r) => ({ bucket: r.bucket, stage: r.stage, n: r.n }));
}

/** The org's custom statuses in pipeline order (their position, then name). */
export async function customStatuses(db: Queryable, orgId: string): Promise<{ id: string; name: string }[]> {
  const { rows } = await db.query({
    name: 'analytics_stats_statuses',
    text: 'SELECT id, name FROM contact_statuses WHERE org_id = $1 ORDER BY position, lower(name), id',
    values: [orgId],
  });
  return rows;
}

export interface UserActivity {
  userId: string;
  replies: number;
  responses: number;
  responseMs: number;
  /** Contacts first assigned to the user in the period. */
  assigned: number;
  /** Of those, the ones whose conversion is credited to the user (whenever it happened). */
  converted: number;
}

/** Per user: messages sent, responses given and their total time, contacts assigned and converted, in the period. */
export async function userActivity(db: Queryable, orgId: string, p: Period): Promise<UserActivity[]> {
  const { rows } = await db.query({
    name: 'analytics_stats_user_activity',
    text: `SELECT user_id, sum(replies)::bigint AS replies, sum(responses)::bigint AS responses, sum(response_ms)::bigint AS response_ms,
                  sum(assigned)::bigint AS assigned, sum(converted)::bigint AS converted FROM (
             SELECT user_id, replies, responses, response_ms, assigned, converted FROM analytics_user_stats WHERE org_id = $1 AND ${inMonthsAndDays}
             UNION ALL
             SELECT user_id, 1, 0, 0, 0, 0 FROM analytics_items WHERE org_id = $1 AND kind = 2 AND ${onEdges('at')}
             UNION ALL
             SELECT user_id, 0, 1, ms, 0, 0 FROM analytics_durations
             WHERE org_id = $1 AND kind = 1 AND user_id IS NOT NULL AND ${onEdges('ended_at')}
             UNION ALL
             SELECT user_id, 0, 0, 0, 1, credited::int FROM analytics_assignments WHERE org_id = $1 AND ${onEdges('at')}
           ) x GROUP BY user_id`,
    values: [orgId, ...monthsDaysEdges(p)],
  });
  return rows.map((r) => ({
    userId: r.user_id,
    replies: r.replies,
    responses: r.responses,
    responseMs: r.response_ms,
    assigned: r.assigned,
    converted: r.converted,
  }));
}

/** Per user: the deal value of contacts that became customers in the period while assigned to them. */
export async function revenueByUser(db: Queryable, orgId: string, p: Period): Promise<{ userId: string; revenue: number }[]> {
  const { rows } = await db.query({
    name: 'analytics_stats_revenue',
    text: `SELECT converted_by AS user_id, sum(deal_value) AS revenue FROM analytics_contacts
           WHERE org_id = $1 AND NOT deleted AND converted_at >= $2 AND converted_at < $3 AND converted_by IS NOT NULL
           GROUP BY converted_by`,
    values: [orgId, p.from, p.to],
  });
  return rows.map((r) => ({ userId: r.user_id, revenue: r.revenue }));
}

export interface PeriodDuration {
  /** 1 a response, 2 a resolution (analytics_durations.kind). */
  kind: number;
  first: boolean;
  startedAt: Date;
  endedAt: Date;
  /** The conversation's chat-network account, when crm has heard of the conversation (conversation_owners). */
  accountId: string | null;
}

/**
 * Every response and resolution that ended in the period, with its conversation's account: what counting open hours
 * only needs (the aggregates hold clock time). At most `limit` rows, oldest end first.
 */
export async function durationsEnded(db: Queryable, orgId: string, p: Period, limit: number): Promise<PeriodDuration[]> {
  const { rows } = await db.query({
    name: 'analytics_durations_ended_with_account',
    text: `SELECT d.kind, d.first, d.started_at AS "startedAt", d.ended_at AS "endedAt", o.chatnet_account_id AS "accountId"
             FROM analytics_durations d
             LEFT JOIN conversation_owners o ON o.conversation_id = d.conversation_id AND o.org_id = d.org_id
            WHERE d.org_id = $1 AND d.ended_at >= $2 AND d.ended_at < $3
            ORDER BY d.ended_at LIMIT $4`,
    values: [orgId, p.from, p.to, limit],
  });
  return rows;
}
