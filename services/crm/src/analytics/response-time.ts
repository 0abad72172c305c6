import type { PoolClient } from '@crm/db';
import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import { bucketOf } from './buckets';
import { SERIES } from './conversation-events';
import type { AnalyticsDeps } from './deps';
import { percent, seconds } from './format';
import { Period, periodOut, resolvePeriod } from './period';
import { durationsEnded, histogram, HistogramRow, responsesAtMost, responseValuesAt } from './stats.repo';

/**
 * Response-time statistics of a period (responses, first responses and resolutions that ended in it; see
 * turns.ts for the definitions). Percentiles are exact (nearest rank: the smallest time at least p of the
 * responses did not exceed): the daily histogram says which bucket holds the k-th response, and only that
 * bucket's responses are read to find it. onTimeRate is the share of responses within the SLA, also exact.
 */

export const DEFAULT_SLA_MINUTES = 15;
/** A week: a reply target beyond that is not a response-time target. */
const MAX_SLA_MINUTES = 7 * 24 * 60;
const PERCENTILES = [0.5, 0.95, 0.99] as const;

function slaMinutes(value: number | undefined): number {
  if (value === undefined || value === 0) return DEFAULT_SLA_MINUTES;
  if (!Number.isFinite(value) || value < 0 || value > MAX_SLA_MINUTES) throw invalid('slaMinutes', `must be a number of minutes above 0, at most ${MAX_SLA_MINUTES}`);
  return value;
}

/** Where the 1-based rank `k` falls: its bucket and its 0-based rank inside the bucket. */
function locate(buckets: HistogramRow[], k: number): { bucket: number; rank: number } {
  let before = 0;
  for (const b of buckets) {
    if (before + b.n >= k) return { bucket: b.bucket, rank: k - before - 1 };
    before += b.n;
  }
  const last = buckets[buckets.length - 1];
  return { bucket: last.bucket, rank: last.n - 1 };
}

/**
 * All reads in one REPEATABLE READ snapshot, so the histogram and the bucket reads agree even while events
 * are being applied.
 */
async function inSnapshot<T>(deps: AnalyticsDeps, fn: (db: PoolClient) => Promise<T>): Promise<T> {
  const db = await deps.pool.connect();
  try {
    await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const out = await fn(db);
    await db.query('COMMIT');
    return out;
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    db.release();
  }
}

async function compute(db: PoolClient, orgId: string, period: Period, slaMs: number) {
  const rows = await histogram(db, orgId, period);
  const of = (series: number) => rows.filter((r) => r.series === series && r.n > 0).sort((a, b) => a.bucket - b.bucket);
  const total = (rs: HistogramRow[]) => rs.reduce((t, r) => ({ n: t.n + r.n, ms: t.ms + r.sumMs }), { n: 0, ms: 0 });
  const responses = of(SERIES.response);
  const all = total(responses);
  const first = total(of(SERIES.firstResponse));
  const resolutions = total(of(SERIES.resolution));

  let percentiles: (number | undefined)[] = PERCENTILES.map(() => undefined);
  let onTime: number | undefined;
  if (all.n > 0) {
    const targets = PERCENTILES.map((p) => locate(responses, Math.ceil(p * all.n)));
    percentiles = (await responseValuesAt(db, orgId, period, targets)).map((ms) => seconds(ms));
    const slaBucket = bucketOf(slaMs);
    const below = responses.filter((r) => r.bucket < slaBucket).reduce((n, r) => n + r.n, 0);
    const straddling = responses.some((r) => r.bucket === slaBucket) ? await responsesAtMost(db, orgId, period, slaBucket, slaMs) : 0;
    onTime = percent(below + straddling, all.n);
  }
  const mean = (t: { n: number; ms: number }) => (t.n > 0 ? seconds(t.ms / t.n) : undefined);
  return {
    averageFirstResponseTime: mean(first),
    averageResolutionTime: mean(resolutions),
    medianResponseTime: percentiles[0],
    percentile95: percentiles[1],
    percentile99: percentiles[2],
    onTimeRate: onTime,
    responses: all.n,
    firstResponses: first.n,
    resolutions: resolutions.n,
  };
}

/** Most durations a business-hours period reads (each is measured against the hours by messaging). */
export const BUSINESS_HOURS_MAX_DURATIONS = 50_000;

/** Nearest rank of sorted values: the smallest value at least p of them do not exceed. */
const nearestRank = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];

/**
 * The same statistics counting only the org's business hours (issue #29 item 10): the durations that ended in the
 * period are read from the table (not the histogram, whose buckets hold clock time) and messaging measures the open
 * time inside each; percentiles and the on-time rate are then exact over those open times.
 */
async function computeInBusinessHours(deps: AnalyticsDeps, ctx: OrgContext, period: Period, slaMs: number) {
  const rows = await durationsEnded(deps.pool, ctx.orgId, period, BUSINESS_HOURS_MAX_DURATIONS + 1);
  if (rows.length > BUSINESS_HOURS_MAX_DURATIONS) throw invalid('dateFrom', `covers more than ${BUSINESS_HOURS_MAX_DURATIONS} responses; choose a shorter period for businessHours=true`);
  const open = await deps.openTime.openMs(
    ctx,
    rows.map((r) => r.startedAt.getTime()),
    rows.map((r) => r.endedAt.getTime()),
  );
  const responses = rows.flatMap((r, i) => (r.kind === 'response' ? [open[i]] : [])).sort((a, b) => a - b);
  const first = rows.flatMap((r, i) => (r.kind === 'response' && r.first ? [open[i]] : []));
  const resolutions = rows.flatMap((r, i) => (r.kind === 'resolution' ? [open[i]] : []));
  const mean = (ms: number[]) => (ms.length > 0 ? seconds(ms.reduce((t, v) => t + v, 0) / ms.length) : undefined);
  const some = responses.length > 0;
  return {
    averageFirstResponseTime: mean(first),
    averageResolutionTime: mean(resolutions),
    medianResponseTime: some ? seconds(nearestRank(responses, PERCENTILES[0])) : undefined,
    percentile95: some ? seconds(nearestRank(responses, PERCENTILES[1])) : undefined,
    percentile99: some ? seconds(nearestRank(responses, PERCENTILES[2])) : undefined,
    onTimeRate: some ? percent(responses.filter((ms) => ms <= slaMs).length, responses.length) : undefined,
    responses: responses.length,
    firstResponses: first.length,
    resolutions: resolutions.length,
  };
}

export async function responseTime(deps: AnalyticsDeps, ctx: OrgContext, req: { dateFrom?: string; dateTo?: string; slaMinutes?: number; businessHours?: boolean }) {
  requireCan(ctx, 'analytics:view');
  const { orgId } = ctx;
  const period = resolvePeriod(req);
  const sla = slaMinutes(req.slaMinutes);
  const slaMs = Math.floor(sla * 60_000);
  const stats = req.businessHours ? await computeInBusinessHours(deps, ctx, period, slaMs) : await inSnapshot(deps, (db) => compute(db, orgId, period, slaMs));
  return { period: periodOut(period), ...stats, slaMinutes: sla };
}
