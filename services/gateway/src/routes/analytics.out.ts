import type { z } from 'zod';
import type { crm, messaging } from '@crm/proto-types';
import type { CsatAnalytics, Funnel, ResponseTime, TeamPerformance } from './analytics.schemas';
import { answered } from '../http/shape';

// The generated types of crm's answers (crm/v1/analytics.proto).
type FunnelStats = crm.Funnel__Output;
type TeamStats = crm.TeamPerformance__Output;
type TeamMemberStats = crm.TeamMemberStats__Output;
type ResponseTimeStats = crm.ResponseTimeStats__Output;

/**
 * Statistics of nothing (no responses, no contacts) are unset over gRPC. The spec types these figures as
 * numbers, so the API shows 0, and the sample size each is computed from sits beside it (a stage's count,
 * contactsAssigned, responses, firstResponses, resolutions): a client tells "0%" from "no data" by a sample of 0.
 */
const orZero = (v: number | undefined) => v ?? 0;

export function funnelOut(f: FunnelStats, groupBy: 'day' | 'week' | 'month' | undefined): z.input<typeof Funnel> {
  const names = f.stages.map((st) => st.name);
  return {
    period: { ...answered(f.period, 'crm Funnel: period') },
    stages: f.stages.map((st) => ({ name: st.name, count: st.count, percentage: orZero(st.percentage), statusId: st.statusId ?? null })),
    conversionRate: orZero(f.conversionRate),
    // Each slice's stages are the funnel's, in order: crm sends only their numbers.
    ...(groupBy
      ? {
          groupBy,
          series: f.series.map((sl) => ({
            period: { ...answered(sl.period, 'crm Funnel: series period') },
            stages: sl.stages.map((st, i) => ({ name: names[i], count: st.count, percentage: orZero(st.percentage) })),
            conversionRate: orZero(sl.conversionRate),
          })),
        }
      : {}),
  };
}

// averageResponseTime's sample is `responses`, conversionRate's is contactsAssigned.
function memberOut(m: TeamMemberStats) {
  return {
    userId: m.userId,
    name: m.name,
    contactsAssigned: m.contactsAssigned,
    messagesReplied: m.messagesReplied,
    averageResponseTime: orZero(m.averageResponseTime),
    conversionRate: orZero(m.conversionRate),
    revenueGenerated: m.revenueGenerated,
    responses: m.responses,
  };
}

export function teamPerformanceOut(t: TeamStats): z.input<typeof TeamPerformance> {
  const total = answered(t.teamTotal, 'crm TeamPerformance: teamTotal');
  return {
    period: { ...answered(t.period, 'crm TeamPerformance: period') },
    team: t.team.map(memberOut),
    teamTotal: {
      contactsAssigned: total.contactsAssigned,
      messagesReplied: total.messagesReplied,
      conversionRate: orZero(total.conversionRate),
      revenueGenerated: total.revenueGenerated,
    },
  };
}

export function responseTimeOut(r: ResponseTimeStats): z.input<typeof ResponseTime> {
  return {
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
    businessHours: r.businessHours,
  };
}

/**
 * CSAT answers (messaging GetCsatAnalytics): average and responseRate are null when there is nothing to compute them
 * from (no response, no question asked); `questions` is the sample of responseRate.
 */
export function csatAnalyticsOut(c: messaging.CsatAnalytics__Output): z.input<typeof CsatAnalytics> {
  const d = c.distribution ?? {};
  return {
    responses: c.responses,
    questions: c.questions,
    average: c.average ?? null,
    distribution: { '1': d['1'] ?? 0, '2': d['2'] ?? 0, '3': d['3'] ?? 0, '4': d['4'] ?? 0, '5': d['5'] ?? 0 },
    responseRate: c.responseRate ?? null,
  };
}
