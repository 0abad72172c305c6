import { z } from 'zod';
import { badRequest } from '../../http/errors';
import { CURSOR_LISTS, nextCursor, publicPage } from '../../http/cursor';
import { routeArea } from '../../http/route-area';
import { answered } from '../../http/shape';
import { dateRange } from '../../http/validate';
import type { RouteDeps } from '../deps';
import { publicAppointmentOut } from './appointments.out';
import { PublicAppointment, PublicAppointmentQuery, PublicNewAppointment } from './appointments.schemas';
import { publicContactOut } from './contacts.out';
import { customFieldsJson, nextCursorField, PublicContact, PublicContactDetail, PublicContactFields, PublicContactQuery } from './contacts.schemas';

/** At most this many appointments on a page of the public list, and the default (spec: up to 100). */
const PUBLIC_APPOINTMENTS_MAX = 100;
/** The public contact detail shows this many most recent appointments. */
const PUBLIC_DETAIL_APPOINTMENTS = 5;

/** Public API: contacts (X-API-Key checked by app.ts before these routes; each declares its scope). */
export const publicContactRoutes = routeArea({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: contacts' });
/** Public API: appointments. */
export const publicAppointmentRoutes = routeArea({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: appointments' });
const crm = (deps: RouteDeps) => deps.clients.crm;

publicContactRoutes.route('GET /contacts', {
  scope: 'contacts:read',
  summary: 'List contacts (search by name, phone or email; filter by status)',
  query: PublicContactQuery,
  paging: { limit: 20, max: 100, limitOnly: true, cursor: 'updatedAt' },
  response: z.object({ contacts: z.array(PublicContact), nextCursor: nextCursorField }),
  handler: async ({ req, query: q, ctx, deps }) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.contacts, 20, 100);
    const out = await crm(deps).ListContacts({ page: 1, limit, ...q, skipTotal: true, keyset }, ctx);
    return { contacts: out.data.map(publicContactOut), nextCursor: nextCursor(CURSOR_LISTS.contacts, keyset, out.next) };
  },
});
publicContactRoutes.route('GET /contacts/:id', {
  scope: 'contacts:read',
  summary: 'One contact with its 5 most recent appointments and its conversation count',
  response: PublicContactDetail,
  handler: async ({ param, ctx, deps }) => {
    // Only what the public detail shows: no notes, no activities.
    const d = await crm(deps).GetContact({ id: param('id'), parts: ['appointments', 'conversations'] }, ctx);
    return {
      ...publicContactOut(answered(d.contact, 'crm GetContact: contact')),
      appointments: d.appointments.slice(0, PUBLIC_DETAIL_APPOINTMENTS).map((a) => publicAppointmentOut(a)),
      // null when messaging could not be asked: unknown is not zero.
      conversationCount: d.conversationsAvailable ? d.conversations.length : null,
    };
  },
});
publicContactRoutes.route('POST /contacts', {
  scope: 'contacts:write',
  summary: 'Create a contact; at least one of fullName or phone is required',
  body: PublicContactFields,
  status: 201,
  response: PublicContact,
  errors: [409],
  handler: async ({ body: { fullName, tags: t, customFields, ...rest }, ctx, deps }) => {
    if (!fullName && !rest.phone) throw badRequest([{ field: 'fullName', message: 'fullName or phone is required' }]);
    const c = await crm(deps).CreateContact(
      { ...rest, name: fullName, tags: t ?? [], source: rest.source || 'api', customFieldsJson: customFieldsJson(customFields) },
      ctx,
    );
    return publicContactOut(c);
  },
});
publicContactRoutes.route('PUT /contacts/:id', {
  scope: 'contacts:write',
  summary: 'Update a contact; only the fields sent are changed',
  body: PublicContactFields,
  response: PublicContact,
  errors: [409],
  handler: async ({ param, body: { fullName, tags: t, customFields, ...rest }, ctx, deps }) => {
    const c = await crm(deps).UpdateContact(
      { id: param('id'), ...rest, name: fullName, tags: t ? { values: t } : undefined, customFieldsJson: customFieldsJson(customFields) },
      ctx,
    );
    return publicContactOut(c);
  },
});

publicAppointmentRoutes.route('GET /appointments', {
  scope: 'appointments:read',
  summary:
    'Appointments with contact information, filtered on appointmentDate (from/to inclusive), earliest first (with updatedSince: least recently changed first), up to 100 a page',
  query: PublicAppointmentQuery,
  paging: { limit: 100, max: 100, limitOnly: true, cursor: 'updatedAt' },
  response: z.object({ appointments: z.array(PublicAppointment), nextCursor: nextCursorField }),
  handler: async ({ req, query: q, ctx, deps }) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.appointments, PUBLIC_APPOINTMENTS_MAX, PUBLIC_APPOINTMENTS_MAX);
    const { dateFrom, dateTo } = dateRange(q.from, q.to, 'from', 'to');
    const out = await crm(deps).ListAppointments({ page: 1, limit, dateFrom, dateTo, skipTotal: true, keyset }, ctx);
    return {
      appointments: out.data.map((a) => publicAppointmentOut(a, a.contact)),
      nextCursor: nextCursor(CURSOR_LISTS.appointments, keyset, out.next),
    };
  },
});
publicAppointmentRoutes.route('POST /appointments', {
  scope: 'appointments:write',
  summary: 'Create an appointment for a contact (404 when the contact is not the organization’s)',
  body: PublicNewAppointment,
  status: 201,
  response: PublicAppointment,
  errors: [404],
  handler: async ({ body: a, ctx, deps }) => {
    const created = await crm(deps).CreateAppointment(
      {
        contactId: a.contactId,
        scheduledAt: `${a.appointmentDate}T${a.appointmentTime ?? '00:00'}:00.000Z`,
        type: a.type ?? 'meeting',
        notes: a.notes ?? '',
      },
      ctx,
    );
    return publicAppointmentOut(created, created.contact);
  },
});
