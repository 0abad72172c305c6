import type { PoolClient } from '@crm/db';
import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import { bucketOf } from './buckets';
import { SERIES } from './conversation-events';
import type { AnalyticsDeps } from './deps';
import { percent, seconds } from './format';
import { Period, periodOut, resolvePeriod } from './period';
import { openHoursStats } from './open-hours';
import { histogram, HistogramRow, responsesAtMost, responseValuesAt } from './stats.repo';

/**
 * Response-time statistics of a period (responses, first responses and resolutions that ended in it; see
 * turns.ts for the definitions). Percentiles are exact (nearest rank: the smallest time at least p of the
 * responses did not exceed): the daily histogram says which bucket holds the k-th response, and only that
 * bucket's responses are read to find it. onTimeRate is the share of responses within the SLA, also exact.
 * With businessHours, closed hours are not counted (open-hours.ts).
 */

export const DEFAULT_SLA_MINUTES = 15;
/** A week: a reply target beyond that is not a response-time target. */
const MAX_SLA_MINUTES = 7 * 24 * 60;
const PERCENTILES = [0.5, 0.95, 0.99] as const;

function slaMinutes(value: number | undefined): number {
  if (value === undefined || value === 0) return DEFAULT_SLA_MINUTES;
  if (!Number.isFinite(value) || value < 0 || value > MAX_SLA_MINUTES)
    throw invalid('slaMinutes', `must be a number of minutes above 0, at most ${MAX_SLA_MINUTES}`);
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

export async function responseTime(
  deps: AnalyticsDeps,
  ctx: OrgContext,
  req: { dateFrom?: string; dateTo?: string; slaMinutes?: number; businessHours?: boolean },
) {
  requireCan(ctx, 'analytics:view');
  const { orgId } = ctx;
  const period = resolvePeriod(req);
  const sla = slaMinutes(req.slaMinutes);
  const slaMs = Math.floor(sla * 60_000);
  // Open hours only: the hours are asked first, so no snapshot is held open across messaging's answer.
  const hours = req.businessHours ? await deps.businessHours.forOrg(ctx) : undefined;
  const stats = await inSnapshot(deps, (db) => (hours ? openHoursStats(db, orgId, period, slaMs, hours) : compute(db, orgId, period, slaMs)));
  return { period: periodOut(period), ...stats, slaMinutes: sla, businessHours: !!hours };
}
