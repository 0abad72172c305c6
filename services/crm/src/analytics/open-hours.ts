import { openMsBetween } from '@crm/business-hours';
import type { Queryable } from '@crm/db';
import { invalid } from '@crm/grpc-kit';
import type { OrgBusinessHours } from '../clients';
import { percent, seconds } from './format';
import type { Period } from './period';
import { durationsEnded } from './stats.repo';

/**
 * Response-time statistics counting open hours only (`businessHours=true`, issue #29 item 10): a message that came in
 * on Friday evening and was answered on Monday at 09:10 took ten minutes, not sixty hours. Each duration's open time is
 * computed with the hours of its conversation's account (its own, else the org's) as they are now, so the figures
 * follow the hours a team keeps today. The daily aggregates hold clock time only, so this reads every duration of the
 * period: bounded, and a longer period is refused with a 400 rather than answered slowly.
 */
export const MAX_OPEN_HOURS_DURATIONS = 200_000;

/** Nearest rank: the smallest value at least `p` of the sorted values do not exceed. */
const nearestRank = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
const mean = (values: number[]) => (values.length > 0 ? seconds(values.reduce((t, v) => t + v, 0) / values.length) : undefined);

export async function openHoursStats(db: Queryable, orgId: string, period: Period, slaMs: number, hours: OrgBusinessHours) {
  const rows = await durationsEnded(db, orgId, period, MAX_OPEN_HOURS_DURATIONS + 1);
  if (rows.length > MAX_OPEN_HOURS_DURATIONS) {
    throw invalid('dateFrom', `with businessHours=true a period may hold at most ${MAX_OPEN_HOURS_DURATIONS} responses and resolutions: narrow it`);
  }
  const responses: number[] = [];
  const first: number[] = [];
  const resolutions: number[] = [];
  for (const r of rows) {
    const ms = openMsBetween(hours.of(r.accountId), r.startedAt, r.endedAt);
    if (r.kind === 2) resolutions.push(ms);
    else {
      responses.push(ms);
      if (r.first) first.push(ms);
    }
  }
  responses.sort((a, b) => a - b);
  const n = responses.length;
  return {
    averageFirstResponseTime: mean(first),
    averageResolutionTime: mean(resolutions),
    medianResponseTime: n > 0 ? seconds(nearestRank(responses, 0.5)) : undefined,
    percentile95: n > 0 ? seconds(nearestRank(responses, 0.95)) : undefined,
    percentile99: n > 0 ? seconds(nearestRank(responses, 0.99)) : undefined,
    onTimeRate: n > 0 ? percent(responses.filter((ms) => ms <= slaMs).length, n) : undefined,
    responses: n,
    firstResponses: first.length,
    resolutions: resolutions.length,
  };
}
