import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { readKeyset, withTransaction } from '@crm/db';
import type { crm } from '@crm/proto-types';
import { recordAudit } from '@crm/events';
import { applyChanges, changesForUpdate, listFilter, valuesForNewContact } from '../../custom-fields';
import type { ContactsDeps } from '../deps';
import { activitiesOf } from '../db/activities.repo';
import { appointmentsOfContact } from '../db/appointments.repo';
import * as repo from '../db/contacts.repo';
import { friendRecordsOf, toFriend } from '../db/friends.repo';
import { notesOf, toNote } from '../db/notes.repo';
import { statusExists } from '../db/statuses.repo';
import { normalisePhone, phoneSearch } from './phone';
import { escapeLike, isoTimestamp, isUuid, networkUrl, oneOf, optionalEmail, optionalText, requireText, requireUuid, rules } from '../../shared';
import { viewerOf } from './visibility';

const DETAIL_NOTES = 100;
const DETAIL_APPOINTMENTS = 50;
const DETAIL_ACTIVITIES = 50;

/**
 * Loads the org's contact or answers 404; another org's id, a malformed id and (with `viewer`) a contact hidden
 * from that agent by inbox visibility all look the same.
 */
async function load(deps: ContactsDeps, orgId: string, id: string, viewer?: string) {
  const row = isUuid(id) ? await repo.findContactAtOnce(deps.pool, orgId, id, viewer) : undefined;
  if (!row) throw notFound('Contact');
  return row;
}

/** The duplicate rule: one contact per normalised phone number in an organization (409, naming the owner). */
async function duplicatePhone(deps: ContactsDeps, orgId: string, phone: string): Promise<AppError> {
  const existing = await repo.findIdByPhone(deps.pool, orgId, phone);
  return new AppError('already_exists', 'A contact with this phone number already exists', {
    code: 'duplicate_phone',
    details: [{ field: 'phone', message: `already belongs to contact ${existing ?? '(unknown)'}` }],
  });
}

function pgCode(err: unknown): { code?: string; constraint?: string } {
  return (err ?? {}) as { code?: string; constraint?: string };
}

export async function assertStatusId(deps: ContactsDeps, orgId: string, statusId: string | null | undefined): Promise<void> {
  if (!statusId) return;
  if (!isUuid(statusId) || !(await statusExists(deps.pool, orgId, statusId)))
    throw invalid('statusId', 'is not a contact status of this organization');
}

export async function assertAssignee(deps: ContactsDeps, ctx: OrgContext, userId: string | null | undefined): Promise<void> {
  if (!userId) return;
  if (!isUuid(userId)) throw invalid('assignedUserId', 'is not a user of this organization');
  await deps.users.assertAssignable(ctx, userId, 'assignedUserId');
}

// ---------------------------------------------------------------------------------------------- queries

/** The list's filters as crm.v1 carries them: ListContactsRequest, or ExportContactsRequest's filters (maybe absent). */
type ListFilters = Partial<crm.ListContactsRequest__Output>;

/**
 * The list's filter from a request (400 naming the bad parameter), shared by the list and the CSV export;
 * undefined when the filters cannot match anything.
 */
