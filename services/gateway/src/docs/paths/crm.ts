import { z } from 'zod';
import {
  AppointmentPatch,
  AppointmentQuery,
  BulkContacts,
  ContactPatch,
  ContactQuery,
  CustomerListPatch,
  NewAppointment,
  NewContact,
  NewCustomerList,
  NewStatus,
  Note as NoteBody,
  StatusPatch,
} from '../../routes/crm';
import { nulls, replyItem } from '../proto-schema';
import { area } from '../registry';
import { VIEW_APPLIED, VIEW_ID } from '../../routes/views.schemas';
import { page } from '../schemas/common';
import {
  Appointment,
  BulkResult,
  Contact,
  ContactDetail,
  CustomerList,
  CustomerListBrief,
  CustomerListCreated,
  Friend,
  MemberContact,
  Note,
} from '../schemas/crm';

/** Contacts, notes, custom statuses, appointments and customer lists (crm), internal API. */
const contacts = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Contacts' });
contacts.op('GET /contacts', {
  summary: 'Contacts of the organization, filtered and sorted',
  description:
    'An agent sees the contacts of the conversations visible to them (inbox visibility). `cf.<key>=value` filters on a custom field (exact match, read by the field’s type; ' +
    '400 naming `cf.<key>` for an unknown key or a value of the wrong type; at most 10). ' +
    VIEW_APPLIED,
  query: ContactQuery.extend({ viewId: VIEW_ID }),
  paging: { limit: 50, max: 100 },
  responses: { 200: page(Contact) },
});
contacts.op('POST /contacts', { summary: 'Create a contact', body: NewContact, responses: { 201: Contact }, errors: [409] });
contacts.op('POST /contacts/bulk', {
  summary: 'Tag, untag, set status, assign or delete many contacts; each id that fails is listed',
  body: BulkContacts,
  responses: { 200: BulkResult },
});
contacts.op('GET /contacts/:id', {
  summary: 'One contact with its notes, conversations, appointments and activities',
  responses: { 200: ContactDetail },
});
contacts.op('PUT /contacts/:id', {
  summary: 'Change a contact; only the fields sent change',
  body: ContactPatch,
  responses: { 200: Contact },
  errors: [409],
});
contacts.op('DELETE /contacts/:id', { summary: 'Delete a contact', responses: { 204: null } });
contacts.op('GET /contacts/:id/friends', { summary: 'The chat-network friends records of a contact', responses: { 200: z.array(Friend) } });
contacts.op('POST /contacts/:id/notes', { summary: 'Add a note to a contact', body: NoteBody, responses: { 201: Note } });
contacts.op('PUT /contacts/:id/notes/:noteId', {
  summary: 'Edit a note (its author, or a team lead and above)',
  body: NoteBody,
  responses: { 200: Note },
});
contacts.op('DELETE /contacts/:id/notes/:noteId', { summary: 'Delete a note (its author, or a team lead and above)', responses: { 204: null } });

const statuses = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Contact statuses' });
/** routes/crm statusOut: no color is null. */
const Status = nulls(replyItem('crm', 'ListContactStatuses'), ['color']);
statuses.op('GET /contact-statuses', { summary: 'The organization’s custom contact statuses', responses: { 200: z.array(Status) } });
statuses.op('POST /contact-statuses', { summary: 'Create a custom contact status', body: NewStatus, responses: { 201: Status }, errors: [409] });
statuses.op('GET /contact-statuses/:id', { summary: 'One custom contact status', responses: { 200: Status } });
statuses.op('PUT /contact-statuses/:id', { summary: 'Change a custom contact status', body: StatusPatch, responses: { 200: Status }, errors: [409] });
statuses.op('DELETE /contact-statuses/:id', {
  summary: 'Delete a custom contact status (contacts keep their status text)',
  responses: { 204: null },
});

const appointments = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Appointments' });
appointments.op('GET /appointments', {
  summary: 'Appointments, filtered by status, contact and date',
  query: AppointmentQuery,
  paging: { limit: 50, max: 100 },
  responses: { 200: page(Appointment) },
});
appointments.op('POST /appointments', {
  summary: 'Schedule an appointment with a contact',
  body: NewAppointment,
  responses: { 201: Appointment },
  errors: [404],
});
appointments.op('GET /appointments/:id', { summary: 'One appointment', responses: { 200: Appointment } });
appointments.op('PUT /appointments/:id', {
  summary: 'Reschedule, complete, cancel or edit an appointment',
  body: AppointmentPatch,
  responses: { 200: Appointment },
});
appointments.op('DELETE /appointments/:id', { summary: 'Delete an appointment', responses: { 204: null } });

const lists = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Customer lists' });
lists.op('GET /customer-lists', {
  summary: 'Saved customer lists (criteria over contacts, evaluated live)',
  responses: { 200: z.array(CustomerListBrief) },
});
lists.op('POST /customer-lists', {
  summary: 'Create a customer list (campaigns:manage)',
  body: NewCustomerList,
  responses: { 201: CustomerListCreated },
  errors: [409],
});
lists.op('GET /customer-lists/:id', { summary: 'One customer list with its criteria', responses: { 200: CustomerList } });
lists.op('PUT /customer-lists/:id', {
  summary: 'Change a customer list (campaigns:manage)',
  body: CustomerListPatch,
  responses: { 200: CustomerList },
  errors: [409],
});
lists.op('DELETE /customer-lists/:id', { summary: 'Delete a customer list (campaigns:manage)', responses: { 204: null } });
lists.op('POST /customer-lists/:id/activate', { summary: 'Activate a customer list', responses: { 200: CustomerList }, errors: [422] });
lists.op('POST /customer-lists/:id/pause', { summary: 'Pause a customer list', responses: { 200: CustomerList }, errors: [422] });
lists.op('GET /customer-lists/:id/members', {
  summary: 'The contacts the list’s criteria match now',
  paging: { limit: 50, max: 100 },
  responses: { 200: page(MemberContact) },
});

export const crmOps = [...contacts.ops, ...statuses.ops, ...appointments.ops, ...lists.ops];
