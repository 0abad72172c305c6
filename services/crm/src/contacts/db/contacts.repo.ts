import { createHash } from 'node:crypto';
import { afterSql, coalescedReads, iso, isPool, isUuid, type Keyset, keysetPage, keyTimeSql, offsetOf, pagination, Pool, Queryable } from '@crm/db';
import type { CustomFields } from '../../custom-fields';
import type { PhoneSearch } from '../domain/phone';
import { activityText, type TimelineLine } from './activities.repo';
import type { TotalCache } from './total-cache';
import { contactVisibleSql } from './visibility.repo';

export interface ContactRow {
  id: string;
  org_id: string;
  name: string;
  email: string;
  phone: string;
  source: string;
  status: string;
  status_id: string | null;
  assigned_user_id: string | null;
  avatar: string;
  lead_score: number;
  chatnet_uid: string | null;
  thread_types: string[];
  notes: string;
  tags: string[];
  last_activity: Date;
  created_at: Date;
  updated_at: Date;
  has_chatnet: boolean;
  /** numeric(14,2), parsed into a number by @crm/db (exact: at most 14 significant digits). */
  deal_value: number;
  /** The org's custom fields (custom-fields/values.ts): {key: value}. */
  custom_fields: CustomFields;
}

export interface FriendRef {
  chatnetUid: string;
  displayName: string;
  accountId: string;
}

export const COLUMNS = `id, org_id, name, email, phone, source, status, status_id, assigned_user_id, avatar, lead_score, chatnet_uid,
  thread_types, notes, tags, last_activity, created_at, updated_at, has_chatnet, deal_value, custom_fields`;

/**
 * The internal Contact shape. Absent values are null: proto3 `optional` fields then travel as unset, and
 * events (which carry this shape without `friends`) show them as null.
 */
export function toContact(r: ContactRow, friends?: FriendRef[]) {
  return {
    id: r.id,
    name: r.name,
    email: r.email,
    phone: r.phone,
    source: r.source,
    status: r.status,
    statusId: r.status_id,
    assignedUserId: r.assigned_user_id,
    avatar: r.avatar,
    leadScore: r.lead_score,
    hasChatnet: r.has_chatnet,
    chatnetUid: r.chatnet_uid,
    threadTypes: r.thread_types,
    ...(friends ? { friends } : {}),
    notes: r.notes,
    tags: r.tags,
    lastActivity: iso(r.last_activity),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    dealValue: Number(r.deal_value),
    customFields: r.custom_fields ?? {},
    // gRPC carries the object as JSON text (proto cannot type its values); events carry the object (toEventContact).
    customFieldsJson: JSON.stringify(r.custom_fields ?? {}),
  };
}

export type ContactView = ReturnType<typeof toContact>;

/** The Contact shape events (and so webhook payloads) carry: the internal one, custom fields as an object. */
export function toEventContact(r: ContactRow) {
  const { customFieldsJson: _wire, ...contact } = toContact(r);
  return contact;
}

export interface NewContact {
  id: string;
  orgId: string;
  name: string;
  email: string;
  phone: string;
  source: string;
  status: string;
  statusId: string | null;
  assignedUserId: string | null;
  notes: string;
  tags: string[];
  avatar?: string;
  chatnetUid?: string | null;
  threadTypes?: string[];
  dealValue?: number;
  customFields?: CustomFields;
}

/**
 * The values of a new contact's columns, in the order insertContact and insertContactAlone list them: id, org_id, name,
 * email, phone, source, status, status_id, assigned_user_id, notes, tags, avatar, chatnet_uid, thread_types,
 * deal_value, custom_fields.
 */
export function newContactValues(c: NewContact): unknown[] {
  return [
    c.id,
    c.orgId,
    c.name,
    c.email,
    c.phone,
    c.source,
    c.status,
    c.statusId,
    c.assignedUserId,
    c.notes,
    c.tags,
    c.avatar ?? '',
    c.chatnetUid ?? null,
    c.threadTypes ?? [],
    c.dealValue ?? 0,
    JSON.stringify(c.customFields ?? {}),
  ];
}

export async function insertContact(db: Queryable, c: NewContact): Promise<ContactRow> {
  const { rows } = await db.query<ContactRow>({
    name: 'crm_contact_insert',
    text: `INSERT INTO contacts (id, org_id, name, email, phone, source, status, status_id, assigned_user_id, notes, tags, avatar, chatnet_uid, thread_types, deal_value, custom_fields)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING ${COLUMNS}`,
    values: newContactValues(c),
  });
  return rows[0];
}

