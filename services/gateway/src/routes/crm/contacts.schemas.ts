import { type Request } from 'express';
import { z } from 'zod';
import { badRequest } from '../../http/errors';
import { dateRange, query, s } from '../../http/validate';
import { clearableId, customFieldValues, email, tags, text, uuid } from './common.schemas';

const CONTACT_STATUSES = ['new', 'lead', 'customer', 'lost'] as const;

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
