import { ACCOUNT_HOURS_RULES, hoursRoutes, slaReportRoutes, slaRoutes } from '../../routes/service-levels.routes';
import { AccountBusinessHours, BusinessHoursBody } from '../../routes/service-levels.schemas';
import { area } from '../registry';

/**
 * The one service-levels route not declared in routes/service-levels.routes.ts: its JSON body may be `null` (follow
 * the org's hours again), which needs a parser of its own before the handler; a route declaration cannot take one yet.
 */
const hours = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Business hours' });
hours.op('PUT /chatnet-accounts/:id/business-hours', {
  summary: 'Give an account its own business hours, or send the JSON body null to follow the org’s again',
  description: ACCOUNT_HOURS_RULES,
  body: BusinessHoursBody.nullable(),
  responses: { 200: AccountBusinessHours },
});

export const serviceLevelsOps = [...hoursRoutes.ops, ...hours.ops, ...slaRoutes.ops, ...slaReportRoutes.ops];
