import { Router } from 'express';
import type { CrmClient } from './crm-client';
import { badRequest } from '../../http/errors';
import { CURSOR_LISTS, nextCursor, publicPage } from '../../http/cursor';
import { ctxOf } from '../../http/principal';
import { requireScope } from '../../http/scopes';
import { answered } from '../../http/shape';
import { body, dateRange, pathParam, query } from '../../http/validate';
import { publicAppointmentOut } from './appointments.out';
import { PublicAppointmentQuery, PublicNewAppointment } from './appointments.schemas';
import { publicContactOut } from './contacts.out';
import { customFieldsJson, PublicContactFields, PublicContactQuery } from './contacts.schemas';

/** At most this many appointments on a page of the public list, and the default (spec: up to 100). */
const PUBLIC_APPOINTMENTS_MAX = 100;
/** The public contact detail shows this many most recent appointments. */
const PUBLIC_DETAIL_APPOINTMENTS = 5;

/** Public API: contacts and appointments (X-API-Key checked by app.ts before these routes; each declares its scope). */
export function publicCrmRoutes(pub: Router, crm: () => CrmClient): void {
  pub.get('/contacts', requireScope('contacts:read'), async (req, res) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.contacts, 20, 100);
    const q = query(req, PublicContactQuery);
    const out = await crm().ListContacts({ page: 1, limit, ...q, skipTotal: true, keyset }, ctxOf(req, res));
    res.json({ contacts: out.data.map(publicContactOut), nextCursor: nextCursor(CURSOR_LISTS.contacts, keyset, out.next) });
  });
  pub.get('/contacts/:id', requireScope('contacts:read'), async (req, res) => {
    // Only what the public detail shows: no notes, no activities.
    const d = await crm().GetContact({ id: pathParam(req, 'id'), parts: ['appointments', 'conversations'] }, ctxOf(req, res));
    res.json({
      ...publicContactOut(answered(d.contact, 'crm GetContact: contact')),
      appointments: d.appointments.slice(0, PUBLIC_DETAIL_APPOINTMENTS).map((a) => publicAppointmentOut(a)),
      // null when messaging could not be asked: unknown is not zero.
      conversationCount: d.conversationsAvailable ? d.conversations.length : null,
    });
  });
  pub.post('/contacts', requireScope('contacts:write'), async (req, res) => {
    const { fullName, tags: t, customFields, ...rest } = body(req, PublicContactFields);
    if (!fullName && !rest.phone) throw badRequest([{ field: 'fullName', message: 'fullName or phone is required' }]);
    const c = await crm().CreateContact(
      { ...rest, name: fullName, tags: t ?? [], source: rest.source || 'api', customFieldsJson: customFieldsJson(customFields) },
      ctxOf(req, res),
    );
    res.status(201).json(publicContactOut(c));
  });
  pub.put('/contacts/:id', requireScope('contacts:write'), async (req, res) => {
    const { fullName, tags: t, customFields, ...rest } = body(req, PublicContactFields);
    const c = await crm().UpdateContact(
      { id: pathParam(req, 'id'), ...rest, name: fullName, tags: t ? { values: t } : undefined, customFieldsJson: customFieldsJson(customFields) },
      ctxOf(req, res),
    );
    res.json(publicContactOut(c));
  });
  pub.get('/appointments', requireScope('appointments:read'), async (req, res) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.appointments, PUBLIC_APPOINTMENTS_MAX, PUBLIC_APPOINTMENTS_MAX);
    const q = query(req, PublicAppointmentQuery);
    const { dateFrom, dateTo } = dateRange(q.from, q.to, 'from', 'to');
    const out = await crm().ListAppointments({ page: 1, limit, dateFrom, dateTo, skipTotal: true, keyset }, ctxOf(req, res));
    res.json({
      appointments: out.data.map((a) => publicAppointmentOut(a, a.contact)),
      nextCursor: nextCursor(CURSOR_LISTS.appointments, keyset, out.next),
    });
  });
  pub.post('/appointments', requireScope('appointments:write'), async (req, res) => {
    const a = body(req, PublicNewAppointment);
    const created = await crm().CreateAppointment(
      {
        contactId: a.contactId,
        scheduledAt: `${a.appointmentDate}T${a.appointmentTime ?? '00:00'}:00.000Z`,
        type: a.type ?? 'meeting',
        notes: a.notes ?? '',
      },
      ctxOf(req, res),
    );
    res.status(201).json(publicAppointmentOut(created, created.contact));
  });
}
