import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import type { AnalyticsDeps } from './deps';
import { percent } from './format';
import { Period, periodOut, resolvePeriod } from './period';
import { customStatuses, FunnelGroup, funnelGroups } from './stats.repo';

/**
 * Conversion funnel of the contacts created in a period. Stages are the org's pipeline in order: new (every
 * contact), lead, the custom statuses by position, customer. A contact counts in every stage up to the
 * furthest it ever reached (lost is an exit, not a stage), so counts never grow down the funnel.
 */

const GROUPS = ['day', 'week', 'month'] as const;
type GroupBy = (typeof GROUPS)[number];
/** A day-by-day funnel of years would be a response nobody can draw; past this, group by week or month. */
const MAX_SLICES = 400;
const DAY_MS = 86_400_000;

interface Stage {
  name: string;
  statusId?: string;
}

function parseGroupBy(value: string | undefined): GroupBy | undefined {
  if (!value) return undefined;
  if (!(GROUPS as readonly string[]).includes(value)) throw invalid('groupBy', `must be one of ${GROUPS.join(', ')}`);
  return value as GroupBy;
}

/** Counts per stage; `named` adds each stage's name and statusId (the series leaves them to the funnel's stages). */
function slice(stages: Stage[], groups: FunnelGroup[], named: boolean) {
  const counts = stages.map(() => 0);
  for (const g of groups) for (let i = Math.min(g.stage, stages.length - 1); i >= 0; i--) counts[i] += g.n;
  return {
    stages: stages.map((s, i) => ({ ...(named ? s : {}), count: counts[i], percentage: percent(counts[i], counts[0]) })),
    conversionRate: percent(counts[counts.length - 1], counts[0]),
  };
}

/** Start of the UTC day, ISO week (Monday) or month holding `ms`, and the start of the next one. */
function sliceBounds(ms: number, g: GroupBy): [number, number] {
  const d = new Date(ms);
  if (g === 'month') return [Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)];
  const day = Math.floor(ms / DAY_MS) * DAY_MS;
  if (g === 'day') return [day, day + DAY_MS];
  const monday = day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
  return [monday, monday + 7 * DAY_MS];
}

/** Every slice of the period in order, clipped to it; keyed by the slice's start date as SQL names it. */
function slices(p: Period, g: GroupBy): { key: string; period: Period }[] {
  const out: { key: string; period: Period }[] = [];
  for (let at = p.from.getTime(); at < p.to.getTime();) {
    const [start, next] = sliceBounds(at, g);
    out.push({ key: new Date(start).toISOString().slice(0, 10), period: { from: new Date(at), to: new Date(Math.min(next, p.to.getTime())) } });
    if (out.length > MAX_SLICES) throw invalid('groupBy', `${g} makes more than ${MAX_SLICES} periods of this range; group by a longer unit`);
    at = next;
  }
  return out;
}

export async function conversionFunnel(deps: AnalyticsDeps, ctx: OrgContext, req: { dateFrom?: string; dateTo?: string; groupBy?: string }) {
  requireCan(ctx, 'analytics:view');
  const { orgId } = ctx;
  const period = resolvePeriod(req);
  const groupBy = parseGroupBy(req.groupBy);
  const cuts = groupBy ? slices(period, groupBy) : [];
  const custom = await customStatuses(deps.pool, orgId);
  const groups = await funnelGroups(
    deps.pool,
    orgId,
    period,
    custom.map((c) => c.id),
    groupBy,
  );
  const stages: Stage[] = [{ name: 'new' }, { name: 'lead' }, ...custom.map((s) => ({ name: s.name, statusId: s.id })), { name: 'customer' }];
  const bySlice = new Map<string | null, FunnelGroup[]>();
  for (const g of groups) {
    const list = bySlice.get(g.bucket);
    if (list) list.push(g);
    else bySlice.set(g.bucket, [g]);
  }
  const series = cuts.map((c) => ({ period: periodOut(c.period), ...slice(stages, bySlice.get(c.key) ?? [], false) }));
  return { period: periodOut(period), ...slice(stages, groups, true), series };
}
