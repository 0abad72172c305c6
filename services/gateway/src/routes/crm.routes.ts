import { type Request, Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';
import { uncheckedViews } from '../clients';
import { badRequest, HttpError } from '../http/errors';
import { ctxOf } from '../http/principal';
import { CURSOR_LISTS, nextCursor, publicPage } from '../http/cursor';
import { orNull } from '../http/shape';
import { body, dateRange, pageParams, query, s } from '../http/validate';

// ------------------------------------------------------------------------------------------- shapes from crm

interface Contact {
  id: string;
  name: string;
  email: string;
  phone: string;
  source: string;
  status: string;
  statusId?: string;
  assignedUserId?: string;
  avatar: string;
  leadScore: number;
  dealValue: number;
  hasChatnet?: boolean;
  chatnetUid?: string;
  threadTypes: string[];
  friends: { chatnetUid: string; displayName: string; accountId: string }[];
  notes: string;
  tags: string[];
  lastActivity: string;
  createdAt: string;
  updatedAt: string;
  /** JSON object text {key: value} (crm.v1.Contact.customFieldsJson). */
  customFieldsJson?: string;
}

/** A contact's custom fields as an object ({} when none is set). */
export function customFieldsOf(c: { customFieldsJson?: string }): Record<string, string | number | boolean> {
  return c.customFieldsJson ? (JSON.parse(c.customFieldsJson) as Record<string, string | number | boolean>) : {};
}

interface AppointmentBrief {
  id: string;
  title: string;
  scheduledAt: string;
  status: string;
  type: string;
  notes: string;
  createdAt: string;
  updatedAt: string;
}

interface ContactDetail {
  contact: Contact;
  conversations: { id: string; chatnetAccountId: string; messageCount: number; lastMessageAt?: string }[];
  conversationsAvailable: boolean;
  notes: unknown[];
  appointments: AppointmentBrief[];
  activities: unknown[];
}

interface Appointment {
  id: string;
  contactId: string;
  contactName: string;
  title: string;
  description: string;
  scheduledAt: string;
  duration: number;
  type: string;
  location: string;
  assignedUserId?: string;
  status: string;
  notes: string;
  createdAt: string;
  updatedAt: string;
  contact: { id: string; name: string; phone: string; email: string };
}

/**
 * The internal Contact: absent optional values are explicit nulls, never "". hasChatnet is always a boolean
 * (true only with a known chat-network identity; `hasChatnet=unknown` lists those whose phone was never checked).
 */
export function contactOut(c: Contact) {
  return {
    id: c.id,
    name: c.name,
    email: orNull(c.email),
    phone: orNull(c.phone),
    source: c.source,
    status: c.status,
    statusId: c.statusId ?? null,
    assignedUserId: c.assignedUserId ?? null,
    avatar: orNull(c.avatar),
    leadScore: c.leadScore,
    dealValue: c.dealValue ?? 0,
    hasChatnet: c.hasChatnet === true,
    chatnetUid: c.chatnetUid ?? null,
    threadTypes: c.threadTypes,
    friends: c.friends,
    notes: orNull(c.notes),
    tags: c.tags,
    customFields: customFieldsOf(c),
    lastActivity: c.lastActivity,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

/** Detail: `notes` becomes the array of Note records (newest first); the contact's notes text moves to `notesText`. */
export function detailOut(d: ContactDetail) {
  return {
    ...contactOut(d.contact),
    notesText: orNull(d.contact.notes),
    notes: d.notes,
    conversations: d.conversations.map((c) => ({ ...c, lastMessageAt: c.lastMessageAt ?? null })),
    appointments: d.appointments.map(({ id, title, scheduledAt, status }) => ({ id, title, scheduledAt, status })),
    activities: d.activities,
  };
}

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

/** Public Contact: the spec's field names (fullName), nothing internal. */
export function publicContactOut(c: Contact) {
  return {
    id: c.id,
    fullName: c.name,
    phone: orNull(c.phone),
    email: orNull(c.email),
    source: c.source,
    status: c.status,
    notes: orNull(c.notes),
    tags: c.tags,
    customFields: customFieldsOf(c),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

/** Public appointments are day + time (UTC) as they were created. */
export function publicAppointmentOut(a: Appointment | AppointmentBrief, contact?: Appointment['contact']) {
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

interface ContactStatus {
  id: string;
  color: string;
  [field: string]: unknown;
}

/** A custom contact status: no color chosen is null. */
export const statusOut = (st: ContactStatus) => ({ ...st, color: orNull(st.color) });

/** Where the next keyset page starts (common.v1.KeysetPosition); absent on the last page. */
interface KeysetPosition {
  value: string;
  id: string;
}

interface CustomerList {
  id: string;
  name: string;
  description: string;
  status: string;
  contactCount: number;
  criteriaJson: string;
  createdAt: string;
  updatedAt: string;
}

export function customerListOut(l: CustomerList) {
  return {
    id: l.id,
    name: l.name,
    description: orNull(l.description),
    status: l.status,
    contactCount: l.contactCount,
    criteria: JSON.parse(l.criteriaJson || '{"filters":[]}') as unknown,
    createdAt: l.createdAt,
    updatedAt: l.updatedAt,
  };
}

// ------------------------------------------------------------------------------------------- request schemas

const CONTACT_STATUSES = ['new', 'lead', 'customer', 'lost'] as const;
const APPOINTMENT_STATUSES = ['scheduled', 'completed', 'cancelled'] as const;

const uuid = (what: string) => z.string().uuid(`must be ${what} id`);
/** null or "" clears an optional reference. */
const clearableId = (what: string) =>
  z
    .union([uuid(what), z.literal(''), z.null()])
    .transform((v) => v ?? '')
    .optional();
/** null means empty for text fields. */
const text = (max: number) =>
  z
    .union([s.text(max), z.null()])
    .transform((v) => v ?? '')
    .optional();
const tags = z.array(z.string({ error: 'must be an array of strings' }).trim().max(50, 'each tag must be at most 50 characters'), { error: 'must be an array of strings' }).max(50, 'must have at most 50 tags');
const email = z
  .union([z.literal(''), z.string().trim().email('must be a valid email address').max(254), z.null()])
  .transform((v) => v ?? '')
  .optional();

/**
 * {key: value} of the org's custom fields; keys and typed values are checked by crm against the definitions
 * (400 naming customFields.<key>); null removes a key on update.
 */
const customFieldValues = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()], { error: 'each value must be a string, number, boolean or null' }), {
    error: 'must be an object of {key: value}',
  })
  .optional();
/** customFields as crm.v1 takes them (JSON text); absent when not sent. */
export const customFieldsJson = (v: Record<string, unknown> | undefined) => (v === undefined ? undefined : JSON.stringify(v));

const ContactFields = {
  name: text(200),
  email,
  phone: text(40),
  source: z.string().trim().max(40, 'must be at most 40 characters').optional(),
  status: s.enumOf(CONTACT_STATUSES).optional(),
  statusId: clearableId('a contact status'),
  assignedUserId: clearableId('a user'),
  notes: text(10_000),
  // Range and decimals are checked by crm (400 naming dealValue).
  dealValue: z.number({ error: 'must be a number' }).optional(),
  customFields: customFieldValues,
};
export const NewContact = z.object({ ...ContactFields, tags: tags.optional() });
export const ContactPatch = z.object({ ...ContactFields, tags: tags.optional() });

/** Most ids in one bulk request (crm checks it too). */
const BULK_MAX_IDS = 1000;
export const BulkIds = z
  .array(z.string({ error: 'must be an array of ids' }), { error: 'must be an array of ids' })
  .min(1, 'must list at least one id')
  .max(BULK_MAX_IDS, `must list at most ${BULK_MAX_IDS} ids`);
const nullableUser = z.union([z.null(), uuid('a user')], {
  error: (issue) => (issue.input === undefined ? 'is required (a user id, or null)' : 'must be a user id or null'),
});

// Each action's parameters; ids that are malformed or not the org's fail one by one in the answer, not here.
export const BulkContacts = z.discriminatedUnion(
  'action',
  [
    z.object({ ids: BulkIds, action: z.literal('tag'), tags: tags.min(1, 'must list at least one tag') }),
    z.object({ ids: BulkIds, action: z.literal('untag'), tags: tags.min(1, 'must list at least one tag') }),
    z
      .object({ ids: BulkIds, action: z.literal('status'), status: s.enumOf(CONTACT_STATUSES).optional(), statusId: clearableId('a contact status') })
      .refine((b) => b.status !== undefined || b.statusId !== undefined, { path: ['status'], message: 'send status and/or statusId' }),
    z.object({ ids: BulkIds, action: z.literal('assign'), assignedUserId: nullableUser }),
    z.object({ ids: BulkIds, action: z.literal('delete') }),
  ],
  { error: 'must be one of tag, untag, status, assign, delete' },
);

const integer = () =>
  z
    .string()
    .regex(/^-?\d{1,9}$/, 'must be an integer')
    .transform(Number)
    .optional();

export const ContactQuery = z.object({
  search: z.string().max(200, 'must be at most 200 characters').optional(),
  source: z.string().max(40).optional(),
  status: s.optionalQueryEnum(CONTACT_STATUSES),
  statusId: uuid('a contact status').optional(),
  assignedUserId: uuid('a user').optional(),
  threadType: s.optionalQueryEnum(['user', 'group'] as const),
  hasChatnet: s.optionalQueryEnum(['true', 'false', 'unknown'] as const),
  scoreMin: integer(),
  scoreMax: integer(),
  dateFrom: s.dateOrTimestamp().optional(),
  dateTo: s.dateOrTimestamp().optional(),
  sortBy: s.optionalQueryEnum(['lastActivity', 'createdAt', 'leadScore'] as const),
  direction: s.optionalQueryEnum(['asc', 'desc'] as const),
  tag: z.string().max(50).optional(),
});

/** At most this many cf.<key> filters on one list. */
const MAX_CF_FILTERS = 10;

/**
 * cf.<key>=value query parameters (custom field filters, exact and typed; crm checks keys and values, 400 naming
 * cf.<key>). Keys are not part of ContactQuery because they depend on the organization.
 */
export function customFieldFilters(q: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(q)) {
    if (!name.startsWith('cf.')) continue;
    if (typeof value !== 'string') throw badRequest([{ field: name, message: 'must be given once, as text' }]);
    out[name.slice(3)] = value;
  }
  if (Object.keys(out).length > MAX_CF_FILTERS) throw badRequest([{ field: 'cf', message: `at most ${MAX_CF_FILTERS} custom field filters` }]);
  return out;
}

/** The internal list's filters from the query string: what GET /contacts and GET /contacts/export take. */
export function contactListFilters(req: Request) {
  const q = query(req, ContactQuery);
  const { dateFrom, dateTo } = dateRange(q.dateFrom, q.dateTo, 'dateFrom', 'dateTo');
  if (q.scoreMin !== undefined && q.scoreMax !== undefined && q.scoreMin > q.scoreMax) {
    throw badRequest([{ field: 'scoreMax', message: 'must not be less than scoreMin' }]);
  }
  return { ...q, dateFrom, dateTo, customFieldFilters: customFieldFilters(req.query as Record<string, unknown>) };
}

export const PublicContactQuery = z.object({
  search: z.string().max(200, 'must be at most 200 characters').optional(),
  status: s.optionalQueryEnum(CONTACT_STATUSES),
});

export const PublicContactFields = z.object({
  fullName: text(200),
  phone: text(40),
  email,
  source: z.string().trim().max(40, 'must be at most 40 characters').optional(),
  status: s.enumOf(CONTACT_STATUSES).optional(),
  notes: text(10_000),
  tags: tags.optional(),
  customFields: customFieldValues,
});

export const Note = z.object({ content: s.requiredText(10_000) });

const StatusFields = {
  color: z.string().trim().regex(/^#[0-9a-fA-F]{6}$/, 'must be a hex color such as #22c55e').or(z.literal('')).optional(),
  position: z.number({ error: 'must be an integer' }).int('must be an integer').min(0).max(10_000).optional(),
};
export const NewStatus = z.object({ name: s.requiredText(100), ...StatusFields });
export const StatusPatch = z.object({ name: s.requiredText(100).optional(), ...StatusFields });

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

// Criteria are checked by crm (field by field, naming criteria.filters[i].field|operator|value); here only
// that the body has the right outer shape.
export const NewCustomerList = z.object({ name: s.requiredText(200), description: text(2000), criteria: z.unknown().optional() });
export const CustomerListPatch = z.object({ name: s.requiredText(200).optional(), description: text(2000), criteria: z.unknown().optional() });
const criteriaJson = (c: unknown) => (c === undefined ? undefined : JSON.stringify(c));

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

/** At most this many appointments on a page of the public list, and the default (spec: up to 100). */
const PUBLIC_APPOINTMENTS_MAX = 100;
/** The public contact detail shows this many most recent appointments. */
const PUBLIC_DETAIL_APPOINTMENTS = 5;

// ------------------------------------------------------------------------------------------- routes

/** Contacts, custom statuses and appointments (internal, bearer) and their public API (API key). */
export function crmRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const pub = Router();
  // Transitional (see uncheckedViews): this file is converted to the typed client once its split has landed.
  const crm = () => uncheckedViews<'crm.v1.CrmService'>(clients.crm);

  // Contacts
  internal.get('/contacts', async (req, res) => {
    const out = await crm().ListContacts<{ data: Contact[]; pagination: unknown }>({ ...pageParams(req, 50), ...contactListFilters(req) }, ctxOf(req, res));
    res.json({ data: out.data.map(contactOut), pagination: out.pagination });
  });
  internal.post('/contacts', async (req, res) => {
    const { customFields, ...fields } = body(req, NewContact);
    const c = await crm().CreateContact<Contact>({ ...fields, customFieldsJson: customFieldsJson(customFields) }, ctxOf(req, res));
    res.status(201).json(contactOut(c));
  });
  internal.post('/contacts/bulk', async (req, res) => {
    const b = body(req, BulkContacts);
    const params =
      b.action === 'tag' || b.action === 'untag'
        ? { tags: b.tags }
        : b.action === 'status'
          ? { status: b.status, statusId: b.statusId }
          : b.action === 'assign'
            ? { assignedUserId: b.assignedUserId ?? '' }
            : {};
    const out = await crm().BulkUpdateContacts<{ updated: number; failed?: unknown[] }>({ ids: b.ids, action: b.action, ...params }, ctxOf(req, res));
    res.json({ updated: out.updated, failed: out.failed ?? [] });
  });
  internal.get('/contacts/:id', async (req, res) => {
    res.json(detailOut(await crm().GetContact<ContactDetail>({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/contacts/:id', async (req, res) => {
    const { tags: t, customFields, ...patch } = body(req, ContactPatch);
    const c = await crm().UpdateContact<Contact>({ id: req.params.id, ...patch, tags: t ? { values: t } : undefined, customFieldsJson: customFieldsJson(customFields) }, ctxOf(req, res));
    res.json(contactOut(c));
  });
  internal.delete('/contacts/:id', async (req, res) => {
    await crm().DeleteContact({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  internal.get('/contacts/:id/friends', async (req, res) => {
    const out = await crm().ListFriends<{ data: unknown[] }>({ id: req.params.id }, ctxOf(req, res));
    res.json(out.data);
  });
  internal.post('/contacts/:id/notes', async (req, res) => {
    const { content } = body(req, Note);
    res.status(201).json(await crm().AddNote({ contactId: req.params.id, content }, ctxOf(req, res)));
  });
  // The note's author, or a team lead and above (crm decides; 403 otherwise).
  internal.put('/contacts/:id/notes/:noteId', async (req, res) => {
    const { content } = body(req, Note);
    res.json(await crm().UpdateNote({ contactId: req.params.id, noteId: req.params.noteId, content }, ctxOf(req, res)));
  });
  internal.delete('/contacts/:id/notes/:noteId', async (req, res) => {
    await crm().DeleteNote({ contactId: req.params.id, noteId: req.params.noteId }, ctxOf(req, res));
    res.status(204).end();
  });

  // Custom statuses (contact.statusId); the spec has no way to create them, so these are added.
  internal.get('/contact-statuses', async (req, res) => {
    res.json((await crm().ListContactStatuses<{ data: ContactStatus[] }>({}, ctxOf(req, res))).data.map(statusOut));
  });
  internal.post('/contact-statuses', async (req, res) => {
    res.status(201).json(statusOut(await crm().CreateContactStatus(body(req, NewStatus), ctxOf(req, res))));
  });
  internal.get('/contact-statuses/:id', async (req, res) => {
    const all = await crm().ListContactStatuses<{ data: ContactStatus[] }>({}, ctxOf(req, res));
    const found = all.data.find((x) => x.id === req.params.id);
    if (!found) throw new HttpError(404, 'not_found', 'Contact status not found');
    res.json(statusOut(found));
  });
  internal.put('/contact-statuses/:id', async (req, res) => {
    res.json(statusOut(await crm().UpdateContactStatus({ id: req.params.id, ...body(req, StatusPatch) }, ctxOf(req, res))));
  });
  internal.delete('/contact-statuses/:id', async (req, res) => {
    await crm().DeleteContactStatus({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  // Appointments
  internal.get('/appointments', async (req, res) => {
    const q = query(req, AppointmentQuery);
    const { dateFrom, dateTo } = dateRange(q.dateFrom, q.dateTo, 'dateFrom', 'dateTo');
    const out = await crm().ListAppointments<{ data: Appointment[]; pagination: unknown }>({ ...pageParams(req, 50), ...q, dateFrom, dateTo }, ctxOf(req, res));
    res.json({ data: out.data.map(appointmentOut), pagination: out.pagination });
  });
  internal.post('/appointments', async (req, res) => {
    const a = await crm().CreateAppointment<Appointment>(body(req, NewAppointment), ctxOf(req, res));
    res.status(201).json(appointmentOut(a));
  });
  internal.get('/appointments/:id', async (req, res) => {
    res.json(appointmentOut(await crm().GetAppointment<Appointment>({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/appointments/:id', async (req, res) => {
    res.json(appointmentOut(await crm().UpdateAppointment<Appointment>({ id: req.params.id, ...body(req, AppointmentPatch) }, ctxOf(req, res))));
  });
  internal.delete('/appointments/:id', async (req, res) => {
    await crm().DeleteAppointment({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  // Customer lists (saved criteria over contacts, evaluated live; writes need campaigns:manage).
  internal.get('/customer-lists', async (req, res) => {
    const out = await crm().ListCustomerLists<{ data: CustomerList[] }>({}, ctxOf(req, res));
    res.json(out.data.map(({ id, name, description, contactCount, status, createdAt }) => ({ id, name, description: orNull(description), contactCount, status, createdAt })));
  });
  internal.post('/customer-lists', async (req, res) => {
    const b = body(req, NewCustomerList);
    const l = await crm().CreateCustomerList<CustomerList>({ name: b.name, description: b.description, criteriaJson: criteriaJson(b.criteria) }, ctxOf(req, res));
    res.status(201).json({ id: l.id, name: l.name, status: l.status, createdAt: l.createdAt });
  });
  internal.get('/customer-lists/:id', async (req, res) => {
    res.json(customerListOut(await crm().GetCustomerList<CustomerList>({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/customer-lists/:id', async (req, res) => {
    const b = body(req, CustomerListPatch);
    const l = await crm().UpdateCustomerList<CustomerList>({ id: req.params.id, name: b.name, description: b.description, criteriaJson: criteriaJson(b.criteria) }, ctxOf(req, res));
    res.json(customerListOut(l));
  });
  internal.delete('/customer-lists/:id', async (req, res) => {
    await crm().DeleteCustomerList({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  internal.post('/customer-lists/:id/activate', async (req, res) => {
    res.json(customerListOut(await crm().ActivateCustomerList<CustomerList>({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.post('/customer-lists/:id/pause', async (req, res) => {
    res.json(customerListOut(await crm().PauseCustomerList<CustomerList>({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.get('/customer-lists/:id/members', async (req, res) => {
    const out = await crm().ListCustomerListMembers<{ data: Contact[]; pagination: unknown }>({ id: req.params.id, ...pageParams(req, 50) }, ctxOf(req, res));
    res.json({
      data: out.data.map((c) => {
        const { friends: _friends, ...rest } = contactOut(c);
        return rest;
      }),
      pagination: out.pagination,
    });
  });

  // Public API (X-API-Key checked by app.ts before these routes).
  pub.get('/contacts', async (req, res) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.contacts, 20, 100);
    const q = query(req, PublicContactQuery);
    const out = await crm().ListContacts<{ data: Contact[]; next?: KeysetPosition | null }>({ page: 1, limit, ...q, skipTotal: true, keyset }, ctxOf(req, res));
    res.json({ contacts: out.data.map(publicContactOut), nextCursor: nextCursor(CURSOR_LISTS.contacts, keyset, out.next) });
  });
  pub.get('/contacts/:id', async (req, res) => {
    const d = await crm().GetContact<ContactDetail>({ id: req.params.id }, ctxOf(req, res));
    res.json({
      ...publicContactOut(d.contact),
      appointments: d.appointments.slice(0, PUBLIC_DETAIL_APPOINTMENTS).map((a) => publicAppointmentOut(a)),
      // null when messaging could not be asked: unknown is not zero.
      conversationCount: d.conversationsAvailable ? d.conversations.length : null,
    });
  });
  pub.post('/contacts', async (req, res) => {
    const { fullName, tags: t, customFields, ...rest } = body(req, PublicContactFields);
    if (!fullName && !rest.phone) throw badRequest([{ field: 'fullName', message: 'fullName or phone is required' }]);
    const c = await crm().CreateContact<Contact>({ ...rest, name: fullName, tags: t ?? [], source: rest.source || 'api', customFieldsJson: customFieldsJson(customFields) }, ctxOf(req, res));
    res.status(201).json(publicContactOut(c));
  });
  pub.put('/contacts/:id', async (req, res) => {
    const { fullName, tags: t, customFields, ...rest } = body(req, PublicContactFields);
    const c = await crm().UpdateContact<Contact>({ id: req.params.id, ...rest, name: fullName, tags: t ? { values: t } : undefined, customFieldsJson: customFieldsJson(customFields) }, ctxOf(req, res));
    res.json(publicContactOut(c));
  });
  pub.get('/appointments', async (req, res) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.appointments, PUBLIC_APPOINTMENTS_MAX, PUBLIC_APPOINTMENTS_MAX);
    const q = query(req, PublicAppointmentQuery);
    const { dateFrom, dateTo } = dateRange(q.from, q.to, 'from', 'to');
    const out = await crm().ListAppointments<{ data: Appointment[]; next?: KeysetPosition | null }>({ page: 1, limit, dateFrom, dateTo, skipTotal: true, keyset }, ctxOf(req, res));
    res.json({ appointments: out.data.map((a) => publicAppointmentOut(a, a.contact)), nextCursor: nextCursor(CURSOR_LISTS.appointments, keyset, out.next) });
  });
  pub.post('/appointments', async (req, res) => {
    const a = body(req, PublicNewAppointment);
    const created = await crm().CreateAppointment<Appointment>(
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

  return { internal, public: pub };
}