/**
 * The row insertContact (or insertContactAlone) will return for `c`, with `at` for the times PostgreSQL sets: each
 * column's default as the table has it, so the contact.created a one-statement create writes before the row exists
 * shows the row (contact-writer.int.test.ts compares the two).
 */
export function provisionalContactRow(c: NewContact, at: Date): ContactRow {
  return {
    id: c.id,
    org_id: c.orgId,
    name: c.name,
    email: c.email,
    phone: c.phone,
    source: c.source,
    status: c.status,
    status_id: c.statusId,
    assigned_user_id: c.assignedUserId,
    avatar: c.avatar ?? '',
    lead_score: 0,
    chatnet_uid: c.chatnetUid ?? null,
    thread_types: c.threadTypes ?? [],
    notes: c.notes,
    tags: c.tags,
    last_activity: at,
    created_at: at,
    updated_at: at,
    // Generated: chatnet_uid IS NOT NULL OR chatnet_phone_found (false until a phone check finds the number).
    has_chatnet: (c.chatnetUid ?? null) !== null,
    deal_value: c.dealValue ?? 0,
    custom_fields: c.customFields ?? {},
  };
}

/** Insert a chat-network contact unless the org already has one for that identity (no row returned then). */
export async function insertChatnetContactIfMissing(db: Queryable, c: NewContact): Promise<ContactRow | undefined> {
  const { rows } = await db.query<ContactRow>({
    name: 'crm_contact_insert_chatnet',
    text: `INSERT INTO contacts (id, org_id, name, source, status, avatar, chatnet_uid, thread_types, phone)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (org_id, chatnet_uid) WHERE chatnet_uid IS NOT NULL DO NOTHING RETURNING ${COLUMNS}`,
    // A phone (a conversation started from the CRM to a number) may collide with another contact's: the caller retries.
    values: [c.id, c.orgId, c.name, c.source, c.status, c.avatar ?? '', c.chatnetUid, c.threadTypes ?? [], c.phone ?? ''],
  });
  return rows[0];
}

/** A chat-network identity's new contact, as a batch inserts it (insertChatnetContactsIfMissing). */
export interface NewChatnetContact {
  id: string;
  name: string;
  avatar: string;
  uid: string;
  threadType: string;
}

/**
 * insertChatnetContactIfMissing for many identities of one org in one statement, in uid order (two batches racing for
 * the same identities wait for each other rather than deadlock); returns the rows inserted, not those that existed.
 * Each uid once: a repeated one is inserted as its first occurrence.
 */
export async function insertChatnetContactsIfMissing(db: Queryable, orgId: string, items: NewChatnetContact[]): Promise<ContactRow[]> {
  if (items.length === 0) return [];
  const { rows } = await db.query<ContactRow>({
    name: 'crm_contacts_insert_chatnet_many',
    text: `INSERT INTO contacts (id, org_id, name, source, status, avatar, chatnet_uid, thread_types)
           SELECT DISTINCT ON (c.uid) c.id, $1, c.name, 'chatnet', 'new', c.avatar, c.uid, ARRAY[c.thread_type]
             FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS c(id, name, avatar, uid, thread_type, i)
            ORDER BY c.uid, c.i
           ON CONFLICT (org_id, chatnet_uid) WHERE chatnet_uid IS NOT NULL DO NOTHING
           RETURNING ${COLUMNS}`,
    values: [
      orgId,
      items.map((c) => c.id),
      items.map((c) => c.name),
      items.map((c) => c.avatar),
      items.map((c) => c.uid),
      items.map((c) => c.threadType),
    ],
  });
  return rows;
}

/** The org's contacts for these network identities, locked, in uid order (findByChatnetUid for many). */
export async function lockByChatnetUids(db: Queryable, orgId: string, uids: string[]): Promise<ContactRow[]> {
  if (uids.length === 0) return [];
  const { rows } = await db.query<ContactRow>({
    name: 'crm_contacts_by_uids_lock',
    text: `SELECT ${COLUMNS} FROM contacts WHERE org_id = $1 AND chatnet_uid = ANY ($2::text[]) ORDER BY chatnet_uid FOR UPDATE`,
    values: [orgId, uids],
  });
  return rows;
}