export async function contactFilter(deps: ContactsDeps, ctx: OrgContext, req: ListFilters): Promise<repo.ContactFilter | undefined> {
  const { orgId } = ctx;
  const f: repo.ContactFilter = {
    page: Math.max(1, req.page || 1),
    limit: Math.min(100, Math.max(1, req.limit || 50)),
    sortBy: req.sortBy ? oneOf(req.sortBy, rules.CONTACT_SORTS, 'sortBy') : 'lastActivity',
    direction: req.direction ? oneOf(req.direction, rules.SORT_DIRECTIONS, 'direction') : 'desc',
    skipTotal: req.skipTotal,
  };
  const search = (req.search ?? '').trim();
  if (search) {
    if (search.length > rules.CONTACT_TEXT_MAX.search) throw invalid('search', rules.maxChars(rules.CONTACT_TEXT_MAX.search));
    f.searchPhone = phoneSearch(search, deps.config.PHONE_DEFAULT_COUNTRY);
    if (!f.searchPhone) f.searchText = escapeLike(search);
  }
  if (req.source) f.source = rules.contactSource(req.source, '');
  if (req.status) f.status = oneOf(req.status, rules.CONTACT_STATUSES, 'status');
  if (req.statusId) f.statusId = requireUuid(req.statusId, 'statusId');
  if (req.assignedUserId) f.assignedUserId = requireUuid(req.assignedUserId, 'assignedUserId');
  if (req.threadType) f.threadType = oneOf(req.threadType, rules.THREAD_TYPES, 'threadType');
  if (req.hasChatnet) f.hasChatnet = oneOf(req.hasChatnet, rules.HAS_CHATNET_FILTERS, 'hasChatnet');
  if (req.scoreMin !== undefined) f.scoreMin = req.scoreMin;
  if (req.scoreMax !== undefined) f.scoreMax = req.scoreMax;
  if (f.scoreMin !== undefined && f.scoreMax !== undefined && f.scoreMin > f.scoreMax) throw invalid('scoreMax', 'must not be less than scoreMin');
  if (req.dateFrom) f.dateFrom = isoTimestamp(req.dateFrom, 'dateFrom');
  if (req.dateTo) f.dateTo = isoTimestamp(req.dateTo, 'dateTo');
  if (f.dateFrom && f.dateTo && f.dateFrom > f.dateTo) throw invalid('dateTo', 'must not be before dateFrom');
  if (req.tag) f.tag = optionalText(req.tag, 'tag', rules.MAX_TAG_LENGTH);
  const cf = await listFilter(deps.pool, orgId, req.customFieldFilters);
  if (cf) f.customFields = cf;
  const viewer = viewerOf(ctx);
  if (viewer) f.viewer = viewer;
  // Thread types are only ever recorded with a chat-network identity, so these can match nothing.
  if (f.threadType && (f.hasChatnet === 'false' || f.hasChatnet === 'unknown')) return undefined;
  return f;
}

export async function list(deps: ContactsDeps, ctx: OrgContext, req: crm.ListContactsRequest__Output) {
  const { orgId } = ctx;
  const f = await contactFilter(deps, ctx, req);
  if (!f)
    return { data: [], pagination: { total: 0, page: Math.max(1, req.page || 1), limit: Math.min(100, Math.max(1, req.limit || 50)), pages: 0 } };
  if (req.keyset) {
    const page = await repo.listContactsAfter(deps.pool, orgId, f, readKeyset(req.keyset, invalid));
    return { data: page.rows.map((r) => repo.toContact(r)), next: page.next };
  }
  const { rows, pagination } = await repo.listContacts(deps.pool, orgId, f, deps.totals);
  return { data: rows.map((r) => repo.toContact(r, r.friends)), pagination };
}

/** The parts of a contact's detail a caller may ask for (GetContactRequest.parts); none named means all. */
const DETAIL_PARTS = ['notes', 'appointments', 'activities', 'conversations'] as const;
type DetailPart = (typeof DETAIL_PARTS)[number];

function detailParts(parts: string[] = []): (part: DetailPart) => boolean {
  const unknown = parts.find((p) => !(DETAIL_PARTS as readonly string[]).includes(p));
  if (unknown !== undefined) throw invalid('parts', `unknown part "${unknown.slice(0, 50)}"; known: ${DETAIL_PARTS.join(', ')}`);
  return (part) => parts.length === 0 || parts.includes(part);
}

export async function detail(deps: ContactsDeps, ctx: OrgContext, id: string, parts?: string[]) {
  const { orgId } = ctx;
  const wants = detailParts(parts);
  const row = await load(deps, orgId, id, viewerOf(ctx));
  const [friends, notes, appointments, activities, conversations] = await Promise.all([
    repo.friendsOfContact(deps.pool, orgId, row.id),
    wants('notes') ? notesOf(deps.pool, orgId, row.id, DETAIL_NOTES) : [],
    wants('appointments') ? appointmentsOfContact(deps.pool, orgId, row.id, DETAIL_APPOINTMENTS) : [],
    wants('activities') ? activitiesOf(deps.pool, orgId, row.id, DETAIL_ACTIVITIES) : [],
    wants('conversations') ? deps.conversations.forContact(ctx, row.id) : { conversations: [], available: false },
  ]);
  return {
    contact: repo.toContact(row, friends),
    conversations: conversations.conversations,
    conversationsAvailable: conversations.available,
    notes: notes.map(toNote),
    appointments,
    activities,
  };
}

