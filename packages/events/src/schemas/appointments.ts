import { z } from 'zod';
import { Changes, Id, Instant, Ref } from './common';
import { defineEvent } from './define';

/** The appointment as crm returns it (toAppointment), its contact in brief. */
export const EventAppointment = z.object({
  id: Id,
  contactId: Id,
  contactName: z.string(),
  title: z.string(),
  description: z.string(),
  scheduledAt: Instant,
  duration: z.number(),
  type: z.string(),
  location: z.string(),
  assignedUserId: Ref.nullable(),
  status: z.string(),
  notes: z.string(),
  createdAt: Instant,
  updatedAt: Instant,
  contact: z.object({ id: Id, name: z.string(), phone: z.string(), email: z.string() }),
});

export const appointmentCreated = defineEvent({
  type: 'appointment.created',
  version: 1,
  producers: ['crm'],
  description: 'An appointment was scheduled; data.appointment.',
  data: z.object({ appointment: EventAppointment }),
  webhook: 'same',
});

export const appointmentUpdated = defineEvent({
  type: 'appointment.updated',
  version: 1,
  producers: ['crm'],
  description: 'An appointment changed (rescheduled, completed, cancelled, edited); data: appointment, changes (the fields).',
  data: z.object({ appointment: EventAppointment, changes: Changes }),
  webhook: 'same',
});

export const appointmentDeleted = defineEvent({
  type: 'appointment.deleted',
  version: 1,
  producers: ['crm'],
  description: 'An appointment was deleted; data.appointment is the appointment as it was.',
  data: z.object({ appointment: EventAppointment }),
  webhook: 'same',
});

export const appointmentEvents = [appointmentCreated, appointmentUpdated, appointmentDeleted];
