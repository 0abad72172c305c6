import { type Request } from 'express';
import { z } from 'zod';
import { crmRules as rules } from '@crm/validation';
import { badRequest } from '../../http/errors';
import { dateRange, parseQuery, s } from '../../http/validate';
import { proto } from '../../docs/proto-schema';
import { PublicAppointment } from './appointments.schemas';
import { byRule, clearableId, customFieldValues, email, tags, text, uuid } from './common.schemas';
import { ContactNote } from './notes.schemas';

const MAX = rules.CONTACT_TEXT_MAX;
/** "" or absent takes the default source (manual; api on the public API). */
const source = byRule(z.string().trim().max(MAX.source, rules.maxChars(MAX.source)), (v) => v && rules.contactSource(v, '')).optional();

/** customFields as crm.v1 takes them (JSON text); absent when not sent. */
export const customFieldsJson = (v: Record<string, unknown> | undefined) => (v === undefined ? undefined : JSON.stringify(v));

const ContactFields = {
  name: text(MAX.name),
  email,
  phone: text(MAX.phone),
  source,
  status: s.enumOf(rules.CONTACT_STATUSES).optional(),
  statusId: clearableId('a contact status'),
  assignedUserId: clearableId('a user'),
  notes: text(MAX.notes),
  dealValue: byRule(z.number({ error: 'must be a number' }), rules.dealValue).optional(),
  customFields: customFieldValues,
};
export const NewContact = z.object({ ...ContactFields, tags: tags.optional() });
export const ContactPatch = z.object({ ...ContactFields, tags: tags.optional() });

export const BulkIds = z
  .array(z.string({ error: 'must be an array of ids' }), { error: 'must be an array of ids' })
  .min(1, 'must list at least one id')
  .max(rules.BULK_MAX_IDS, `must list at most ${rules.BULK_MAX_IDS} ids`);
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
      .object({
        ids: BulkIds,
        action: z.literal('status'),
        status: s.enumOf(rules.CONTACT_STATUSES).optional(),
        statusId: clearableId('a contact status'),
      })
      .refine((b) => b.status !== undefined || b.statusId !== undefined, { path: ['status'], message: 'send status and/or statusId' }),
    z.object({ ids: BulkIds, action: z.literal('assign'), assignedUserId: nullableUser }),
    z.object({ ids: BulkIds, action: z.literal('delete') }),
  ],
  { error: rules.oneOfMessage(rules.BULK_ACTIONS) },
);

const integer = () =>
  z
    .string()
    .regex(/^-?\d{1,9}$/, 'must be an integer')
    .transform(Number)
    .optional();

export const ContactQuery = z.object({
  search: z.string().max(MAX.search, rules.maxChars(MAX.search)).optional(),
  source: z.string().max(MAX.source, rules.maxChars(MAX.source)).optional(),
  status: s.optionalQueryEnum(rules.CONTACT_STATUSES),
  statusId: uuid('a contact status').optional(),
  assignedUserId: uuid('a user').optional(),
  threadType: s.optionalQueryEnum(rules.THREAD_TYPES),
  hasChatnet: s.optionalQueryEnum(rules.HAS_CHATNET_FILTERS),
  scoreMin: integer(),
  scoreMax: integer(),
  dateFrom: s.dateOrTimestamp().optional(),
  dateTo: s.dateOrTimestamp().optional(),
  sortBy: s.optionalQueryEnum(rules.CONTACT_SORTS),
  direction: s.optionalQueryEnum(rules.SORT_DIRECTIONS),
  tag: z.string().max(rules.MAX_TAG_LENGTH, rules.maxChars(rules.MAX_TAG_LENGTH)).optional(),
});

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
  if (Object.keys(out).length > rules.MAX_CUSTOM_FIELD_FILTERS)
    throw badRequest([{ field: 'cf', message: `at most ${rules.MAX_CUSTOM_FIELD_FILTERS} custom field filters` }]);
  return out;
}

/** The internal list's filters from the query string: what GET /contacts and GET /contacts/export take. */
export function contactListFilters(req: Request) {
  return contactFiltersOf(req.query as Record<string, unknown>);
}

/** The same from a record of parameters (a saved view's merged with the request's, or a view being saved). */
export function contactFiltersOf(params: Record<string, unknown>) {
  const q = parseQuery(params, ContactQuery);
  const { dateFrom, dateTo } = dateRange(q.dateFrom, q.dateTo, 'dateFrom', 'dateTo');
  if (q.scoreMin !== undefined && q.scoreMax !== undefined && q.scoreMin > q.scoreMax) {
    throw badRequest([{ field: 'scoreMax', message: 'must not be less than scoreMin' }]);
  }
  return { ...q, dateFrom, dateTo, customFieldFilters: customFieldFilters(params) };
}

