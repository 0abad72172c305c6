import { Router } from 'express';
import { z } from 'zod';
import { csatAnalyticsOut, funnelOut, responseTimeOut, teamPerformanceOut } from './analytics.out';
import type { RouteDeps, ServiceRoutes } from './deps';
import { ctxOf } from '../http/principal';
import { dateRange, query, s } from '../http/validate';

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
  businessHours: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((v) => v === 'true')
    .optional()
    .meta({ description: "true: closed hours are not counted (each conversation in its account's business hours, else the org's)" }),
});

/** GET /analytics/csat: the questions asked in [from, to) (a bare date `to` counts its whole day), optionally of one assignee or account. */
export const CsatQuery = z.object({
  from: s.dateOrTimestamp().optional(),
  to: s.dateOrTimestamp().optional(),
  assigneeId: z.string().trim().uuid('must be a user id').optional(),
  chatnetAccountId: z.string().trim().uuid('must be a chat-network account id').optional(),
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
    res.json(teamPerformanceOut(t));
  });

  internal.get('/analytics/response-time', async (req, res) => {
    const q = query(req, ResponseTimeQuery);
    const r = await analytics().ResponseTime(
      { ...range(q.dateFrom, q.dateTo), slaMinutes: q.slaMinutes ?? 0, businessHours: q.businessHours ?? false },
      ctxOf(req, res),
    );
    res.json(responseTimeOut(r));
  });

  // CSAT answers live with the conversations (messaging, issue #29 item 6).
  internal.get('/analytics/csat', async (req, res) => {
    const q = query(req, CsatQuery);
    const r = dateRange(q.from, q.to, 'from', 'to');
    const out = await clients.messaging.GetCsatAnalytics(
      { from: r.dateFrom ?? '', to: r.dateTo ?? '', assigneeId: q.assigneeId, chatnetAccountId: q.chatnetAccountId },
      ctxOf(req, res),
    );
    res.json(csatAnalyticsOut(out));
  });

  return { internal };
}
