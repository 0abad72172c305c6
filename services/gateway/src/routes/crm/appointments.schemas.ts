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

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

/** An appointment (appointmentOut is typed by it). */
export const Appointment = z.object({
  id: z.string(),
  contactId: z.string(),
  contactName: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  scheduledAt: iso(),
  duration: z.number().int().meta({ description: 'minutes' }),
  type: z.string(),
  location: z.string().nullable(),
  assignedUserId: z.string().nullable(),
  status: z.enum(rules.APPOINTMENT_STATUSES),
  createdAt: iso(),
  updatedAt: iso(),
});

/** A public appointment (publicAppointmentOut is typed by it): day and time (UTC) as they were created. */
export const PublicAppointment = z.object({
  id: z.string(),
  contactId: z.string().optional().meta({ description: 'absent inside a contact’s detail' }),
  appointmentDate: z.string().meta({ description: 'YYYY-MM-DD' }),
  appointmentTime: z.string().meta({ description: 'HH:MM (UTC)' }),
  type: z.string(),
  notes: z.string().nullable(),
  status: z.enum(rules.APPOINTMENT_STATUSES),
  title: z.string(),
  createdAt: iso(),
  updatedAt: iso(),
  contact: z.object({ id: z.string(), fullName: z.string(), phone: z.string().nullable(), email: z.string().nullable() }).optional(),
});
