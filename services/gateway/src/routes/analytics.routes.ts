import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { dateRange } from '../http/validate';
import { csatAnalyticsOut, funnelOut, responseTimeOut, teamPerformanceOut } from './analytics.out';
import { CsatAnalytics, CsatQuery, Funnel, FunnelQuery, ResponseTime, ResponseTimeQuery, TeamPerformance, TeamQuery } from './analytics.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';

/** crm takes the half-open range [dateFrom, dateTo); absent ends ('') are its defaults. */
function range(from: string | undefined, to: string | undefined) {
  const r = dateRange(from, to, 'dateFrom', 'dateTo');
  return { dateFrom: r.dateFrom ?? '', dateTo: r.dateTo ?? '' };
}

/** Analytics (crm's read model): funnel, team performance, response times. Needs analytics:view (team_lead+). Internal API (bearer). */
export const analyticsArea = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Analytics' });
const analytics = (deps: RouteDeps) => deps.clients.crmAnalytics;

analyticsArea.route('GET /analytics/conversion-funnel', {
  summary: 'Contacts reaching each status in the period, optionally as a day/week/month series',
  query: FunnelQuery,
  response: Funnel,
  handler: async ({ query: q, ctx, deps }) =>
    funnelOut(await analytics(deps).ConversionFunnel({ ...range(q.dateFrom, q.dateTo), groupBy: q.groupBy ?? '' }, ctx), q.groupBy),
});
analyticsArea.route('GET /analytics/team-performance', {
  summary: 'Per agent: contacts assigned, messages replied, response time, conversion, revenue',
  query: TeamQuery,
  response: TeamPerformance,
  handler: async ({ query: q, ctx, deps }) =>
    teamPerformanceOut(await analytics(deps).TeamPerformance({ ...range(q.dateFrom, q.dateTo), departmentId: q.departmentId ?? '' }, ctx)),
});
analyticsArea.route('GET /analytics/response-time', {
  summary: 'First-response and resolution times, percentiles, and the share answered within the SLA',
  description:
    'businessHours=true counts only open time: each response and resolution that ended in the period in the business hours of its conversation’s account (its own, else the org’s; PUT /settings/business-hours); at most 200,000 of them (a longer period is 400 naming dateFrom); 503 when messaging cannot say.',
  query: ResponseTimeQuery,
  response: ResponseTime,
  handler: async ({ query: q, ctx, deps }) =>
    responseTimeOut(
      await analytics(deps).ResponseTime(
        { ...range(q.dateFrom, q.dateTo), slaMinutes: q.slaMinutes ?? 0, businessHours: q.businessHours ?? false },
        ctx,
      ),
    ),
});
// CSAT answers live with the conversations (messaging, issue #29 item 6).
analyticsArea.route('GET /analytics/csat', {
  summary: 'CSAT: the answers to the satisfaction questions sent in the range (from, to: when the question was sent)',
  description:
    'Filters: assigneeId (who had the conversation when it closed), chatnetAccountId. Team leads and above; another organization’s ids match nothing.',
  query: CsatQuery,
  response: CsatAnalytics,
  handler: async ({ query: q, ctx, deps }) => {
    const r = dateRange(q.from, q.to, 'from', 'to');
    return csatAnalyticsOut(
      await deps.clients.messaging.GetCsatAnalytics(
        { from: r.dateFrom ?? '', to: r.dateTo ?? '', assigneeId: q.assigneeId, chatnetAccountId: q.chatnetAccountId },
        ctx,
      ),
    );
  },
});

export function analyticsRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: analyticsArea.router(deps, responseContract(deps.config)) };
}
