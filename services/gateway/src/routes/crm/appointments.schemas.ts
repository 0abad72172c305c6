import { z } from 'zod';
import { s } from '../../http/validate';
import { clearableId, text, uuid } from './common.schemas';

const APPOINTMENT_STATUSES = ['scheduled', 'completed', 'cancelled'] as const;

const duration = z.number({ error: 'must be a whole number of minutes' }).int('must be a whole number of minutes').min(1).max(7 * 24 * 60);
const kind = z.string().trim().toLowerCase().regex(/^[a-z0-9_-]{1,40}$/, 'must be 1-40 letters, digits, - or _ (e.g. meeting, call)');

export const NewAppointment = z.object({
  contactId: s.requiredText(100),
  title: s.requiredText(200),
  description: text(5000),
  scheduledAt: s.timestamp(),
  duration: duration.optional(),
  type: kind.optional(),
  location: text(500),
  assignedUserId: clearableId('a user'),
});
export const AppointmentPatch = z.object({
  title: s.requiredText(200).optional(),
  description: text(5000),
  scheduledAt: s.timestamp().optional(),
  duration: duration.optional(),
  type: kind.optional(),
  location: text(500),
  assignedUserId: clearableId('a user'),
  status: s.enumOf(APPOINTMENT_STATUSES).optional(),
});
export const AppointmentQuery = z.object({
  status: s.optionalQueryEnum(APPOINTMENT_STATUSES),
  contactId: uuid('a contact').optional(),
  dateFrom: s.dateOrTimestamp().optional(),
  dateTo: s.dateOrTimestamp().optional(),
});

export const PublicNewAppointment = z.object({
  contactId: s.requiredText(100),
  appointmentDate: s.date(),
  appointmentTime: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time (HH:MM, 24-hour)')
    .optional(),
  type: kind.optional(),
  notes: text(5000),
});
export const PublicAppointmentQuery = z.object({ from: s.date().optional(), to: s.date().optional() });
