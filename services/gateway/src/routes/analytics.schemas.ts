import { z } from 'zod';
import { nulls, proto, reply } from '../docs/proto-schema';
import { s } from '../http/validate';

// ------------------------------------------------------------------------------------------- request schemas

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

// ------------------------------------------------------------------------------------------- responses

const ANALYTICS = 'crm/v1/analytics.proto';
/** A statistic of nothing (no contacts, no responses) is null, never a made-up 0. */
const stat = (description?: string) => (description ? z.number().nullable().meta({ description }) : z.number().nullable());
const Period = proto(ANALYTICS, 'crm.v1.AnalyticsPeriod');

/** analytics.out funnelOut: `groupBy` and `series` only when grouped. */
export const Funnel = z.object({
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

/** analytics.out teamPerformanceOut. */
export const TeamPerformance = z.object({
  period: Period,
  team: z.array(nulls(proto(ANALYTICS, 'crm.v1.TeamMemberStats'), ['averageResponseTime', 'conversionRate'])),
  teamTotal: nulls(proto(ANALYTICS, 'crm.v1.TeamTotal'), ['conversionRate']),
});

/** analytics.out responseTimeOut. */
export const ResponseTime = nulls(reply('crmAnalytics', 'ResponseTime'), [
  'averageFirstResponseTime',
  'averageResolutionTime',
  'medianResponseTime',
  'percentile95',
  'percentile99',
  'onTimeRate',
]).extend({ period: Period });

/** analytics.out csatAnalyticsOut. */
const rating = () => z.number().int();
export const CsatAnalytics = z.object({
  responses: z.number().int().meta({ description: 'questions answered with a rating' }),
  questions: z.number().int().meta({ description: 'questions sent in the range' }),
  average: stat('mean rating, 2 decimals; null without a response'),
  distribution: z.object({ '1': rating(), '2': rating(), '3': rating(), '4': rating(), '5': rating() }).meta({ description: 'responses per rating' }),
  responseRate: stat('responses / questions, 2 decimals; null when no question was sent'),
});
