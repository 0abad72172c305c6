import { z } from 'zod';
import type { csatAnalyticsOut, funnelOut, teamPerformanceOut } from '../../routes/analytics.out';
import { CsatQuery, FunnelQuery, ResponseTimeQuery, TeamQuery } from '../../routes/analytics.routes';
import { nulls, proto, reply } from '../proto-schema';
import { area } from '../registry';
import { keysMatch } from '../schemas/check';

const ANALYTICS = 'crm/v1/analytics.proto';
/** A statistic of nothing (no contacts, no responses) is null, never a made-up 0. */
const stat = (description?: string) => (description ? z.number().nullable().meta({ description }) : z.number().nullable());
const Period = proto(ANALYTICS, 'crm.v1.AnalyticsPeriod');

/** analytics.out funnelOut: `groupBy` and `series` only when grouped. */
const Funnel = z.object({
  period: Period,
  stages: z.array(z.object({ name: z.string(), count: z.number().int(), percentage: stat(), statusId: z.string().nullable() })),
  conversionRate: stat(),
  groupBy: z.enum(['day', 'week', 'month']).optional(),
  series: z
    .array(
      z.object({
        period: Period,
        stages: z.array(z.object({ name: z.string(), count: z.number().int(), percentage: stat() })),
        conversionRate: stat(),
      }),
    )
    .optional()
    .meta({ description: 'one slice per day, week or month (with groupBy)' }),
});
keysMatch<z.infer<typeof Funnel>, ReturnType<typeof funnelOut>>(true);

/** analytics.out teamPerformanceOut. */
const TeamPerformance = z.object({
  period: Period,
  team: z.array(nulls(proto(ANALYTICS, 'crm.v1.TeamMemberStats'), ['averageResponseTime', 'conversionRate'])),
  teamTotal: nulls(proto(ANALYTICS, 'crm.v1.TeamTotal'), ['conversionRate']),
});
keysMatch<z.infer<typeof TeamPerformance>, ReturnType<typeof teamPerformanceOut>>(true);

/** analytics.out responseTimeOut. */
const ResponseTime = nulls(reply('crmAnalytics', 'ResponseTime'), [
  'averageFirstResponseTime',
  'averageResolutionTime',
  'medianResponseTime',
  'percentile95',
  'percentile99',
  'onTimeRate',
]).extend({ period: Period });

/** analytics.out csatAnalyticsOut. */
const rating = () => z.number().int();
const CsatAnalytics = z.object({
  responses: z.number().int().meta({ description: 'questions answered with a rating' }),
  questions: z.number().int().meta({ description: 'questions sent in the range' }),
  average: stat('mean rating, 2 decimals; null without a response'),
  distribution: z.object({ '1': rating(), '2': rating(), '3': rating(), '4': rating(), '5': rating() }).meta({ description: 'responses per rating' }),
  responseRate: stat('responses / questions, 2 decimals; null when no question was sent'),
});
keysMatch<z.infer<typeof CsatAnalytics>, ReturnType<typeof csatAnalyticsOut>>(true);

/** Analytics and custom reports (crm's read model), internal API; analytics:view (team leads and above). */
const analytics = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Analytics' });
analytics.op('GET /analytics/conversion-funnel', {
  summary: 'Contacts reaching each status in the period, optionally as a day/week/month series',
  query: FunnelQuery,
  responses: { 200: Funnel },
});
analytics.op('GET /analytics/team-performance', {
  summary: 'Per agent: contacts assigned, messages replied, response time, conversion, revenue',
  query: TeamQuery,
  responses: { 200: TeamPerformance },
});
analytics.op('GET /analytics/response-time', {
  summary: 'First-response and resolution times, percentiles, and the share answered within the SLA',
  description:
    'businessHours=true counts only open time: each response and resolution that ended in the period in the business hours of its conversation’s account (its own, else the org’s; PUT /settings/business-hours); at most 200,000 of them (a longer period is 400 naming dateFrom); 503 when messaging cannot say.',
  query: ResponseTimeQuery,
  responses: { 200: ResponseTime },
});
analytics.op('GET /analytics/csat', {
  summary: 'CSAT: the answers to the satisfaction questions sent in the range (from, to: when the question was sent)',
  description:
    'Filters: assigneeId (who had the conversation when it closed), chatnetAccountId. Team leads and above; another organization’s ids match nothing.',
  query: CsatQuery,
  responses: { 200: CsatAnalytics },
});

export const analyticsOps = analytics.ops;