export async function friendRecords(deps: ContactsDeps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const row = await load(deps, orgId, id, viewerOf(ctx));
  return { data: (await friendRecordsOf(deps.pool, orgId, row.id)).map(toFriend) };
}

export async function brief(deps: ContactsDeps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const r = await load(deps, orgId, id);
  return {
    id: r.id,
    name: r.name,
    phone: r.phone,
    email: r.email,
    avatar: r.avatar,
    status: r.status,
    tags: r.tags,
    assignedUserId: r.assigned_user_id,
    chatnetUid: r.chatnet_uid,
  };
}

// ---------------------------------------------------------------------------------------------- changes

export async function create(deps: ContactsDeps, ctx: OrgContext, req: crm.CreateContactRequest__Output) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const c: repo.NewContact = {
    id: randomUUID(),
    orgId,
    name: optionalText(req.name, 'name', rules.CONTACT_TEXT_MAX.name),
    email: optionalEmail(req.email),
    phone: normalisePhone(req.phone, deps.config.PHONE_DEFAULT_COUNTRY),
    source: rules.contactSource(req.source, 'manual'),
    status: req.status ? oneOf(req.status, rules.CONTACT_STATUSES, 'status') : 'new',
    statusId: req.statusId || null,
    assignedUserId: req.assignedUserId || null,
    notes: optionalText(req.notes, 'notes', rules.CONTACT_TEXT_MAX.notes),
    tags: rules.normaliseTags(req.tags),
    dealValue: rules.dealValue(req.dealValue),
  };
  if (!c.name && !c.phone && !c.email) throw invalid('name', 'is required when there is no phone or email');
  c.customFields = await valuesForNewContact(deps.pool, orgId, req.customFieldsJson);
  await assertStatusId(deps, orgId, c.statusId);
  await assertAssignee(deps, ctx, c.assignedUserId);
  try {
    return repo.toContact(await deps.contactWriter.inTrace(ctx.traceparent).createAlone(deps.pool, c, `Created (source ${c.source})`), []);
  } catch (err) {
    if (pgCode(err).constraint === 'contacts_phone_uq') throw await duplicatePhone(deps, orgId, c.phone);
    if (pgCode(err).code === '23503') throw invalid('statusId', 'is not a contact status of this organization');
    throw err;
  }
}

/** What an update may change: UpdateContactRequest's fields (automation's PatchContact sends a few of them). */
type ContactChanges = Partial<Omit<crm.UpdateContactRequest__Output, 'id'>>;

/** The fields a request asked to change, validated; `statusId`/`assignedUserId` "" clear them. */
async function validatePatch(deps: ContactsDeps, ctx: OrgContext, orgId: string, req: ContactChanges): Promise<repo.ContactPatch> {
  const p: repo.ContactPatch = {};
  if (req.name !== undefined) p.name = optionalText(req.name, 'name', rules.CONTACT_TEXT_MAX.name);
  if (req.email !== undefined) p.email = optionalEmail(req.email);
  if (req.phone !== undefined) p.phone = normalisePhone(req.phone, deps.config.PHONE_DEFAULT_COUNTRY);
  if (req.source !== undefined) p.source = rules.contactSource(req.source, 'manual');
  if (req.status !== undefined) p.status = oneOf(req.status, rules.CONTACT_STATUSES, 'status');
  if (req.statusId !== undefined) p.statusId = req.statusId || null;
  if (req.assignedUserId !== undefined) p.assignedUserId = req.assignedUserId || null;
  if (req.notes !== undefined) p.notes = optionalText(req.notes, 'notes', rules.CONTACT_TEXT_MAX.notes);
  if (req.tags) p.tags = rules.normaliseTags(req.tags.values);
  if (req.dealValue !== undefined && req.dealValue !== null) p.dealValue = rules.dealValue(req.dealValue);
  await assertStatusId(deps, orgId, p.statusId);
  await assertAssignee(deps, ctx, p.assignedUserId);
  return p;
}

