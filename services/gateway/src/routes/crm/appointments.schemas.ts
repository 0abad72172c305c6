import { z } from 'zod';
import { crmRules as rules } from '@crm/validation';
import { s } from '../../http/validate';
import { byRule, clearableId, text, uuid } from './common.schemas';

const MAX = rules.APPOINTMENT_TEXT_MAX;
const duration = z
  .number({ error: rules.DURATION_MESSAGE })
  .int(rules.DURATION_MESSAGE)
  .min(1, rules.DURATION_MESSAGE)
  .max(rules.MAX_DURATION_MINUTES, rules.DURATION_MESSAGE);
const kind = byRule(z.string().trim().toLowerCase(), (v) => v && rules.appointmentType(v));

export const NewAppointment = z.object({
  contactId: s.requiredText(100),
  title: s.requiredText(MAX.title),
  description: text(MAX.description),
  scheduledAt: s.timestamp(),
  duration: duration.optional(),
  type: kind.optional(),
  location: text(MAX.location),
  assignedUserId: clearableId('a user'),
});
export const AppointmentPatch = z.object({
  title: s.requiredText(MAX.title).optional(),
  description: text(MAX.description),
  scheduledAt: s.timestamp().optional(),
  duration: duration.optional(),
  type: kind.optional(),
  location: text(MAX.location),
  assignedUserId: clearableId('a user'),
  status: s.enumOf(rules.APPOINTMENT_STATUSES).optional(),
});
export const AppointmentQuery = z.object({
  status: s.optionalQueryEnum(rules.APPOINTMENT_STATUSES),
  contactId: uuid('a contact').optional(),
  dateFrom: s.dateOrTimestamp().optional(),
  dateTo: s.dateOrTimestamp().optional(),
});

export const PublicNewAppointment = z.object({
  contactId: s.requiredText(100),
  appointmentDate: s.date(),
  appointmentTime: z.string().regex(rules.APPOINTMENT_TIME_PATTERN, rules.APPOINTMENT_TIME_MESSAGE).optional(),
  type: kind.optional(),
  notes: text(MAX.notes),
});
export const PublicAppointmentQuery = z.object({ from: s.date().optional(), to: s.date().optional() });
