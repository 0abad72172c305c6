import { BusinessHoursBody, BusinessHoursStatusQuery } from '../../routes/service-levels.routes';
import { area } from '../registry';
import { AccountBusinessHours, BusinessHours, BusinessHoursStatus } from '../schemas/service-levels';

const hours = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Business hours' });
const RULES =
  'Opening ranges per weekday in an IANA time zone (several per day, not overlapping; close after open, 24:00 the end of the day), ' +
  'and holidays closed all day. 400 names the field (timezone, days[i].open, days[i] for an overlap, holidays[i]). Admins and owners change them.';

hours.op('GET /settings/business-hours', { summary: 'The org’s business hours (open all the time until set)', responses: { 200: BusinessHours } });
hours.op('PUT /settings/business-hours', { summary: 'Replace the org’s business hours', description: RULES, body: BusinessHoursBody, responses: { 200: BusinessHours } });
hours.op('GET /settings/business-hours/status', {
  summary: 'Whether the org (or, with chatnetAccountId, that account) is open now, and when that next changes',
  query: BusinessHoursStatusQuery,
  responses: { 200: BusinessHoursStatus },
  errors: [404],
});
hours.op('GET /chatnet-accounts/:id/business-hours', { summary: 'The hours that apply to an account: its own, or the org’s (inherited)', responses: { 200: AccountBusinessHours } });
hours.op('PUT /chatnet-accounts/:id/business-hours', {
  summary: 'Give an account its own business hours, or send the JSON body null to follow the org’s again',
  description: RULES,
  body: BusinessHoursBody.nullable(),
  responses: { 200: AccountBusinessHours },
});

export const serviceLevelsOps = hours.ops;