export const PublicContactQuery = z.object({
  search: z.string().max(MAX.search, rules.maxChars(MAX.search)).optional(),
  status: s.optionalQueryEnum(rules.CONTACT_STATUSES),
});

export const PublicContactFields = z.object({
  fullName: text(MAX.name),
  phone: text(MAX.phone),
  email,
  source,
  status: s.enumOf(rules.CONTACT_STATUSES).optional(),
  notes: text(MAX.notes),
  tags: tags.optional(),
  customFields: customFieldValues,
});

// ------------------------------------------------------------------------------------------- responses

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });
/** {key: value} of the organization's custom fields (GET /contact-fields): typed values, {} when none is set. */
export const CustomFieldValues = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
  .meta({ description: 'custom field values by key: numbers and booleans as JSON values; text, select and date (YYYY-MM-DD) as strings' });

/** The internal contact (contactOut is typed by it): absent values as explicit nulls, never "". */
export const Contact = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  source: z.string(),
  status: z.string(),
  statusId: z.string().nullable(),
  assignedUserId: z.string().nullable(),
  avatar: z.string().nullable(),
  leadScore: z.number().int(),
  dealValue: z.number(),
  hasChatnet: z.boolean().meta({
    description:
      'true with a known chat-network identity (or a phone the network knows); false otherwise, manual contacts included. The filter hasChatnet=unknown lists contacts whose phone was never checked',
  }),
  chatnetUid: z.string().nullable(),
  threadTypes: z.array(z.string()),
  friends: z.array(z.object({ chatnetUid: z.string(), displayName: z.string(), accountId: z.string() })),
  notes: z.string().nullable(),
  tags: z.array(z.string()),
  customFields: CustomFieldValues,
  lastActivity: z.string(),
  createdAt: iso(),
  updatedAt: iso(),
});

/** A chat-network friend record of a contact (friendOut is typed by it). */
export const Friend = z.object({
  id: z.string(),
  chatnetUid: z.string(),
  displayName: z.string().nullable().meta({ description: 'the name the chat network gave; null when it gave none' }),
  accountId: z.string().meta({ description: 'the chat-network account the friendship is on' }),
  relationshipKind: z.string(),
  addedAt: iso(),
});

/** One contact with its notes, conversations, appointments and activities (detailOut is typed by it). */
export const ContactDetail = Contact.extend({
  notesText: z.string().nullable().meta({ description: 'the contact’s own notes text' }),
  notes: z.array(ContactNote).meta({ description: 'note records, newest first' }),
  conversations: z.array(
    z.object({ id: z.string(), chatnetAccountId: z.string(), messageCount: z.number().int(), lastMessageAt: z.string().nullable() }),
  ),
  appointments: z.array(z.object({ id: z.string(), title: z.string(), scheduledAt: iso(), status: z.string() })),
  activities: z.array(z.looseObject({})),
});

/** A customer list's member (memberOut is typed by it): the internal contact without friends. */
export const MemberContact = Contact.omit({ friends: true });

/** `{updated, failed: [{id, code}]}`: ids that were not changed, each with why. */
export const BulkResult = proto('crm/v1/crm.proto', 'crm.v1.BulkResult');

/** The public contact (publicContactOut is typed by it): the spec's field names, nothing internal. */
export const PublicContact = z.object({
  id: z.string(),
  fullName: z.string(),
  phone: z.string().nullable(),
  email: z.string().nullable(),
  source: z.string().meta({ description: 'chatnet, socialnet, manual, api' }),
  status: z.enum(rules.CONTACT_STATUSES),
  notes: z.string().nullable(),
  tags: z.array(z.string()),
  customFields: CustomFieldValues,
  createdAt: iso(),
  updatedAt: iso(),
});

/** The public contact detail: the 5 most recent appointments and the conversation count. */
export const PublicContactDetail = PublicContact.extend({
  appointments: z.array(PublicAppointment).meta({ description: 'the 5 most recent' }),
  conversationCount: z.number().int().nullable().meta({ description: 'null when messaging could not be asked' }),
});

/** Every public list answers the page's next cursor beside its items (http/cursor.ts). */
export const nextCursorField = z.string().nullable().describe('pass as `cursor` for the next page; null on the last page');