/** Apply a patch computed from the locked current row; one contact.updated event (in the call's trace) lists what changed. */
async function applyPatch(deps: ContactsDeps, ctx: OrgContext, id: string, patchOf: (row: repo.ContactRow) => repo.ContactPatch, viewer?: string) {
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Contact');
  let phone: string | undefined;
  try {
    return await withTransaction(deps.pool, async (tx) => {
      // Visibility is checked again under the lock: a reassignment since the first look wins.
      const row = await repo.findContact(tx, orgId, id, true, viewer);
      if (!row) throw notFound('Contact');
      const patch = patchOf(row);
      // The phone this change would take, for the 409 naming its owner.
      if (patch.phone !== undefined && patch.phone !== row.phone) phone = patch.phone;
      const { row: updated } = await deps.contactWriter.inTrace(ctx.traceparent).update(tx, orgId, row, patch);
      return repo.toContact(updated);
    });
  } catch (err) {
    if (pgCode(err).constraint === 'contacts_phone_uq' && phone) throw await duplicatePhone(deps, orgId, phone);
    if (pgCode(err).code === '23503') throw invalid('statusId', 'is not a contact status of this organization');
    throw err;
  }
}

async function withFriends(deps: ContactsDeps, orgId: string, contact: ReturnType<typeof repo.toContact>) {
  const friends = await repo.friendsOf(deps.pool, orgId, [contact.id]);
  return { ...contact, friends: friends.get(contact.id) ?? [] };
}

export async function update(deps: ContactsDeps, ctx: OrgContext, req: crm.UpdateContactRequest__Output) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const viewer = viewerOf(ctx);
  await load(deps, orgId, req.id, viewer);
  const patch = await validatePatch(deps, ctx, orgId, req);
  // Custom fields merge into the contact's own (keys sent change, null removes), so they are computed from the locked row.
  const cf = await changesForUpdate(deps.pool, orgId, req.customFieldsJson);
  const patchOf = (row: repo.ContactRow) => (cf ? { ...patch, customFields: applyChanges(row.custom_fields, cf) } : patch);
  return withFriends(deps, orgId, await applyPatch(deps, ctx, req.id, patchOf, viewer));
}

/** automation actions: assign, add tags, set status. */
export async function patch(deps: ContactsDeps, ctx: OrgContext, req: crm.PatchContactRequest__Output) {
  const { orgId } = ctx;
  await load(deps, orgId, req.id);
  const base = await validatePatch(deps, ctx, orgId, { assignedUserId: req.assignedUserId, status: req.status });
  const addTags = rules.normaliseTags(req.addTags, 'addTags');
  const contact = await applyPatch(deps, ctx, req.id, (row) => {
    const p = { ...base };
    if (addTags.length) p.tags = rules.normaliseTags([...row.tags, ...addTags], 'addTags');
    return p;
  });
  return withFriends(deps, orgId, contact);
}

export async function remove(deps: ContactsDeps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'contacts:delete');
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Contact');
  await withTransaction(deps.pool, async (tx) => {
    const deleted = await deps.contactWriter.inTrace(ctx.traceparent).delete(tx, orgId, id);
    if (!deleted) throw notFound('Contact');
    // Who was deleted, so the entry still means something once the contact is gone.
    await recordAudit(tx, ctx, {
      action: 'contact.deleted',
      resourceType: 'contact',
      resourceId: id,
      details: { name: deleted.name, phone: deleted.phone },
    });
  });
  return { ok: true, message: 'Contact deleted' };
}

// ---------------------------------------------------------------------------------------------- chat network

/** The most contacts one UpsertChatnetContacts call may ask for (an inbound batch holds far fewer). */
const MAX_UPSERTS = 500;

interface ChatnetTarget {
  uid: string;
  displayName: string;
  avatar: string;
  threadType: string;
  chatnetAccountId: string;
}

/** A request's target, validated; `at` prefixes the fields a 400 names (`contacts.3.` in a batch). */
function chatnetTarget(deps: ContactsDeps, ctx: OrgContext, req: crm.UpsertChatnetContactRequest__Output, at = ''): ChatnetTarget {
  return {
    uid: requireText(req.chatnetUid, `${at}chatnetUid`, 200),
    displayName: optionalText(req.displayName, `${at}displayName`),
    avatar: networkUrl(deps.log, ctx, req.avatar, `${at}avatar`),
    threadType: req.threadType ? oneOf(req.threadType, rules.THREAD_TYPES, `${at}threadType`) : 'user',
    chatnetAccountId: req.chatnetAccountId,
  };
}

