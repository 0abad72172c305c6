import type { messaging } from '@crm/proto-types';
import { orNull } from '../http/shape';

type Hours = messaging.BusinessHours__Output;

/** The org's business hours; updatedAt null while never set (open all the time). */
export function businessHoursOut(h: Hours) {
  return {
    timezone: h.timezone,
    days: h.days.map((d) => ({ day: d.day, open: d.open, close: d.close })),
    holidays: h.holidays,
    updatedAt: orNull(h.updatedAt),
  };
}

/** What applies to an account: its own hours, or the org's (inherited). */
export function accountBusinessHoursOut(h: Hours) {
  return { chatnetAccountId: h.chatnetAccountId, inherited: h.inherited, ...businessHoursOut(h) };
}

export function businessHoursStatusOut(s: messaging.BusinessHoursStatus__Output) {
  return { open: s.open, nextChangeAt: orNull(s.nextChangeAt) };
}
