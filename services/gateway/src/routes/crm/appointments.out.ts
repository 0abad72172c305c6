import type { crm } from '@crm/proto-types';
import { orNull } from '../../http/shape';

export type Appointment = crm.Appointment__Output;
type AppointmentBrief = crm.AppointmentBrief__Output;
type AppointmentContact = crm.AppointmentContact__Output;

export function appointmentOut(a: Appointment) {
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
    status: a.status,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

/** Public appointments are day + time (UTC) as they were created. */
export function publicAppointmentOut(a: Appointment | AppointmentBrief, contact?: AppointmentContact | null) {
  return {
    id: a.id,
    ...('contactId' in a ? { contactId: a.contactId } : {}),
    appointmentDate: a.scheduledAt.slice(0, 10),
    appointmentTime: a.scheduledAt.slice(11, 16),
    type: a.type,
    notes: orNull(a.notes),
    status: a.status,
    title: a.title,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    ...(contact ? { contact: { id: contact.id, fullName: contact.name, phone: orNull(contact.phone), email: orNull(contact.email) } } : {}),
  };
}