/**
 * The org's contact, or undefined. With `viewer` (an agent under inbox visibility, domain/visibility.ts) a contact
 * they may not see is undefined too, so every lookup by id answers 404 for it exactly as for another org's.
 */
export async function findContact(db: Queryable, orgId: string, id: string, forUpdate = false, viewer?: string): Promise<ContactRow | undefined> {
  const visible = viewer ? ` AND ${contactVisibleSql('$3::uuid')}` : '';
  const { rows } = await db.query<ContactRow>({
    name: `crm_contact_by_id${viewer ? '_visible' : ''}${forUpdate ? '_lock' : ''}`,
    text: `SELECT ${COLUMNS} FROM contacts WHERE id = $1 AND org_id = $2${visible}${forUpdate ? ' FOR UPDATE' : ''}`,
    values: viewer ? [id, orgId, viewer] : [id, orgId],
  });
  return rows[0];
}

interface ContactKey {
  orgId: string;
  id: string;
  viewer?: string;
}
const contactKey = (k: ContactKey) => `${k.orgId.toLowerCase()}/${k.id.toLowerCase()}/${k.viewer?.toLowerCase() ?? ''}`;

const contactsAtOnce = coalescedReads<ContactKey, ContactRow>({
  keyOf: contactKey,
  one: (db, k) => findContact(db, k.orgId, k.id, false, k.viewer),
  many: async (db, keys) => {
    const { rows } = await db.query<ContactRow & { batch_n: string }>({
      name: 'crm_contact_by_id_batch',
      // Each key with its own org and its own viewer (none: no visibility rule). The rule names the table `contacts`.
      text: `SELECT k.n AS batch_n, ${COLUMNS}
             FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY AS k(want_id, want_org, want_viewer, n)
             JOIN contacts ON contacts.id = k.want_id AND contacts.org_id = k.want_org
             WHERE k.want_viewer IS NULL OR ${contactVisibleSql('k.want_viewer')}`,
      values: [keys.map((k) => k.id), keys.map((k) => k.orgId), keys.map((k) => k.viewer ?? null)],
    });
    return rows.map(({ batch_n, ...row }): [string, ContactRow] => [contactKey(keys[Number(batch_n) - 1]), row]);
  },
});

/**
 * findContact unlocked, for a read on its own: on the pool, the reads of one turn (a batch of GetContact calls,
 * grpc-kit's call-batch.ts) share one query, each contact on its own org and its own viewer; in a transaction, or with
 * an id that is not a uuid, the single read.
 */
export async function findContactAtOnce(db: Queryable, orgId: string, id: string, viewer?: string): Promise<ContactRow | undefined> {
  const coalesce = isPool(db) && isUuid(orgId) && isUuid(id) && (viewer === undefined || isUuid(viewer));
  return coalesce ? contactsAtOnce(db, { orgId, id, viewer }) : findContact(db, orgId, id, false, viewer);
}

/**
 * findContact locked (and visible to `viewer`), with whether a contact of the org has `chatnetUid` already: what
 * linking a found identity to a contact asks first, in one round trip.
 */
export async function lockForIdentity(
  db: Queryable,
  orgId: string,
  id: string,
  chatnetUid: string,
  viewer?: string,
): Promise<(ContactRow & { uid_taken: boolean }) | undefined> {
  const visible = viewer ? ` AND ${contactVisibleSql('$4::uuid')}` : '';
  const { rows } = await db.query<ContactRow & { uid_taken: boolean }>({
    name: `crm_contact_lock_for_identity${viewer ? '_visible' : ''}`,
    text: `SELECT ${COLUMNS}, EXISTS (SELECT 1 FROM contacts o WHERE o.org_id = $2 AND o.chatnet_uid = $3) AS uid_taken
           FROM contacts WHERE id = $1 AND org_id = $2${visible} FOR UPDATE`,
    values: viewer ? [id, orgId, chatnetUid, viewer] : [id, orgId, chatnetUid],
  });
  return rows[0];
}

