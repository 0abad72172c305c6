import type { z } from 'zod';
import type { messaging } from '@crm/proto-types';
import type * as S from './service-levels.schemas';
import { orNull } from '../http/shape';

type Hours = messaging.BusinessHours__Output;

/** The org's business hours; updatedAt null while never set (open all the time). */
export function businessHoursOut(h: Hours): z.input<typeof S.BusinessHours> {
  return {
    timezone: h.timezone,
    days: h.days.map((d) => ({ day: d.day, open: d.open, close: d.close })),
    holidays: h.holidays,
    updatedAt: orNull(h.updatedAt),
  };
}

/** What applies to an account: its own hours, or the org's (inherited). */
export function accountBusinessHoursOut(h: Hours): z.input<typeof S.AccountBusinessHours> {
  return { chatnetAccountId: h.chatnetAccountId, inherited: h.inherited, ...businessHoursOut(h) };
}

export function businessHoursStatusOut(s: messaging.BusinessHoursStatus__Output): z.input<typeof S.BusinessHoursStatus> {
  return { open: s.open, nextChangeAt: orNull(s.nextChangeAt) };
}

/** An SLA policy: windows not set are null. */
export function slaPolicyOut(p: messaging.SlaPolicy__Output): z.input<typeof S.SlaPolicy> {
  return {
    id: p.id,
    name: p.name,
    firstResponseMinutes: p.firstResponseMinutes,
    nextResponseMinutes: p.nextResponseMinutes ?? null,
    resolutionMinutes: p.resolutionMinutes ?? null,
    businessHoursOnly: p.businessHoursOnly,
    // messaging keeps only assignee and team_leads in notify
    onBreach: { notify: (p.onBreach?.notify ?? []) as ('assignee' | 'team_leads')[], reassign: p.onBreach?.reassign ?? false },
    chatnetAccountIds: p.chatnetAccountIds,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

/** The policy an account follows; null when none. */
export function accountSlaOut(a: messaging.AccountSla__Output): z.input<typeof S.AccountSla> {
  return { chatnetAccountId: a.chatnetAccountId, policyId: orNull(a.policyId) };
}

/** SLA attainment per policy (GET /analytics/sla); attainment null when no conversation counted. */
export function slaReportOut(r: messaging.SlaReport__Output): z.input<typeof S.SlaReport> {
  return {
    from: r.from,
    to: r.to,
    data: r.data.map((p) => ({
      policyId: p.policyId,
      name: p.name,
      conversations: p.conversations,
      met: p.met,
      breached: p.breached,
      attainment: p.attainment ?? null,
    })),
  };
}
