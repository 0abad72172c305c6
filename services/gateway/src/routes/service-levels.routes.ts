import express, { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps, ServiceRoutes } from './deps';
import { ctxOf } from '../http/principal';
import { rejectUnsafeText } from '../http/text-guard';
import { body, dateRange, pageParams, pathParam, query, s } from '../http/validate';
import { accountBusinessHoursOut, accountSlaOut, businessHoursOut, businessHoursStatusOut, slaPolicyOut, slaReportOut } from './service-levels.out';

// The shape only: times, weekdays, overlaps, holidays and the zone are messaging's call (one place names the field).
const Range = z.object({
  // Whole numbers here: a fraction would be cut to an integer on its way to messaging.
  day: z.number({ error: 'must be a weekday from 0 (Sunday) to 6 (Saturday)' }).int('must be a weekday from 0 (Sunday) to 6 (Saturday)'),
  open: z.string({ error: 'must be a time HH:MM' }),
  close: z.string({ error: 'must be a time HH:MM' }),
});
export const BusinessHoursBody = z.object({
  timezone: z.string({ error: 'is required (an IANA time zone such as Asia/Ho_Chi_Minh)' }),
  days: z.array(Range, { error: 'must be a list of opening ranges' }),
  holidays: z.array(z.string({ error: 'must be a date YYYY-MM-DD' }), { error: 'must be a list of dates' }).optional(),
});
export const BusinessHoursStatusQuery = z.object({ chatnetAccountId: z.string().trim().optional() });

const minutes = (required: boolean) => {
  // Whole here: a fraction would be cut to an integer on its way to messaging, which checks the range.
  const n = z.number({ error: 'must be whole minutes' }).int('must be whole minutes');
  return required ? n : n.nullable().optional();
};
// Ranges and who is notified are messaging's call too (it names the field).
export const SlaPolicyBody = z.object({
  name: s.requiredText(100),
  firstResponseMinutes: minutes(true),
  nextResponseMinutes: minutes(false),
  resolutionMinutes: minutes(false),
  businessHoursOnly: z.boolean({ error: 'must be true or false' }).optional(),
  onBreach: z
    .object({
      notify: z.array(z.string({ error: 'must be assignee or team_leads' }), { error: 'must be a list' }).optional(),
      reassign: z.boolean({ error: 'must be true or false' }).optional(),
    })
    .optional(),
});
export const AccountSlaBody = z.object({
  policyId: z.string({ error: 'is required: an SLA policy id, or null to detach' }).trim().nullable(),
});

/** GET /analytics/sla: a date (its whole day) or an ISO timestamp each; `to` after `from`. */
export const SlaReportQuery = z.object({ from: s.dateOrTimestamp().optional(), to: s.dateOrTimestamp().optional() });

/** An account's hours take the JSON body `null` (follow the org's again), which the shared strict parser refuses. */
const ACCOUNT_HOURS = /^\/api\/v1\/chatnet-accounts\/[^/]+\/business-hours\/?$/;

/** Service levels (owned by messaging, issue #29): business hours of the org and of each account. */
export function serviceLevelsRoutes({ clients, config }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const levels = () => clients.messagingLevels;
  const nullableJson = express.json({ limit: config.BODY_LIMIT, strict: false });

  internal.get('/settings/business-hours', async (req, res) => {
    res.json(businessHoursOut(await levels().GetBusinessHours({}, ctxOf(req, res))));
  });
  internal.put('/settings/business-hours', async (req, res) => {
    const b = body(req, BusinessHoursBody);
    res.json(businessHoursOut(await levels().SetBusinessHours(b, ctxOf(req, res))));
  });
  internal.get('/settings/business-hours/status', async (req, res) => {
    const q = query(req, BusinessHoursStatusQuery);
    res.json(businessHoursStatusOut(await levels().GetBusinessHoursStatus({ chatnetAccountId: q.chatnetAccountId ?? '' }, ctxOf(req, res))));
  });
  internal.get('/chatnet-accounts/:id/business-hours', async (req, res) => {
    res.json(accountBusinessHoursOut(await levels().GetBusinessHours({ chatnetAccountId: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/chatnet-accounts/:id/business-hours', nullableJson, rejectUnsafeText, async (req, res) => {
    const [ctx, chatnetAccountId] = [ctxOf(req, res), pathParam(req, 'id')];
    if (req.body === null) {
      res.json(accountBusinessHoursOut(await levels().SetBusinessHours({ chatnetAccountId, clear: true }, ctx)));
      return;
    }
    const b = body(req, BusinessHoursBody);
    res.json(accountBusinessHoursOut(await levels().SetBusinessHours({ ...b, chatnetAccountId }, ctx)));
  });

  internal.get('/sla-policies', async (req, res) => {
    const out = await levels().ListSlaPolicies(pageParams(req, 20, 100), ctxOf(req, res));
    res.json({ data: out.data.map(slaPolicyOut), pagination: out.pagination });
  });
  internal.post('/sla-policies', async (req, res) => {
    const b = body(req, SlaPolicyBody);
    res.status(201).json(slaPolicyOut(await levels().CreateSlaPolicy(b, ctxOf(req, res))));
  });
  internal.get('/sla-policies/:id', async (req, res) => {
    res.json(slaPolicyOut(await levels().GetSlaPolicy({ id: pathParam(req, 'id') }, ctxOf(req, res))));
  });
  internal.put('/sla-policies/:id', async (req, res) => {
    const b = body(req, SlaPolicyBody);
    res.json(slaPolicyOut(await levels().UpdateSlaPolicy({ ...b, id: pathParam(req, 'id') }, ctxOf(req, res))));
  });
  internal.delete('/sla-policies/:id', async (req, res) => {
    await levels().DeleteSlaPolicy({ id: pathParam(req, 'id') }, ctxOf(req, res));
    res.status(204).end();
  });
  internal.get('/chatnet-accounts/:id/sla', async (req, res) => {
    res.json(accountSlaOut(await levels().GetAccountSla({ chatnetAccountId: pathParam(req, 'id') }, ctxOf(req, res))));
  });
  internal.put('/chatnet-accounts/:id/sla', async (req, res) => {
    const b = body(req, AccountSlaBody);
    res.json(accountSlaOut(await levels().SetAccountSla({ chatnetAccountId: pathParam(req, 'id'), policyId: b.policyId ?? '' }, ctxOf(req, res))));
  });

  internal.get('/analytics/sla', async (req, res) => {
    const q = query(req, SlaReportQuery);
    const r = dateRange(q.from, q.to, 'from', 'to');
    res.json(slaReportOut(await levels().GetSlaReport({ from: r.dateFrom ?? '', to: r.dateTo ?? '' }, ctxOf(req, res))));
  });

  return { internal, parsesOwnBody: (req) => req.method === 'PUT' && ACCOUNT_HOURS.test(req.path) };
}