export async function findByChatnetUid(db: Queryable, orgId: string, chatnetUid: string, forUpdate = false): Promise<ContactRow | undefined> {
  const { rows } = await db.query<ContactRow>({
    name: forUpdate ? 'crm_contact_by_uid_lock' : 'crm_contact_by_uid',
    text: `SELECT ${COLUMNS} FROM contacts WHERE org_id = $1 AND chatnet_uid = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    values: [orgId, chatnetUid],
  });
  return rows[0];
}

/** Set the contact's network identity unless it has one; the row as it is now, undefined when nothing changed. */
export async function setChatnetUidIfNone(db: Queryable, orgId: string, id: string, chatnetUid: string): Promise<ContactRow | undefined> {
  const { rows } = await db.query<ContactRow>({
    name: 'crm_contact_set_uid_if_none',
    text: `UPDATE contacts SET chatnet_uid = $3, updated_at = now() WHERE org_id = $1 AND id = $2 AND chatnet_uid IS NULL RETURNING ${COLUMNS}`,
    values: [orgId, id, chatnetUid],
  });
  return rows[0];
}

export async function findIdByPhone(db: Queryable, orgId: string, phone: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>({
    name: 'crm_contact_by_phone',
    text: 'SELECT id FROM contacts WHERE org_id = $1 AND phone = $2',
    values: [orgId, phone],
  });
  return rows[0]?.id;
}

export interface ContactPatch {
  name?: string;
  email?: string;
  phone?: string;
  source?: string;
  status?: string;
  statusId?: string | null;
  assignedUserId?: string | null;
  notes?: string;
  tags?: string[];
  avatar?: string;
  threadTypes?: string[];
  dealValue?: number;
  customFields?: CustomFields;
}

/** Each patchable field's column, which is also its key in ContactRow (domain/contacts.ts diffs against the row). */
export const PATCH_COLUMNS: Record<keyof ContactPatch, keyof ContactRow & string> = {
  name: 'name',
  email: 'email',
  phone: 'phone',
  source: 'source',
  status: 'status',
  statusId: 'status_id',
  assignedUserId: 'assigned_user_id',
  notes: 'notes',
  tags: 'tags',
  avatar: 'avatar',
  threadTypes: 'thread_types',
  dealValue: 'deal_value',
  customFields: 'custom_fields',
};

export async function updateContact(db: Queryable, orgId: string, id: string, patch: ContactPatch, touch = true): Promise<ContactRow | undefined> {
  const sets: string[] = [];
  const args: unknown[] = [id, orgId];
  for (const [key, col] of Object.entries(PATCH_COLUMNS) as [keyof ContactPatch, string][]) {
    if (patch[key] === undefined) continue;
    // jsonb goes as JSON text (an array value would otherwise be sent as a PostgreSQL array).
    args.push(key === 'customFields' ? JSON.stringify(patch[key]) : patch[key]);
    sets.push(`${col} = $${args.length}`);
  }
  if (touch) sets.push('updated_at = now()');
  if (sets.length === 0) return findContact(db, orgId, id);
  const { rows } = await db.query<ContactRow>(`UPDATE contacts SET ${sets.join(', ')} WHERE id = $1 AND org_id = $2 RETURNING ${COLUMNS}`, args);
  return rows[0];
}

/**
 * The org's contacts among `ids` (only those `viewer` may see, when given, as findContact), locked in id order
 * (two bulk requests over the same rows never deadlock).
 */
export async function lockMany(db: Queryable, orgId: string, ids: string[], viewer?: string): Promise<ContactRow[]> {
  const visible = viewer ? ` AND ${contactVisibleSql('$3::uuid')}` : '';
  const { rows } = await db.query<ContactRow>(
    `SELECT ${COLUMNS} FROM contacts WHERE org_id = $1 AND id = ANY($2::uuid[])${visible} ORDER BY id FOR UPDATE`,
    viewer ? [orgId, ids, viewer] : [orgId, ids],
  );
  return rows;
}

/** Delete many of the org's contacts in one statement; returns what was deleted. */
export async function deleteMany(db: Queryable, orgId: string, ids: string[]): Promise<{ id: string; name: string; phone: string }[]> {
  const { rows } = await db.query<{ id: string; name: string; phone: string }>(
    'DELETE FROM contacts WHERE org_id = $1 AND id = ANY($2::uuid[]) RETURNING id, name, phone',
    [orgId, ids],
  );
  return rows;
}

/** The deleted contact's name and phone (for the audit log), or undefined when the org has no such contact. */
export async function deleteContact(db: Queryable, orgId: string, id: string): Promise<{ name: string; phone: string } | undefined> {
  const res = await db.query<{ name: string; phone: string }>({
    name: 'crm_contact_delete',
    text: 'DELETE FROM contacts WHERE id = $1 AND org_id = $2 RETURNING name, phone',
    values: [id, orgId],
  });
  return res.rows[0];
}

/** Last activity only moves forward: events can arrive late or twice. */
export async function touchLastActivity(db: Queryable, orgId: string, id: string, at: Date): Promise<boolean> {
  const res = await db.query({
    name: 'crm_contact_touch_activity',
    text: 'UPDATE contacts SET last_activity = GREATEST(last_activity, $3) WHERE id = $1 AND org_id = $2',
    values: [id, orgId, at],
  });
  return (res.rowCount ?? 0) > 0;
}

/**
 * A batch's message activity of the org's contacts in one statement (one round trip, where a round trip costs more
 * than the rows): lastActivity moved to the given times (never back; unchanged rows are not rewritten) and the
 * timeline lines inserted in the order given. The rows are locked first in id order, the order every writer of
 * several contacts takes them in (scoring, its sweep), so concurrent batches wait for each other instead of
 * deadlocking (the locking CTE hands its rows out in that order to whichever part reads it first). Deleted,
 * unknown and other orgs' contacts get neither.
 */
export async function recordMessageActivity(db: Queryable, orgId: string, touches: { id: string; at: Date }[], lines: TimelineLine[]): Promise<void> {
  if (touches.length === 0) return;
  await db.query({
    name: 'crm_contacts_message_activity',
    text: `WITH locked AS (
             SELECT id FROM contacts WHERE org_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR NO KEY UPDATE
           ), touched AS (
             UPDATE contacts c SET last_activity = v.at FROM unnest($2::uuid[], $3::timestamptz[]) AS v(id, at)
             WHERE c.org_id = $1 AND c.id = v.id AND c.last_activity < v.at AND c.id IN (SELECT id FROM locked)
           )
           INSERT INTO contact_activities (org_id, contact_id, type, data, occurred_at)
           SELECT $1, a.contact_id, a.type, a.data, a.at
           FROM unnest($4::uuid[], $5::text[], $6::text[], $7::timestamptz[]) WITH ORDINALITY AS a(contact_id, type, data, at, i)
           WHERE a.contact_id IN (SELECT id FROM locked)
           ORDER BY a.i`,
    values: [
      orgId,
      touches.map((t) => t.id),
      touches.map((t) => t.at),
      lines.map((a) => a.contactId),
      lines.map((a) => a.type),
      lines.map((a) => activityText(a.data)),
      lines.map((a) => a.at),
    ],
  });
}

export interface ContactFilter {
  page: number;
  limit: number;
  /** Text search over name and email; already LIKE-escaped (folded in SQL). */
  searchText?: string;
  /** A phone-like search term: whole number, beginnings and end. */
  searchPhone?: PhoneSearch;
  source?: string;
  status?: string;
  statusId?: string;
  assignedUserId?: string;
  threadType?: string;
  hasChatnet?: 'true' | 'false' | 'unknown';
  scoreMin?: number;
  scoreMax?: number;
  dateFrom?: Date;
  dateTo?: Date;
  tag?: string;
  /** cf.<key>=value filters, typed: one containment test on custom_fields (its GIN index). */
  customFields?: CustomFields;
  /** The agent whose inbox visibility limits the list (db/visibility.repo.ts); absent: the whole org. */
  viewer?: string;
  sortBy: 'lastActivity' | 'createdAt' | 'leadScore';
  direction: 'asc' | 'desc';
  skipTotal?: boolean;
}

/**
 * List SQL varies only with which filters are present, so each shape becomes a named prepared statement:
 * planning these joins costs more than running them on a page of 50.
 */
function prepared(text: string, values: unknown[]) {
  return { name: `crm_cl_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text, values };
}

const SORT_COLUMNS = { lastActivity: 'last_activity', createdAt: 'created_at', leadScore: 'lead_score' } as const;

const ORG_TOTAL = {
  name: 'crm_contacts_org_total',
  text: 'SELECT COALESCE(sum(delta), 0)::int AS n FROM contact_count_deltas WHERE org_id = $1',
};

/** The WHERE conditions of a filter (the first is the org) and their parameters; `arg` adds one more. */
function contactWhere(orgId: string, f: Omit<ContactFilter, 'page' | 'limit' | 'sortBy' | 'direction'>) {
  const where = ['org_id = $1'];
  const args: unknown[] = [orgId];
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  if (f.searchPhone) {
    const p = f.searchPhone;
    // Each alternative repeats phone <> '' so it can use the partial phone indexes (a BitmapOr of them).
    const alternatives = p.prefixes.map((prefix) => `(phone <> '' AND phone LIKE ${arg(`${prefix}%`)})`);
    if (p.exact) alternatives.push(`(phone <> '' AND phone = ${arg(p.exact)})`);
    if (p.suffix) alternatives.push(`(phone <> '' AND reverse(phone) LIKE ${arg(`${[...p.suffix].reverse().join('')}%`)})`);
    where.push(`(${alternatives.join(' OR ')})`);
  } else if (f.searchText !== undefined) {
    where.push(`search_text LIKE '%' || crm_fold(${arg(f.searchText)}) || '%'`);
  }
  if (f.source) where.push(`source = ${arg(f.source)}`);
  if (f.status) where.push(`status = ${arg(f.status)}`);
  if (f.statusId) where.push(`status_id = ${arg(f.statusId)}`);
  if (f.assignedUserId) where.push(`assigned_user_id = ${arg(f.assignedUserId)}`);
  if (f.threadType) where.push(`thread_types @> ARRAY[${arg(f.threadType)}]::text[]`);
  if (f.hasChatnet === 'true') where.push('has_chatnet IS TRUE');
  if (f.hasChatnet === 'false') where.push('has_chatnet IS FALSE');
  // Never looked up: a phone to look up, no identity, no answer yet (contacts_chatnet_unchecked_idx).
  if (f.hasChatnet === 'unknown') where.push(`chatnet_uid IS NULL AND phone <> '' AND chatnet_checked_at IS NULL`);
  if (f.scoreMin !== undefined) where.push(`lead_score >= ${arg(f.scoreMin)}`);
  if (f.scoreMax !== undefined) where.push(`lead_score <= ${arg(f.scoreMax)}`);
  if (f.dateFrom) where.push(`last_activity >= ${arg(f.dateFrom)}`);
  if (f.dateTo) where.push(`last_activity < ${arg(f.dateTo)}`);
  if (f.tag) where.push(`tags @> ARRAY[${arg(f.tag)}]::text[]`);
  if (f.customFields) where.push(`custom_fields @> ${arg(JSON.stringify(f.customFields))}::jsonb`);
  if (f.viewer) where.push(contactVisibleSql(`${arg(f.viewer)}::uuid`));
  return { where, args, arg };
}

/**
 * The filtered page (with each contact's friends, in one query) and its total, side by side on two
 * connections. An unfiltered total comes from the per-org counter instead of counting rows.
 */
export async function listContacts(pool: Pool, orgId: string, f: ContactFilter, cache?: TotalCache) {
  const { where, args } = contactWhere(orgId, f);
  // A visible total changes with assignments, which the org's contact count (the cache's check) does not see.
  if (f.viewer) cache = undefined;
  const whereSql = where.join(' AND ');
  const col = SORT_COLUMNS[f.sortBy];
  const dir = f.direction === 'asc' ? 'ASC' : 'DESC';
  const searching = f.searchPhone !== undefined || f.searchText !== undefined;
  const orgTotal = () => pool.query<{ n: number }>({ ...ORG_TOTAL, values: [orgId] }).then((r) => r.rows[0].n);

  if (where.length === 1) {
    const [rows, total] = await Promise.all([plainPage(pool, whereSql, args, col, dir, f, true), f.skipTotal ? undefined : orgTotal()]);
    return { rows, pagination: pagination(f, total ?? rows.length) };
  }

  const countArgs = [...args];
  // Plain filters are named prepared statements (planning their joins costs more than running them); a search
  // is planned for its actual term, since LIKE prefixes and trigram patterns only use an index when known.
  const count = () =>
    pool
      .query<{ n: number }>(
        searching
          ? { text: `SELECT count(*) AS n FROM contacts WHERE ${whereSql}`, values: countArgs }
          : prepared(`SELECT count(*) AS n FROM contacts WHERE ${whereSql}`, countArgs),
      )
      .then((r) => r.rows[0].n);
  const key = cache?.enabled ? `${orgId}|${whereSql}|${JSON.stringify(args)}` : undefined;
  const cached = key ? cache!.get(key) : undefined;

  if (cached) {
    const [now, rows] = await Promise.all([orgTotal(), plainPage(pool, whereSql, args, col, dir, f, !searching)]);
    if (now === cached.orgTotal) return { rows, pagination: pagination(f, cached.total) };
    const total = await count();
    cache!.offer(key!, total, now);
    return { rows: total > DENSE ? rows : (await matchedPage(pool, whereSql, args, col, dir, f)).rows, pagination: pagination(f, total) };
  }
  if (searching) {
    const [found, now] = await Promise.all([matchedPage(pool, whereSql, args, col, dir, f), key ? orgTotal() : undefined]);
    if (key && now !== undefined) cache!.offer(key, found.total, now);
    return { rows: found.rows, pagination: pagination(f, found.total) };
  }
  // Count first, then pick how to page: walking the sort index finds 50 of many matches at once, but walks
  // the whole organization when there are few (or none, the planner cannot know); those are collected first.
  const [total, now] = await Promise.all([count(), key ? orgTotal() : undefined]);
  if (key && now !== undefined) cache!.offer(key, total, now);
  const rows = total > DENSE ? await plainPage(pool, whereSql, args, col, dir, f, true) : (await matchedPage(pool, whereSql, args, col, dir, f)).rows;
  return { rows, pagination: pagination(f, total) };
}

/**
 * A keyset page (the public API's cursors): lastActivity descending (the list's usual order), or updatedAt
 * ascending for incremental sync ("updated", with `updatedSince`). Friends are not read: the public shape has none.
 */
export async function listContactsAfter(pool: Pool, orgId: string, f: Omit<ContactFilter, 'page' | 'sortBy' | 'direction'>, k: Keyset) {
  const { where, arg, args } = contactWhere(orgId, f);
  const [col, dir] = k.order === 'updated' ? (['updated_at', 'ASC'] as const) : (['last_activity', 'DESC'] as const);
  if (k.updatedSince) where.push(`updated_at >= ${arg(k.updatedSince)}`);
  if (k.after) where.push(afterSql(col, 'id', dir, k.after, arg));
  const { rows } = await pool.query<ContactRow & { key_value: string }>(
    `SELECT ${COLUMNS}, ${keyTimeSql(col)} AS key_value FROM contacts WHERE ${where.join(' AND ')}
     ORDER BY ${col} ${dir}, id ${dir} LIMIT ${f.limit + 1}`,
    args,
  );
  return keysetPage(rows, f.limit);
}

/** The filter's contacts after `afterId` in id order (CSV export's pages; contacts_org_id_idx of 002). */
export async function listContactsById(
  pool: Pool,
  orgId: string,
  f: Omit<ContactFilter, 'page' | 'limit' | 'sortBy' | 'direction'>,
  afterId: string,
  limit: number,
) {
  const { where, arg, args } = contactWhere(orgId, f);
  if (afterId) where.push(`id > ${arg(afterId)}`);
  const { rows } = await pool.query<ContactRow>(`SELECT ${COLUMNS} FROM contacts WHERE ${where.join(' AND ')} ORDER BY id LIMIT ${limit}`, args);
  return rows;
}

/** Above this many matches a page walks the sort index; at or below it the matches are collected and sorted. */
const DENSE = 2000;

/** One page in sort order, each contact with its friends. */
async function plainPage(pool: Pool, whereSql: string, filterArgs: unknown[], col: string, dir: string, f: ContactFilter, named: boolean) {
  const args = [...filterArgs, f.limit, offsetOf(f)];
  const text = `SELECT c.*, COALESCE(fr.friends, '[]'::json) AS friends
       FROM (SELECT ${COLUMNS} FROM contacts WHERE ${whereSql} ORDER BY ${col} ${dir}, id ${dir} LIMIT $${args.length - 1} OFFSET $${args.length}) c
       ${FRIENDS_JOIN}
       ORDER BY c.${col} ${dir}, c.id ${dir}`;
  const { rows } = await pool.query<ContactRow & { friends: FriendRef[] }>(named ? prepared(text, args) : { text, values: args });
  return rows;
}

const FRIENDS_JOIN = `LEFT JOIN LATERAL (
       SELECT json_agg(json_build_object('chatnetUid', cf.chatnet_uid, 'displayName', cf.display_name, 'accountId', cf.account_id)
                       ORDER BY cf.added_at, cf.id) AS friends
       FROM contact_friends cf WHERE cf.contact_id = c.id) fr ON true`;

/**
 * Collect the matches once (through whatever index fits: trigram, phone, status...), then count and page that
 * set. For searches this is one pass instead of one for the count and one for the page; for sparse filters it
 * avoids walking the sort index past rows that do not match, which the planner may pick for a LIMIT.
 */
async function matchedPage(pool: Pool, whereSql: string, args: unknown[], col: string, dir: string, f: ContactFilter) {
  const { rows } = await pool.query<ContactRow & { friends: FriendRef[]; total: number }>(
    `WITH m AS MATERIALIZED (SELECT id, ${col} AS k FROM contacts WHERE ${whereSql}),
          p AS (SELECT id, k FROM m ORDER BY k ${dir}, id ${dir} LIMIT ${f.limit} OFFSET ${offsetOf(f)}),
          t AS (SELECT count(*)::int AS total FROM m)
     SELECT t.total, c.*, COALESCE(fr.friends, '[]'::json) AS friends
     FROM t
     LEFT JOIN (p JOIN LATERAL (SELECT ${COLUMNS} FROM contacts x WHERE x.id = p.id) c ON true) ON true
     ${FRIENDS_JOIN}
     ORDER BY p.k ${dir}, p.id ${dir}`,
    args,
  );
  return { rows: rows.filter((r) => r.id !== null), total: rows[0]?.total ?? 0 };
}

/** Folds the counter rows of each organization into one (called periodically; safe with several replicas). */
export async function compactContactCounts(db: Queryable): Promise<number> {
  const res = await db.query({
    name: 'crm_contacts_compact_counts',
    text: `WITH folded AS (
             DELETE FROM contact_count_deltas
             WHERE org_id IN (SELECT org_id FROM contact_count_deltas GROUP BY org_id HAVING count(*) > 1)
             RETURNING org_id, delta)
           INSERT INTO contact_count_deltas (org_id, delta) SELECT org_id, sum(delta) FROM folded GROUP BY org_id`,
  });
  return res.rowCount ?? 0;
}

const friendKey = (orgId: string, contactId: string) => `${orgId.toLowerCase()}/${contactId.toLowerCase()}`;
const friendsTogether = coalescedReads<{ orgId: string; contactId: string }, FriendRef[]>({
  keyOf: (k) => friendKey(k.orgId, k.contactId),
  one: async (db, k) => (await friendsOf(db, k.orgId, [k.contactId])).get(k.contactId),
  // One query per org among the contacts asked (nearly always one).
  many: async (db, keys) => {
    const byOrg = new Map<string, string[]>();
    for (const k of keys) {
      const ids = byOrg.get(k.orgId);
      if (ids) ids.push(k.contactId);
      else byOrg.set(k.orgId, [k.contactId]);
    }
    const out: [string, FriendRef[]][] = [];
    for (const [orgId, ids] of byOrg) for (const [id, refs] of await friendsOf(db, orgId, ids)) out.push([friendKey(orgId, id), refs]);
    return out;
  },
});

/** One contact's friends; on the pool, a batch of contact details reads theirs in one query. */
export async function friendsOfContact(db: Queryable, orgId: string, contactId: string): Promise<FriendRef[]> {
  if (isPool(db) && isUuid(orgId) && isUuid(contactId)) return (await friendsTogether(db, { orgId, contactId })) ?? [];
  return (await friendsOf(db, orgId, [contactId])).get(contactId) ?? [];
}

/** Friends of a page of contacts in one query. */
export async function friendsOf(db: Queryable, orgId: string, contactIds: string[]): Promise<Map<string, FriendRef[]>> {
  const out = new Map<string, FriendRef[]>(contactIds.map((id) => [id, []]));
  if (contactIds.length === 0) return out;
  const { rows } = await db.query<{ contact_id: string; chatnet_uid: string; display_name: string; account_id: string }>({
    name: 'crm_friends_of_contacts',
    text: `SELECT contact_id, chatnet_uid, display_name, account_id FROM contact_friends
           WHERE org_id = $1 AND contact_id = ANY($2::uuid[]) ORDER BY added_at, id`,
    values: [orgId, contactIds],
  });
  for (const r of rows) out.get(r.contact_id)?.push({ chatnetUid: r.chatnet_uid, displayName: r.display_name, accountId: r.account_id });
  return out;
}
