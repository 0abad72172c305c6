import express, { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';
import { ctxOf } from '../http/principal';
import { rejectUnsafeText } from '../http/text-guard';
import { body, pathParam, query } from '../http/validate';
import { accountBusinessHoursOut, businessHoursOut, businessHoursStatusOut } from './service-levels.out';

// The shape only: times, weekdays, overlaps, holidays and the zone are messaging's call (one place names the field).
const Range = z.object({
  day: z.number({ error: 'must be a weekday from 0 (Sunday) to 6 (Saturday)' }),
  open: z.string({ error: 'must be a time HH:MM' }),
  close: z.string({ error: 'must be a time HH:MM' }),
});
export const BusinessHoursBody = z.object({
  timezone: z.string({ error: 'is required (an IANA time zone such as Asia/Ho_Chi_Minh)' }),
  days: z.array(Range, { error: 'must be a list of opening ranges' }),
  holidays: z.array(z.string({ error: 'must be a date YYYY-MM-DD' }), { error: 'must be a list of dates' }).optional(),
});
export const BusinessHoursStatusQuery = z.object({ chatnetAccountId: z.string().trim().optional() });

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

  return { internal, parsesOwnBody: (req) => req.method === 'PUT' && ACCOUNT_HOURS.test(req.path) };
}
