import { Router } from 'express';
import { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';
import { ctxOf } from '../http/principal';
import { dateRange, query, s } from '../http/validate';

// ------------------------------------------------------------------------------------------- shapes from crm

// The generated types of crm's answers (crm/v1/analytics.proto).
type Funnel = crm.Funnel__Output;

/**
 * Statistics of nothing (no responses, no contacts) are unset over gRPC. The spec types these figures as
 * numbers, so the API shows 0, and the sample size each is computed from sits beside it (a stage's count,
 * contactsAssigned, responses, firstResponses, resolutions): a client tells "0%" from "no data" by a sample of 0.
 */
const orZero = (v: number | undefined) => v ?? 0;

export function funnelOut(f: Funnel, groupBy: string | undefined) {
  const names = f.stages.map((st) => st.name);
  return {
    period: f.period,
    stages: f.stages.map((st) => ({ name: st.name, count: st.count, percentage: orZero(st.percentage), statusId: st.statusId ?? null })),
    conversionRate: orZero(f.conversionRate),
    // Each slice's stages are the funnel's, in order: crm sends only their numbers.
    ...(groupBy
      ? {
          groupBy,
          series: f.series.map((sl) => ({
            period: sl.period,
            stages: sl.stages.map((st, i) => ({ name: names[i], count: st.count, percentage: orZero(st.percentage) })),
            conversionRate: orZero(sl.conversionRate),
          })),
        }
      : {}),
  };
}

// ------------------------------------------------------------------------------------------- request schemas

/** crm takes the half-open range [dateFrom, dateTo); absent ends ('') are its defaults. */
function range(from: string | undefined, to: string | undefined) {
  const r = dateRange(from, to, 'dateFrom', 'dateTo');
  return { dateFrom: r.dateFrom ?? '', dateTo: r.dateTo ?? '' };
}

const Dates = { dateFrom: s.dateOrTimestamp().optional(), dateTo: s.dateOrTimestamp().optional() };
export const FunnelQuery = z.object({ ...Dates, groupBy: s.optionalQueryEnum(['day', 'week', 'month'] as const) });
export const TeamQuery = z.object({ ...Dates, departmentId: z.string().trim().max(200, 'must be at most 200 characters').optional() });
export const ResponseTimeQuery = z.object({
  ...Dates,
  slaMinutes: z
    .string()
    .regex(/^\d{1,5}(\.\d{1,3})?$/, 'must be a number of minutes')
    .transform(Number)
    .refine((v) => v > 0 && v <= 10_080, 'must be above 0 and at most 10080 (a week)')
    .optional(),
});

// ------------------------------------------------------------------------------------------- routes

/** Analytics (crm's read model): funnel, team performance, response times. Needs analytics:view (team_lead+). */
export function analyticsRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const analytics = () => clients.crmAnalytics;

  internal.get('/analytics/conversion-funnel', async (req, res) => {
    const q = query(req, FunnelQuery);
    const f = await analytics().ConversionFunnel({ ...range(q.dateFrom, q.dateTo), groupBy: q.groupBy ?? '' }, ctxOf(req, res));
    res.json(funnelOut(f, q.groupBy));
  });

  internal.get('/analytics/team-performance', async (req, res) => {
    const q = query(req, TeamQuery);
    const t = await analytics().TeamPerformance({ ...range(q.dateFrom, q.dateTo), departmentId: q.departmentId ?? '' }, ctxOf(req, res));
    res.json({
      period: t.period,
      // averageResponseTime's sample is `responses`, conversionRate's is contactsAssigned.
      team: t.team.map((m) => ({ ...m, averageResponseTime: orZero(m.averageResponseTime), conversionRate: orZero(m.conversionRate) })),
      teamTotal: { ...t.teamTotal, conversionRate: orZero(t.teamTotal?.conversionRate) },
    });
  });

  internal.get('/analytics/response-time', async (req, res) => {
    const q = query(req, ResponseTimeQuery);
    const r = await analytics().ResponseTime({ ...range(q.dateFrom, q.dateTo), slaMinutes: q.slaMinutes ?? 0 }, ctxOf(req, res));
    res.json({
      period: r.period,
      averageFirstResponseTime: orZero(r.averageFirstResponseTime),
      averageResolutionTime: orZero(r.averageResolutionTime),
      medianResponseTime: orZero(r.medianResponseTime),
      percentile95: orZero(r.percentile95),
      percentile99: orZero(r.percentile99),
      onTimeRate: orZero(r.onTimeRate),
      slaMinutes: r.slaMinutes,
      responses: r.responses,
      firstResponses: r.firstResponses,
      resolutions: r.resolutions,
    });
  });

  return { internal };
}
