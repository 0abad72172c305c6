import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { Appointment as AppointmentSchema, PublicAppointment } from './appointments.schemas';
import { orNull } from '../../http/shape';

export type Appointment = crm.Appointment__Output;
/** crm answers one of APPOINTMENT_STATUSES (the response contract checks it). */
type Status = z.input<typeof AppointmentSchema>['status'];
type AppointmentBrief = crm.AppointmentBrief__Output;
type AppointmentContact = crm.AppointmentContact__Output;

export function appointmentOut(a: Appointment): z.input<typeof AppointmentSchema> {
  return {
    id: a.id,
    contactId: a.contactId,
    contactName: a.contactName,
    title: a.title,
    description: orNull(a.description),
    scheduledAt: a.scheduledAt,
    duration: a.duration,
    type: a.type,
    location: orNull(a.location),
    assignedUserId: a.assignedUserId ?? null,
    status: a.status as Status,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

/** Public appointments are day + time (UTC) as they were created. */
export function publicAppointmentOut(a: Appointment | AppointmentBrief, contact?: AppointmentContact | null): z.input<typeof PublicAppointment> {
  return {
    id: a.id,
    ...('contactId' in a ? { contactId: a.contactId } : {}),
    appointmentDate: a.scheduledAt.slice(0, 10),
    appointmentTime: a.scheduledAt.slice(11, 16),
    type: a.type,
    notes: orNull(a.notes),
    status: a.status as Status,
    title: a.title,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    ...(contact ? { contact: { id: contact.id, fullName: contact.name, phone: orNull(contact.phone), email: orNull(contact.email) } } : {}),
  };
}
