import { z } from 'zod';
import { s } from '../http/validate';

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

const OpeningRange = z.object({
  day: z.number().int().min(0).max(6).meta({ description: '0 = Sunday … 6 = Saturday' }),
  open: z.string().meta({ description: 'HH:MM local time, 00:00-23:59' }),
  close: z.string().meta({ description: 'HH:MM after open; 24:00 is the end of the day (a night shift is two ranges, one each side of midnight)' }),
});

/** The org's business hours (businessHoursOut is typed by it). */
export const BusinessHours = z.object({
  timezone: z.string().meta({ description: 'IANA time zone, e.g. Asia/Ho_Chi_Minh' }),
  days: z.array(OpeningRange).meta({ description: 'opening ranges; a day without any is closed' }),
  holidays: z.array(z.string()).meta({ description: 'whole days closed, YYYY-MM-DD in the time zone' }),
  updatedAt: z.string().nullable().meta({ description: 'null while never set: open all the time (UTC, every day 00:00-24:00)' }),
});

/** What applies to an account (accountBusinessHoursOut). */
export const AccountBusinessHours = BusinessHours.extend({
  chatnetAccountId: z.string(),
  inherited: z.boolean().meta({ description: 'true: the account has no hours of its own and follows the org’s (shown)' }),
});

export const BusinessHoursStatus = z.object({
  open: z.boolean(),
  nextChangeAt: z.string().nullable().meta({ description: 'when it next opens or closes; null when nothing changes within a year' }),
});

const window = (what: string) =>
  z
    .number()
    .int()
    .nullable()
    .meta({ description: `${what}, in minutes; null: not promised` });

/** An SLA policy (slaPolicyOut). */
export const SlaPolicy = z.object({
  id: z.string(),
  name: z.string(),
  firstResponseMinutes: z.number().int().meta({ description: 'first reply to a new inbound conversation within this many minutes' }),
  nextResponseMinutes: window('each later reply after the contact writes again'),
  resolutionMinutes: window('closing the conversation'),
  businessHoursOnly: z.boolean().meta({ description: 'count only business hours (of the account, else the org)' }),
  onBreach: z.object({
    notify: z.array(z.enum(['assignee', 'team_leads'])),
    reassign: z.boolean().meta({ description: 'hand the conversation to the next eligible agent' }),
  }),
  chatnetAccountIds: z.array(z.string()).meta({ description: 'the accounts that follow it' }),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const AccountSla = z.object({ chatnetAccountId: z.string(), policyId: z.string().nullable() });

/** GET /analytics/sla (slaReportOut). */
export const SlaReport = z.object({
  from: z.string(),
  to: z.string(),
  data: z.array(
    z.object({
      policyId: z.string(),
      name: z.string(),
      conversations: z
        .number()
        .int()
        .meta({ description: 'conversations of the policy with a window (first response, next response, resolution) that ended in the range' }),
      met: z.number().int().meta({ description: 'those that kept every such window' }),
      breached: z.number().int().meta({ description: 'those that missed at least one' }),
      attainment: z.number().nullable().meta({ description: 'met / conversations, from 0 to 1; null when none counted' }),
    }),
  ),
});
