import { AccountSlaBody, BusinessHoursBody, BusinessHoursStatusQuery, SlaPolicyBody, SlaReportQuery } from '../../routes/service-levels.routes';
import { area } from '../registry';
import { page } from '../schemas/common';
import { AccountBusinessHours, AccountSla, BusinessHours, BusinessHoursStatus, SlaPolicy, SlaReport } from '../schemas/service-levels';

const hours = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Business hours' });
const RULES =
  'Opening ranges per weekday in an IANA time zone (several per day, not overlapping; close after open, 24:00 the end of the day), ' +
  'and holidays closed all day. 400 names the field (timezone, days.i.open, days.i for an overlap, holidays.i). Admins and owners change them.';

hours.op('GET /settings/business-hours', { summary: 'The org’s business hours (open all the time until set)', responses: { 200: BusinessHours } });
hours.op('PUT /settings/business-hours', {
  summary: 'Replace the org’s business hours',
  description: RULES,
  body: BusinessHoursBody,
  responses: { 200: BusinessHours },
});
hours.op('GET /settings/business-hours/status', {
  summary: 'Whether the org (or, with chatnetAccountId, that account) is open now, and when that next changes',
  query: BusinessHoursStatusQuery,
  responses: { 200: BusinessHoursStatus },
  errors: [404],
});
hours.op('GET /chatnet-accounts/:id/business-hours', {
  summary: 'The hours that apply to an account: its own, or the org’s (inherited)',
  responses: { 200: AccountBusinessHours },
});
hours.op('PUT /chatnet-accounts/:id/business-hours', {
  summary: 'Give an account its own business hours, or send the JSON body null to follow the org’s again',
  description: RULES,
  body: BusinessHoursBody.nullable(),
  responses: { 200: AccountBusinessHours },
});

const sla = area({ prefix: '/api/v1', auth: 'bearer', tag: 'SLA policies' });
const SLA_RULES =
  'Windows are whole minutes from 1 to 525600 (firstResponseMinutes required); onBreach.notify lists any of assignee, team_leads. ' +
  '400 names the field. Admins and owners change policies; everyone in the org reads them.';
sla.op('GET /sla-policies', {
  summary: 'The org’s SLA policies, oldest first',
  paging: { limit: 20, max: 100 },
  responses: { 200: page(SlaPolicy) },
});
sla.op('POST /sla-policies', { summary: 'Create an SLA policy', description: SLA_RULES, body: SlaPolicyBody, responses: { 201: SlaPolicy } });
sla.op('GET /sla-policies/:id', { summary: 'One SLA policy', responses: { 200: SlaPolicy } });
sla.op('PUT /sla-policies/:id', { summary: 'Replace an SLA policy', description: SLA_RULES, body: SlaPolicyBody, responses: { 200: SlaPolicy } });
sla.op('DELETE /sla-policies/:id', { summary: 'Delete an SLA policy (its accounts follow none)', responses: { 204: null } });
sla.op('GET /chatnet-accounts/:id/sla', { summary: 'The SLA policy an account follows (policyId null: none)', responses: { 200: AccountSla } });
sla.op('PUT /chatnet-accounts/:id/sla', {
  summary: 'Attach an SLA policy to an account ({policyId}), or detach it ({policyId: null})',
  description: 'A policy of another organization is 400 naming policyId. Admins and owners.',
  body: AccountSlaBody,
  responses: { 200: AccountSla },
});

const reports = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Analytics' });
reports.op('GET /analytics/sla', {
  summary: 'SLA attainment per policy over a range: conversations, met, breached, attainment',
  description:
    'Per SLA policy of the org (oldest first): the conversations with a window that ended in [from, to) — answered or closed in time (met), or breached — and how many missed at least one; attainment = met / conversations (null when none). A window stopped by closing before its due time (a pending reply) counts neither way. from/to: a date (its whole day) or an ISO timestamp; absent: the 30 days up to now; to before from is 400 naming to. Team leads and above.',
  query: SlaReportQuery,
  responses: { 200: SlaReport },
  errors: [403],
});

export const serviceLevelsOps = [...hours.ops, ...sla.ops, ...reports.ops];
