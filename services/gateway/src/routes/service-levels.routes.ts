import express, { Router } from 'express';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { rejectUnsafeText } from '../http/text-guard';
import { dateRange } from '../http/validate';
import { page } from './common.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';
import { accountBusinessHoursOut, accountSlaOut, businessHoursOut, businessHoursStatusOut, slaPolicyOut, slaReportOut } from './service-levels.out';
import {
  AccountBusinessHours,
  AccountSla,
  AccountSlaBody,
  BusinessHours,
  BusinessHoursBody,
  BusinessHoursStatus,
  BusinessHoursStatusQuery,
  SlaPolicy,
  SlaPolicyBody,
  SlaReport,
  SlaReportQuery,
} from './service-levels.schemas';

/** An account's hours take the JSON body `null` (follow the org's again), which the shared strict parser refuses. */
const ACCOUNT_HOURS = /^\/api\/v1\/chatnet-accounts\/[^/]+\/business-hours\/?$/;

const levels = (deps: RouteDeps) => deps.clients.messagingLevels;

/**
 * Service levels (owned by messaging, issue #29): business hours of the org and of each account, SLA policies and
 * their report. Served and documented from these declarations.
 */
export const hoursRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Business hours' });
const RULES =
  'Opening ranges per weekday in an IANA time zone (several per day, not overlapping; close after open, 24:00 the end of the day), ' +
  'and holidays closed all day. 400 names the field (timezone, days.i.open, days.i for an overlap, holidays.i). Admins and owners change them.';

hoursRoutes.route('GET /settings/business-hours', {
  summary: 'The org’s business hours (open all the time until set)',
  response: BusinessHours,
  handler: async ({ ctx, deps }) => businessHoursOut(await levels(deps).GetBusinessHours({}, ctx)),
});
hoursRoutes.route('PUT /settings/business-hours', {
  summary: 'Replace the org’s business hours',
  description: RULES,
  body: BusinessHoursBody,
  response: BusinessHours,
  handler: async ({ body: b, ctx, deps }) => businessHoursOut(await levels(deps).SetBusinessHours(b, ctx)),
});
hoursRoutes.route('GET /settings/business-hours/status', {
  summary: 'Whether the org (or, with chatnetAccountId, that account) is open now, and when that next changes',
  query: BusinessHoursStatusQuery,
  response: BusinessHoursStatus,
  errors: [404],
  handler: async ({ query: q, ctx, deps }) =>
    businessHoursStatusOut(await levels(deps).GetBusinessHoursStatus({ chatnetAccountId: q.chatnetAccountId ?? '' }, ctx)),
});
hoursRoutes.route('GET /chatnet-accounts/:id/business-hours', {
  summary: 'The hours that apply to an account: its own, or the org’s (inherited)',
  response: AccountBusinessHours,
  handler: async ({ param, ctx, deps }) => accountBusinessHoursOut(await levels(deps).GetBusinessHours({ chatnetAccountId: param('id') }, ctx)),
});
hoursRoutes.route('PUT /chatnet-accounts/:id/business-hours', {
  summary: 'Give an account its own business hours, or send the JSON body null to follow the org’s again',
  description: RULES,
  // A parser of its own that admits the body `null` (the shared one is strict: objects and arrays only).
  middleware: (deps) => [express.json({ limit: deps.config.BODY_LIMIT, strict: false }), rejectUnsafeText],
  body: BusinessHoursBody.nullable(),
  response: AccountBusinessHours,
  handler: async ({ param, body: b, ctx, deps }) => {
    const chatnetAccountId = param('id');
    const hours = b === null ? { chatnetAccountId, clear: true } : { ...b, chatnetAccountId };
    return accountBusinessHoursOut(await levels(deps).SetBusinessHours(hours, ctx));
  },
});