type UpsertedContact = crm.UpsertChatnetContactResult;

/** What a known contact takes from a network identity seen again: a thread type, a name where it has none, an avatar. */
function identityPatch(row: repo.ContactRow, t: ChatnetTarget): repo.ContactPatch {
  const wanted: repo.ContactPatch = {};
  if (!row.thread_types.includes(t.threadType)) wanted.threadTypes = [...row.thread_types, t.threadType];
  if (!row.name && t.displayName) wanted.name = t.displayName;
  if (t.avatar && t.avatar !== row.avatar) wanted.avatar = t.avatar;
  return wanted;
}

/**
 * Find or create each target's contact, in one transaction: the missing ones inserted with one statement (uid order,
 * so two batches racing for the same identities wait for each other instead of deadlocking), the others locked with
 * one, then each known contact given what its identity brings (usually nothing: no statement). Three passes at most: a
 * contact deleted between the insert's conflict and the lock leaves nothing to return, and the next pass inserts it.
 * Answers keep the order asked; a uid asked twice is created (created=true) by its first occurrence only.
 */
async function upsertAll(deps: ContactsDeps, ctx: OrgContext, targets: ChatnetTarget[]): Promise<UpsertedContact[]> {
  const { orgId } = ctx;
  const contacts = deps.contactWriter.inTrace(ctx.traceparent);
  const firstOf = new Map<string, ChatnetTarget>();
  for (const t of targets) if (!firstOf.has(t.uid)) firstOf.set(t.uid, t);
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await withTransaction(deps.pool, async (tx) => {
      const inserted = await contacts.createChatnetManyIfMissing(
        tx,
        orgId,
        [...firstOf.values()].map((t) => ({ id: randomUUID(), name: t.displayName, avatar: t.avatar, uid: t.uid, threadType: t.threadType })),
        (row) => {
          const account = firstOf.get(row.chatnet_uid!)?.chatnetAccountId;
          return `Created (source chatnet${account ? ` via account ${account}` : ''})`;
        },
      );
      const rows = new Map(inserted.map((r) => [r.chatnet_uid!, r]));
      const created = new Set(rows.keys());
      const known = [...firstOf.keys()].filter((uid) => !rows.has(uid));
      const locked = await repo.lockByChatnetUids(tx, orgId, known);
      if (locked.length < known.length) return undefined;
      for (const r of locked) rows.set(r.chatnet_uid!, r);
      const out: UpsertedContact[] = [];
      for (const t of targets) {
        let row = rows.get(t.uid)!;
        const isNew = created.delete(t.uid);
        if (!isNew) {
          // Thread types are bookkeeping for the filter, not a change anyone subscribes to (no activity either).
          ({ row } = await contacts.update(tx, orgId, row, identityPatch(row, t), { activity: false, quiet: ['threadTypes'] }));
          rows.set(t.uid, row);
        }
        out.push({ id: row.id, name: row.name, avatar: row.avatar, created: isNew, phone: row.phone });
      }
      return out;
    });
    if (result) return result;
  }
  throw new AppError('unavailable', 'Contact changed concurrently; try again');
}

export async function upsertChatnet(deps: ContactsDeps, ctx: OrgContext, req: crm.UpsertChatnetContactRequest__Output): Promise<UpsertedContact> {
  const [one] = await upsertAll(deps, ctx, [chatnetTarget(deps, ctx, req)]);
  return one;
}

export async function upsertChatnetMany(
  deps: ContactsDeps,
  ctx: OrgContext,
  req: crm.UpsertChatnetContactsRequest__Output,
): Promise<crm.UpsertChatnetContactsResult> {
  if (req.contacts.length > MAX_UPSERTS) throw invalid('contacts', `at most ${MAX_UPSERTS} at once`);
  if (req.contacts.length === 0) return { contacts: [] };
  const targets = req.contacts.map((c, i) => chatnetTarget(deps, ctx, c, `contacts.${i}.`));
  return { contacts: await upsertAll(deps, ctx, targets) };
}
