import { z } from 'zod';
import type {
  accountBusinessHoursOut,
  accountSlaOut,
  businessHoursOut,
  businessHoursStatusOut,
  slaPolicyOut,
  slaReportOut,
} from '../../routes/service-levels.out';
import { keysMatch } from './check';

const OpeningRange = z.object({
  day: z.number().int().min(0).max(6).meta({ description: '0 = Sunday … 6 = Saturday' }),
  open: z.string().meta({ description: 'HH:MM local time, 00:00-23:59' }),
  close: z.string().meta({ description: 'HH:MM after open; 24:00 is the end of the day (a night shift is two ranges, one each side of midnight)' }),
});

/** The org's business hours (routes/service-levels.out businessHoursOut). */
export const BusinessHours = z.object({
  timezone: z.string().meta({ description: 'IANA time zone, e.g. Asia/Ho_Chi_Minh' }),
  days: z.array(OpeningRange).meta({ description: 'opening ranges; a day without any is closed' }),
  holidays: z.array(z.string()).meta({ description: 'whole days closed, YYYY-MM-DD in the time zone' }),
  updatedAt: z.string().nullable().meta({ description: 'null while never set: open all the time (UTC, every day 00:00-24:00)' }),
});
keysMatch<z.infer<typeof BusinessHours>, ReturnType<typeof businessHoursOut>>(true);

/** What applies to an account (accountBusinessHoursOut). */
export const AccountBusinessHours = BusinessHours.extend({
  chatnetAccountId: z.string(),
  inherited: z.boolean().meta({ description: 'true: the account has no hours of its own and follows the org’s (shown)' }),
});
keysMatch<z.infer<typeof AccountBusinessHours>, ReturnType<typeof accountBusinessHoursOut>>(true);

export const BusinessHoursStatus = z.object({
  open: z.boolean(),
  nextChangeAt: z.string().nullable().meta({ description: 'when it next opens or closes; null when nothing changes within a year' }),
});
keysMatch<z.infer<typeof BusinessHoursStatus>, ReturnType<typeof businessHoursStatusOut>>(true);

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
keysMatch<z.infer<typeof SlaPolicy>, ReturnType<typeof slaPolicyOut>>(true);

export const AccountSla = z.object({ chatnetAccountId: z.string(), policyId: z.string().nullable() });
keysMatch<z.infer<typeof AccountSla>, ReturnType<typeof accountSlaOut>>(true);

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
keysMatch<z.infer<typeof SlaReport>, ReturnType<typeof slaReportOut>>(true);