export const slaRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'SLA policies' });
const SLA_RULES =
  'Windows are whole minutes from 1 to 525600 (firstResponseMinutes required); onBreach.notify lists any of assignee, team_leads. ' +
  '400 names the field. Admins and owners change policies; everyone in the org reads them.';
slaRoutes.route('GET /sla-policies', {
  summary: 'The org’s SLA policies, oldest first',
  paging: { limit: 20, max: 100 },
  response: page(SlaPolicy),
  handler: async ({ page, ctx, deps }) => {
    const out = await levels(deps).ListSlaPolicies(page, ctx);
    return { data: out.data.map(slaPolicyOut), pagination: out.pagination! };
  },
});
slaRoutes.route('POST /sla-policies', {
  summary: 'Create an SLA policy',
  description: SLA_RULES,
  body: SlaPolicyBody,
  status: 201,
  response: SlaPolicy,
  handler: async ({ body: b, ctx, deps }) => slaPolicyOut(await levels(deps).CreateSlaPolicy(b, ctx)),
});
slaRoutes.route('GET /sla-policies/:id', {
  summary: 'One SLA policy',
  response: SlaPolicy,
  handler: async ({ param, ctx, deps }) => slaPolicyOut(await levels(deps).GetSlaPolicy({ id: param('id') }, ctx)),
});
slaRoutes.route('PUT /sla-policies/:id', {
  summary: 'Replace an SLA policy',
  description: SLA_RULES,
  body: SlaPolicyBody,
  response: SlaPolicy,
  handler: async ({ param, body: b, ctx, deps }) => slaPolicyOut(await levels(deps).UpdateSlaPolicy({ ...b, id: param('id') }, ctx)),
});
slaRoutes.route('DELETE /sla-policies/:id', {
  summary: 'Delete an SLA policy (its accounts follow none)',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await levels(deps).DeleteSlaPolicy({ id: param('id') }, ctx);
  },
});
slaRoutes.route('GET /chatnet-accounts/:id/sla', {
  summary: 'The SLA policy an account follows (policyId null: none)',
  response: AccountSla,
  handler: async ({ param, ctx, deps }) => accountSlaOut(await levels(deps).GetAccountSla({ chatnetAccountId: param('id') }, ctx)),
});
slaRoutes.route('PUT /chatnet-accounts/:id/sla', {
  summary: 'Attach an SLA policy to an account ({policyId}), or detach it ({policyId: null})',
  description: 'A policy of another organization is 400 naming policyId. Admins and owners.',
  body: AccountSlaBody,
  response: AccountSla,
  handler: async ({ param, body: b, ctx, deps }) =>
    accountSlaOut(await levels(deps).SetAccountSla({ chatnetAccountId: param('id'), policyId: b.policyId ?? '' }, ctx)),
});

export const slaReportRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Analytics' });
slaReportRoutes.route('GET /analytics/sla', {
  summary: 'SLA attainment per policy over a range: conversations, met, breached, attainment',
  description:
    'Per SLA policy of the org (oldest first): the conversations with a window that ended in [from, to) — answered or closed in time (met), or breached — and how many missed at least one; attainment = met / conversations (null when none). A window stopped by closing before its due time (a pending reply) counts neither way. from/to: a date (its whole day) or an ISO timestamp; absent: the 30 days up to now; to before from is 400 naming to. Team leads and above.',
  query: SlaReportQuery,
  response: SlaReport,
  errors: [403],
  handler: async ({ query: q, ctx, deps }) => {
    const r = dateRange(q.from, q.to, 'from', 'to');
    return slaReportOut(await levels(deps).GetSlaReport({ from: r.dateFrom ?? '', to: r.dateTo ?? '' }, ctx));
  },
});

export function serviceLevelsRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  return {
    internal: Router().use(hoursRoutes.router(deps, contract), slaRoutes.router(deps, contract), slaReportRoutes.router(deps, contract)),
    parsesOwnBody: (req) => req.method === 'PUT' && ACCOUNT_HOURS.test(req.path),
  };
}
