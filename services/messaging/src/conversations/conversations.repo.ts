import { messagingRules } from '@crm/validation';
import {
  afterSql,
  coalescedReads,
  iso,
  isoOrUndefined,
  isPool,
  isUuid,
  type Keyset,
  keysetPage,
  keyTimeSql,
  offsetOf,
  pagination,
  PageRequest,
  Queryable,
} from '@crm/db';
import { newestMatchesSql, Params, termMatchSql, walkNewest } from './message-search.repo';
import { visibleSql } from '../visibility';
import { lastMessageSet } from './last-message';

export const CONVERSATION_STATUSES = messagingRules.CONVERSATION_STATUSES;
export type ConversationStatus = messagingRules.ConversationStatus;
export type ConversationPriority = messagingRules.ConversationPriority;

/** A priority as stored: its rank, 1 (low) to 4 (urgent), so sortBy=priority is a plain order (migration 021). */
export function priorityRank(p: ConversationPriority | null): number | null {
  return p === null ? null : messagingRules.CONVERSATION_PRIORITIES.indexOf(p) + 1;
}

export function priorityName(rank: number | null): ConversationPriority | null {
  return rank ? messagingRules.CONVERSATION_PRIORITIES[rank - 1] : null;
}

export interface ConversationRow {
  id: string;
  org_id: string;
  chatnet_account_id: string;
  thread_type: 'user' | 'group';
  thread_id: string;
  contact_id: string | null;
  contact_chatnet_uid: string;
  contact_name: string;
  contact_avatar: string;
  contact_phone: string;
  status: ConversationStatus;
  message_count: number;
  unread_count: number;
  unreplied_count: number;
  last_message_id: string | null;
  last_message_content: string | null;
  last_message_content_type: string | null;
  last_message_sender_name: string | null;
  last_message_at: Date | null;
  last_activity_at: Date;
  created_at: Date;
  /** Moved by a trigger on every change of the row (migration 012). */
  updated_at: Date;
  assignee_id: string | null;
  team_id: string | null;
  snoozed_until: Date | null;
  /** priorityRank of the priority; null: none. */
  priority: number | null;
  /** The SLA clock (migration 026); sla_policy_id null: no SLA. */
  sla_policy_id: string | null;
  sla_first_response_due_at: Date | null;
  sla_next_response_due_at: Date | null;
  sla_resolution_due_at: Date | null;
  sla_warn_at: Date | null;
  sla_breached_at: Date | null;
  /** The contact's latest CSAT answer (csat module, migration 030). */
  csat_rating: number | null;
  csat_comment: string | null;
  csat_responded_at: Date | null;
  folder_ids?: string[];
}

const COLUMNS = `c.id, c.org_id, c.chatnet_account_id, c.thread_type, c.thread_id, c.contact_id, c.contact_chatnet_uid,
  c.contact_name, c.contact_avatar, c.contact_phone, c.status, c.message_count, c.unread_count, c.unreplied_count,
  c.last_message_id, c.last_message_content, c.last_message_content_type, c.last_message_sender_name, c.last_message_at,
  c.last_activity_at, c.created_at, c.updated_at, c.assignee_id, c.team_id, c.snoozed_until, c.priority,
  c.sla_policy_id, c.sla_first_response_due_at, c.sla_next_response_due_at, c.sla_resolution_due_at, c.sla_warn_at, c.sla_breached_at,

  c.csat_rating, c.csat_comment, c.csat_responded_at`;
const FOLDERS = `COALESCE((SELECT array_agg(f.folder_id::text ORDER BY f.added_at) FROM conversation_folders f WHERE f.conversation_id = c.id), '{}') AS folder_ids`;

/** The conversation's `csat` from its row's copy of the latest answer (the csat module keeps those columns, migration 030). */
export function csatOf(r: { csat_rating?: number | null; csat_comment?: string | null; csat_responded_at?: Date | null }) {
  if (!r.csat_rating || !r.csat_responded_at) return undefined;
  return { rating: r.csat_rating, comment: r.csat_comment ?? undefined, respondedAt: iso(r.csat_responded_at) };
}

/** The internal API's Conversation. */
export function toConversation(r: ConversationRow) {
  return {
    id: r.id,
    contactId: r.contact_id ?? undefined,
    contactName: r.contact_name,
    contactAvatar: r.contact_avatar,
    type: r.thread_type,
    chatnetAccountId: r.chatnet_account_id,
    threadId: r.thread_id,
    messageCount: r.message_count,
    unreadCount: r.unread_count,
    lastMessage: r.last_message_id
      ? {
          id: r.last_message_id,
          content: r.last_message_content ?? '',
          contentType: r.last_message_content_type ?? 'text',
          senderName: r.last_message_sender_name ?? '',
          sentAt: iso(r.last_message_at!),
        }
      : undefined,
    status: r.status,
    createdAt: iso(r.created_at),
    lastActivityAt: iso(r.last_activity_at),
    isReplied: r.unreplied_count === 0,
    folderIds: r.folder_ids ?? [],
    assigneeId: r.assignee_id ?? undefined,
    teamId: r.team_id ?? undefined,
    snoozedUntil: isoOrUndefined(r.snoozed_until),
    priority: priorityName(r.priority) ?? undefined,
    sla: slaOf(r),
    csat: csatOf(r),
  };
}

/** `due_soon` from the last 20% of the nearest window (sla_warn_at); breached once a window of the cycle was missed. */
export function slaStatusOf(breachedAt: Date | null, warnAt: Date | null, now: Date): messagingRules.SlaStatus {
  if (breachedAt) return 'breached';
  return warnAt && warnAt.getTime() <= now.getTime() ? 'due_soon' : 'ok';
}

/** The SLA state (issue #29): absent without a policy; each due time absent when that window is not running. */
function slaOf(r: ConversationRow) {
  if (!r.sla_policy_id) return undefined;
  return {
    policyId: r.sla_policy_id,
    firstResponseDueAt: isoOrUndefined(r.sla_first_response_due_at),
    nextResponseDueAt: isoOrUndefined(r.sla_next_response_due_at),
    resolutionDueAt: isoOrUndefined(r.sla_resolution_due_at),
    status: slaStatusOf(r.sla_breached_at, r.sla_warn_at, new Date()),
    breachedAt: isoOrUndefined(r.sla_breached_at),
  };
}

export function toHeader(r: ConversationRow) {
  const { lastMessage: _l, isReplied: _r, ...rest } = toConversation(r);
  return rest;
}

/** The public API's Conversation. */
export function toPublicConversation(r: ConversationRow) {
  return {
    id: r.id,
    threadType: r.thread_type,
    externalThreadId: r.thread_id,
    lastMessageAt: isoOrUndefined(r.last_message_at),
    unreadCount: r.unread_count,
    isReplied: r.unreplied_count === 0,
    contact: r.contact_id
      ? { id: r.contact_id, fullName: r.contact_name, phone: r.contact_phone, avatarUrl: r.contact_avatar || undefined }
      : undefined,
    assigneeId: r.assignee_id ?? undefined,
    updatedAt: iso(r.updated_at),
    csat: csatOf(r),
  };
}

/** `viewer`: the agent whose inbox visibility applies (visibility/visibility.ts `viewerOf`); a conversation they may not see is not found. */
export async function findById(
  db: Queryable,
  orgId: string,
  id: string,
  lock = false,
  viewer: string | null = null,
): Promise<ConversationRow | undefined> {
  const visible = viewer ? ` AND ${visibleSql('$3')}` : '';
  const { rows } = await db.query<ConversationRow>(
    `SELECT ${COLUMNS}, ${FOLDERS} FROM conversations c WHERE c.org_id = $1 AND c.id = $2${visible}${lock ? ' FOR UPDATE OF c' : ''}`,
    viewer ? [orgId, id, viewer] : [orgId, id],
  );
  return rows[0];
}

const FIND_BY_THREAD = {
  name: 'msg_conv_by_thread',
  text: `SELECT ${COLUMNS} FROM conversations c
         WHERE c.org_id = $1 AND c.chatnet_account_id = $2 AND c.thread_type = $3 AND c.thread_id = $4`,
};

export async function findByThread(db: Queryable, orgId: string, accountId: string, threadType: string, threadId: string) {
  const { rows } = await db.query<ConversationRow>({ ...FIND_BY_THREAD, values: [orgId, accountId, threadType, threadId] });
  return rows[0];
}

export interface ThreadRef {
  orgId: string;
  accountId: string;
  threadType: string;
  threadId: string;
}

/**
 * Which of these threads have a conversation (one statement for a batch); answered as the indexes given.
 * Planned at every call, not prepared (no `name`): a prepared statement's generic plan, made while an org had few
 * conversations, looked them up by org_id alone (conversations_priority_idx) and read every conversation of the org
 * for each thread as the org grew: 119 ms for 33 threads at 10,100 conversations. A burst of new senders at 200 msg/s
 * backed up for 25 s (bench/realtime, "fresh"). Planning costs ~0.2 ms a batch
 * (test/thread-lookup-plan.int.test.ts).
 */
export async function threadsWithConversation(db: Queryable, threads: ThreadRef[]): Promise<Set<number>> {
  if (threads.length === 0) return new Set();
  const { rows } = await db.query<{ i: number }>({
    text: `SELECT t.i FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS t (org_id, account_id, thread_type, thread_id, i)
           WHERE EXISTS (SELECT 1 FROM conversations c WHERE c.org_id = t.org_id AND c.chatnet_account_id = t.account_id
                           AND c.thread_type = t.thread_type AND c.thread_id = t.thread_id)`,
    values: [threads.map((t) => t.orgId), threads.map((t) => t.accountId), threads.map((t) => t.threadType), threads.map((t) => t.threadId)],
  });
  return new Set(rows.map((r) => Number(r.i) - 1));
}

export interface NewConversation {
  id: string;
  orgId: string;
  accountId: string;
  threadType: string;
  threadId: string;
  contactId: string | null;
  contactChatnetUid: string;
  contactName: string;
  contactAvatar: string;
  contactPhone: string;
}

/** Insert unless the thread already has a conversation (two messages racing); returns the row either way. */
export async function insertOrGet(db: Queryable, c: NewConversation): Promise<{ row: ConversationRow; created: boolean }> {
  return (await insertOrGetMany(db, [c]))[0];
}

/**
 * insertOrGet for many threads at once (an inbound batch's new threads): one statement inserts them all, in the order
 * of their keys (two instances' batches with common threads wait for each other, never deadlock), and one reads those
 * another transaction made first. Answers in the order of `list`; a thread given twice is made once, and the second
 * gets the first's row as not created.
 */
export async function insertOrGetMany(db: Queryable, list: NewConversation[]): Promise<Array<{ row: ConversationRow; created: boolean }>> {
  if (list.length === 0) return [];
  const key = (c: { orgId: string; accountId: string; threadType: string; threadId: string }) =>
    `${c.orgId}\n${c.accountId}\n${c.threadType}\n${c.threadId}`;
  const unique = new Map<string, NewConversation>();
  for (const c of list) if (!unique.has(key(c))) unique.set(key(c), c);
  const sorted = [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
  const col = <T>(f: (c: NewConversation) => T) => sorted.map(f);
  const { rows: made } = await db.query<ConversationRow>(
    `INSERT INTO conversations AS c (id, org_id, chatnet_account_id, thread_type, thread_id, contact_id, contact_chatnet_uid, contact_name, contact_avatar, contact_phone)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::uuid[], $7::text[], $8::text[], $9::text[], $10::text[])
     ON CONFLICT (org_id, chatnet_account_id, thread_type, thread_id) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      col((c) => c.id),
      col((c) => c.orgId),
      col((c) => c.accountId),
      col((c) => c.threadType),
      col((c) => c.threadId),
      col((c) => c.contactId),
      col((c) => c.contactChatnetUid),
      col((c) => c.contactName),
      col((c) => c.contactAvatar),
      col((c) => c.contactPhone),
    ],
  );
  const byKey = new Map<string, { row: ConversationRow; created: boolean }>();
  for (const row of made) {
    byKey.set(key({ orgId: row.org_id, accountId: row.chatnet_account_id, threadType: row.thread_type, threadId: row.thread_id }), {
      row,
      created: true,
    });
  }
  const others = sorted.filter((c) => !byKey.has(key(c)));
  if (others.length) {
    const o = <T>(f: (c: NewConversation) => T) => others.map(f);
    const { rows } = await db.query<ConversationRow>(
      `SELECT ${COLUMNS} FROM conversations c
       JOIN unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) AS t(org_id, account_id, thread_type, thread_id)
         ON c.org_id = t.org_id AND c.chatnet_account_id = t.account_id AND c.thread_type = t.thread_type AND c.thread_id = t.thread_id`,
      [o((c) => c.orgId), o((c) => c.accountId), o((c) => c.threadType), o((c) => c.threadId)],
    );
    for (const row of rows) {
      byKey.set(key({ orgId: row.org_id, accountId: row.chatnet_account_id, threadType: row.thread_type, threadId: row.thread_id }), {
        row,
        created: false,
      });
    }
  }
  const seen = new Set<string>();
  return list.map((c) => {
    const found = byKey.get(key(c));
    if (!found) throw new Error('conversation vanished between insert and select');
    const first = !seen.has(key(c));
    seen.add(key(c));
    return first ? found : { row: found.row, created: false };
  });
}

export interface ConversationFilter extends PageRequest {
  status?: string;
  type?: string;
  /** Folded words of the search term (all must occur) and, for a phone-like term, its digits. */
  search?: { words: string[]; phoneDigits?: string; window: number };
  sortBy?: string;
  direction?: string;
  folderId?: string;
  chatnetAccountId?: string;
  unread?: boolean;
  unreplied?: boolean;
  contactId?: string;
  /** A user id, or null for "no assignee". */
  assigneeId?: string | null;
  teamId?: string;
  /** One priority, or `none` for the conversations without one. */
  priority?: (typeof messagingRules.PRIORITY_FILTERS)[number];
  /** The SLA status now (conversations without an SLA match none). */
  sla?: messagingRules.SlaStatus;
  /** The agent whose inbox visibility limits the list (null: the whole org). */
  viewer?: string | null;
}

/**
 * A conversation matches a search when its contact's name (or phone; folded in conversation_names, migration 036,
 * kept off the conversation row that every message updates) holds every word, in any order, or one of
 * its messages holds the term (a term with a word of one or two letters as a phrase, see shortWordRule):
 * among the newest `window` matching messages of the org, so a very common term stays cheap. Written as
 * the UNION of the two arms' conversation ids rather than `name LIKE … OR c.id IN (…)`: each arm then uses its
 * own indexes (conversations', messages': trigrams, and words for short words) and the list reads only the
 * candidates, where the OR made PostgreSQL test every conversation of the org.
 */
function searchCandidates(p: Params, search: NonNullable<ConversationFilter['search']>, walk: boolean): string {
  const contact = termMatchSql(p, 'n', search.words, 'names');
  const phone = search.phoneDigits ? ` OR n.search_text LIKE ${p.add(`%${search.phoneDigits}%`)}` : '';
  return `SELECT n.conversation_id FROM conversation_names n WHERE n.org_id = $1 AND ((${contact})${phone})
          UNION
          (${newestMatchesSql(p, '$1', search.words, search.window, [], 'm.conversation_id', walk)})`;
}

/** The nearest pending SLA due time (an overdue one included): sortBy=slaDue. LEAST ignores NULLs; none at all is NULL. */
const SLA_NEAREST_DUE = 'LEAST(c.sla_first_response_due_at, c.sla_next_response_due_at, c.sla_resolution_due_at)';

/** The list's `sla` filter, as slaStatusOf decides the status (by the database's clock). */
function slaFilterSql(status: messagingRules.SlaStatus): string {
  if (status === 'breached') return 'c.sla_breached_at IS NOT NULL';
  const soon = 'c.sla_warn_at IS NOT NULL AND c.sla_warn_at <= now()';
  return `c.sla_policy_id IS NOT NULL AND c.sla_breached_at IS NULL AND ${status === 'due_soon' ? soon : `NOT (${soon})`}`;
}

export async function list(db: Queryable, orgId: string, f: ConversationFilter) {
  const where = ['c.org_id = $1'];
  const p = new Params(orgId);
  const values = p.values;
  const add = (sql: string, v: unknown) => where.push(sql.replace('?', p.add(v)));
  if (f.status) add('c.status = ?', f.status);
  if (f.type) add('c.thread_type = ?', f.type);
  if (f.folderId) add('EXISTS (SELECT 1 FROM conversation_folders cf WHERE cf.conversation_id = c.id AND cf.folder_id = ?)', f.folderId);
  if (f.chatnetAccountId) add('c.chatnet_account_id = ?', f.chatnetAccountId);
  if (f.contactId) add('c.contact_id = ?', f.contactId);
  if (f.assigneeId === null) where.push('c.assignee_id IS NULL');
  else if (f.assigneeId) add('c.assignee_id = ?', f.assigneeId);
  if (f.teamId) add('c.team_id = ?', f.teamId);
  if (f.priority === 'none') where.push('c.priority IS NULL');
  else if (f.priority) add('c.priority = ?', priorityRank(f.priority));
  if (f.sla) where.push(slaFilterSql(f.sla));
  if (f.viewer) where.push(visibleSql(p.add(f.viewer)));
  if (f.unread === true) where.push('c.unread_count > 0');
  if (f.unread === false) where.push('c.unread_count = 0');
  if (f.unreplied === true) where.push('c.unreplied_count > 0');
  if (f.unreplied === false) where.push('c.unreplied_count = 0');
  const dir = f.direction === 'asc' ? 'ASC' : 'DESC';
  // By priority: urgent first (asc: low first), the unprioritised last either way, then the newest message.
  const order =
    f.sortBy === 'createdAt'
      ? `c.created_at ${dir}, c.id ${dir}`
      : f.sortBy === 'priority'
        ? `c.priority ${dir} NULLS LAST, c.last_message_at DESC NULLS LAST, c.id DESC`
        : f.sortBy === 'slaDue'
          ? `${SLA_NEAREST_DUE} ${f.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST, c.id ASC`
          : `c.last_message_at ${dir} NULLS LAST, c.id ${dir}`;
  const cond = where.join(' AND ');
  if (f.search) return listSearch(db, p, cond, order, f);
  const [{ rows: countRows }, { rows }] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM conversations c WHERE ${cond}`, values),
    db.query<ConversationRow>(
      `SELECT ${COLUMNS}, ${FOLDERS} FROM conversations c WHERE ${cond} ORDER BY ${order} LIMIT ${f.limit} OFFSET ${offsetOf(f)}`,
      values,
    ),
  ]);
  return { data: rows.map(toConversation), pagination: pagination(f, countRows[0].n) };
}

/**
 * The list under a search: the candidates are found once and both the total and the page come from that one
 * pass (a second count query would search the messages again). A page past the end still gets the total.
 */
async function listSearch(db: Queryable, p: Params, cond: string, order: string, f: ConversationFilter) {
  const walk = await walkNewest(db, p.values[0] as string, f.search!.words, f.search!.window);
  const { rows } = await db.query<ConversationRow & { total: number }>(
    `WITH hits AS MATERIALIZED (
       SELECT ${COLUMNS} FROM conversations c WHERE ${cond} AND c.id IN (${searchCandidates(p, f.search!, walk)})
     )
     SELECT c.*, t.total FROM (SELECT count(*)::int AS total FROM hits) t
     LEFT JOIN LATERAL (
       SELECT c.*, ${FOLDERS} FROM hits c ORDER BY ${order} LIMIT ${f.limit} OFFSET ${offsetOf(f)}
     ) c ON true`,
    p.values,
  );
  const total = rows[0]?.total ?? 0;
  return { data: rows.filter((r) => r.id !== null).map(toConversation), pagination: pagination(f, total) };
}

/** Most recent first, for the public API. */
/**
 * A keyset page of the public list: last message descending (conversations without one last), or updatedAt
 * ascending for incremental sync ("updated", with `updatedSince`).
 */
/** `viewer`: the agent whose inbox visibility limits the page (an API key bound to them, issue #31). */
export async function listRecentAfter(db: Queryable, orgId: string, limit: number, k: Keyset, viewer: string | null = null) {
  const args: unknown[] = [orgId];
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  const where = ['c.org_id = $1'];
  if (viewer) where.push(visibleSql(arg(viewer)));
  const updated = k.order === 'updated';
  const col = updated ? 'c.updated_at' : 'c.last_message_at';
  if (k.updatedSince) where.push(`c.updated_at >= ${arg(k.updatedSince)}`);
  if (k.after) where.push(afterSql(col, 'c.id', updated ? 'ASC' : 'DESC', k.after, arg, !updated));
  const order = updated ? 'c.updated_at, c.id' : 'c.last_message_at DESC NULLS LAST, c.id DESC';
  const { rows } = await db.query<ConversationRow & { key_value: string | null }>(
    `SELECT ${COLUMNS}, ${keyTimeSql(col)} AS key_value FROM conversations c WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${limit + 1}`,
    args,
  );
  return keysetPage(rows, limit);
}

/**
 * `userId` is the caller (mine); a call without a user has no "mine" (null matches nothing). `viewer`: the agent
 * whose inbox visibility limits what is counted.
 */
export async function counts(db: Queryable, orgId: string, userId: string | null, viewer: string | null = null) {
  const { rows } = await db.query<{ total: number; unread: number; unreplied: number; archived: number; mine: number; unassigned: number }>(
    `SELECT count(*)::int AS total,
            (count(*) FILTER (WHERE status <> 'archived' AND unread_count > 0))::int AS unread,
            (count(*) FILTER (WHERE status <> 'archived' AND unreplied_count > 0))::int AS unreplied,
            (count(*) FILTER (WHERE status = 'archived'))::int AS archived,
            (count(*) FILTER (WHERE status <> 'archived' AND assignee_id = $2))::int AS mine,
            (count(*) FILTER (WHERE status <> 'archived' AND assignee_id IS NULL))::int AS unassigned
     FROM conversations c WHERE org_id = $1${viewer ? ` AND ${visibleSql('$3')}` : ''}`,
    viewer ? [orgId, userId, viewer] : [orgId, userId],
  );
  return rows[0];
}

/** Any status change; the wake-up time is kept only for snoozed (the table's check insists). */
export async function setStatus(
  db: Queryable,
  orgId: string,
  id: string,
  status: ConversationStatus,
  snoozedUntil: Date | null = null,
): Promise<void> {
  await db.query(`UPDATE conversations SET status = $3, snoozed_until = $4, last_activity_at = now() WHERE org_id = $1 AND id = $2`, [
    orgId,
    id,
    status,
    status === 'snoozed' ? snoozedUntil : null,
  ]);
}

/** Set (or with null clear) the priority; `last_activity_at` moves as for any change made in the inbox. */
export async function setPriority(db: Queryable, orgId: string, id: string, priority: ConversationPriority | null): Promise<void> {
  await db.query(`UPDATE conversations SET priority = $3, last_activity_at = now() WHERE org_id = $1 AND id = $2`, [
    orgId,
    id,
    priorityRank(priority),
  ]);
}

/**
 * A message from the contact brings a conversation that is not active (snoozed, pending, closed, archived) back
 * to active. Called under the row lock the inbound insert took, so the status it read is still the current one.
 */
export async function reactivate(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE conversations SET status = 'active', snoozed_until = NULL WHERE id = $1`, [id]);
}

/** The org's conversations among `ids`, locked in id order (two bulk requests over the same rows never deadlock). */
/** Lock many conversations in id order (no deadlock between two bulk requests); `viewer`: only those an agent may see. */
export async function lockMany(db: Queryable, orgId: string, ids: string[], viewer: string | null = null): Promise<ConversationRow[]> {
  const visible = viewer ? ` AND ${visibleSql('$3')}` : '';
  const { rows } = await db.query<ConversationRow>(
    `SELECT ${COLUMNS} FROM conversations c WHERE c.org_id = $1 AND c.id = ANY($2::uuid[])${visible} ORDER BY c.id FOR UPDATE OF c`,
    viewer ? [orgId, ids, viewer] : [orgId, ids],
  );
  return rows;
}

/** One owner for many conversations (a bulk assignment): one statement. */
export async function setOwnerMany(
  db: Queryable,
  orgId: string,
  ids: string[],
  assigneeId: string | null,
  teamIds: (string | null)[],
): Promise<void> {
  await db.query(
    `UPDATE conversations c SET assignee_id = $3, team_id = t.team_id, last_activity_at = now()
     FROM unnest($2::uuid[], $4::uuid[]) AS t(id, team_id)
     WHERE c.org_id = $1 AND c.id = t.id`,
    [orgId, ids, assigneeId, teamIds],
  );
}

/** One status for many conversations (a bulk status change): one statement; the wake-up time only for snoozed. */
export async function setStatusMany(
  db: Queryable,
  orgId: string,
  ids: string[],
  status: ConversationStatus,
  snoozedUntil: Date | null,
): Promise<void> {
  await db.query(`UPDATE conversations SET status = $3, snoozed_until = $4, last_activity_at = now() WHERE org_id = $1 AND id = ANY($2::uuid[])`, [
    orgId,
    ids,
    status,
    status === 'snoozed' ? snoozedUntil : null,
  ]);
}

/** recount for many conversations in one statement. */
export async function recountMany(db: Queryable, orgId: string, ids: string[]): Promise<void> {
  await db.query(
    `UPDATE conversations c SET
       unread_count = (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.direction = 'inbound' AND NOT m.is_read),
       unreplied_count = (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.direction = 'inbound' AND NOT m.is_replied),
       last_activity_at = now()
     WHERE c.org_id = $1 AND c.id = ANY($2::uuid[])`,
    [orgId, ids],
  );
}

export async function setOwner(db: Queryable, orgId: string, id: string, assigneeId: string | null, teamId: string | null): Promise<void> {
  await db.query(`UPDATE conversations SET assignee_id = $3, team_id = $4, last_activity_at = now() WHERE org_id = $1 AND id = $2`, [
    orgId,
    id,
    assigneeId,
    teamId,
  ]);
}

/**
 * Snoozed conversations whose time has come, back to active, at most `limit` per call. One statement, safe with
 * several instances: rows another instance is waking are skipped (SKIP LOCKED), and a row woken meanwhile no longer
 * matches `status = 'snoozed'` when the UPDATE re-checks it, so each wake-up is returned (and announced) once.
 */
export async function wakeDue(db: Queryable, limit: number) {
  const { rows } = await db.query<{ id: string; org_id: string; contact_id: string | null; chatnet_account_id: string; assignee_id: string | null }>(
    `UPDATE conversations c SET status = 'active', snoozed_until = NULL, last_activity_at = now()
     FROM (SELECT id FROM conversations
           WHERE status = 'snoozed' AND snoozed_until <= now()
           ORDER BY snoozed_until LIMIT $1 FOR UPDATE SKIP LOCKED) due
     WHERE c.id = due.id AND c.status = 'snoozed'
     RETURNING c.id, c.org_id, c.contact_id, c.chatnet_account_id, c.assignee_id`,
    [limit],
  );
  return rows;
}

/** Milliseconds (by the database's clock) until the nearest snooze ends (0 or less: due now), null when none is snoozed. */
export async function nextSnoozeDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM min(snoozed_until) - now()) * 1000)::text AS ms FROM conversations WHERE status = 'snoozed'`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}

/** Counters and the last-message preview after a sent message was stored; a reply answers every earlier message. */
export async function applyOutbound(
  db: Queryable,
  id: string,
  m: { id: string; sentAt: Date; content: string; contentType: string; senderName: string },
): Promise<void> {
  // The contact's messages before it are answered now (messages.markReplied), in the same statement: one round trip
  // fewer for every message sent.
  await db.query(
    `WITH replied AS (UPDATE messages SET is_replied = true WHERE conversation_id = $1 AND direction = 'inbound' AND NOT is_replied)
     UPDATE conversations SET
       message_count = message_count + 1,
       unreplied_count = 0,
       last_activity_at = greatest(last_activity_at, now()),
       ${lastMessageSet({ id: '$2', sentAt: '$3', content: '$4', contentType: '$5', senderName: '$6' })}
     WHERE id = $1`,
    [id, m.id, m.sentAt, m.content, m.contentType, m.senderName],
  );
}

/** Recount unread/unreplied from the messages (after flags changed by hand). */
export async function recount(db: Queryable, id: string): Promise<void> {
  await db.query(
    `UPDATE conversations c SET
       unread_count = (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.direction = 'inbound' AND NOT m.is_read),
       unreplied_count = (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.direction = 'inbound' AND NOT m.is_replied),
       last_activity_at = now()
     WHERE c.id = $1`,
    [id],
  );
}

export async function linkContact(
  db: Queryable,
  orgId: string,
  id: string,
  contact: { id: string; name: string; avatar: string; phone?: string },
): Promise<void> {
  await db.query(
    `UPDATE conversations SET contact_id = $3,
       contact_name = CASE WHEN $4 <> '' THEN $4 ELSE contact_name END,
       contact_avatar = CASE WHEN $5 <> '' THEN $5 ELSE contact_avatar END,
       contact_phone = COALESCE($6, contact_phone)
     WHERE org_id = $1 AND id = $2 AND contact_id IS NULL`,
    [orgId, id, contact.id, contact.name ?? '', contact.avatar ?? '', contact.phone ?? null],
  );
}

/** Copy a contact's changed name, avatar and phone into its conversations. */
export async function refreshContact(db: Queryable, orgId: string, contact: { id: string; name?: string; avatar?: string; phone?: string }) {
  // Only rows whose copy differs are written: most contact.updated events change none of these (a campaign's identity
  // link, a tag), and a row rewritten for nothing still costs its generated search text, its trigger and its indexes.
  await db.query(
    `UPDATE conversations SET contact_name = COALESCE($3, contact_name), contact_avatar = COALESCE($4, contact_avatar), contact_phone = COALESCE($5, contact_phone)
     WHERE org_id = $1 AND contact_id = $2
       AND (contact_name, contact_avatar, contact_phone) IS DISTINCT FROM (COALESCE($3, contact_name), COALESCE($4, contact_avatar), COALESCE($5, contact_phone))`,
    [orgId, contact.id, contact.name ?? null, contact.avatar ?? null, contact.phone ?? null],
  );
}

/** The contact is gone from crm: the conversation keeps its history and gets a new contact on the next message. */
export async function unlinkContact(db: Queryable, orgId: string, contactId: string) {
  await db.query('UPDATE conversations SET contact_id = NULL WHERE org_id = $1 AND contact_id = $2', [orgId, contactId]);
}

export async function forContact(db: Queryable, orgId: string, contactId: string, viewer: string | null = null) {
  const { rows } = await db.query<ConversationRow>(
    `SELECT ${COLUMNS}, ${FOLDERS} FROM conversations c WHERE c.org_id = $1 AND c.contact_id = $2${viewer ? ` AND ${visibleSql('$3')}` : ''}
     ORDER BY c.last_message_at DESC NULLS LAST, c.id DESC`,
    viewer ? [orgId, contactId, viewer] : [orgId, contactId],
  );
  return rows;
}

/** What a contact's detail shows of each conversation (crm's ContactConversations): the four fields, not the whole row. */
export interface ConversationBrief {
  id: string;
  chatnet_account_id: string;
  message_count: number;
  last_message_at: Date | null;
}

/**
 * forContact for a contact's detail: only the fields it shows, as a named (prepared once per connection) statement,
 * since every contact detail asks it (each of its conversations otherwise costs the folders' sub-select too).
 */
async function briefsOfOneContact(db: Queryable, orgId: string, contactId: string, viewer: string | null): Promise<ConversationBrief[]> {
  const { rows } = await db.query<ConversationBrief>({
    name: viewer ? 'msg_briefs_for_contact_viewer' : 'msg_briefs_for_contact',
    text: `SELECT c.id, c.chatnet_account_id, c.message_count, c.last_message_at FROM conversations c
           WHERE c.org_id = $1 AND c.contact_id = $2${viewer ? ` AND ${visibleSql('$3')}` : ''}
           ORDER BY c.last_message_at DESC NULLS LAST, c.id DESC`,
    values: viewer ? [orgId, contactId, viewer] : [orgId, contactId],
  });
  return rows;
}

interface BriefsKey {
  orgId: string;
  contactId: string;
  viewer: string | null;
}
const briefsKey = (k: BriefsKey) => `${k.orgId.toLowerCase()}/${k.contactId.toLowerCase()}/${k.viewer?.toLowerCase() ?? ''}`;

const briefsAtOnce = coalescedReads<BriefsKey, ConversationBrief[]>({
  keyOf: briefsKey,
  one: (db, k) => briefsOfOneContact(db, k.orgId, k.contactId, k.viewer),
  many: async (db, keys) => {
    const { rows } = await db.query<ConversationBrief & { batch_n: string }>({
      name: 'msg_briefs_for_contacts_batch',
      // Each contact on its own org, under its own caller's visibility (none asked: every conversation).
      text: `SELECT k.n AS batch_n, c.id, c.chatnet_account_id, c.message_count, c.last_message_at
             FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY AS k(want_org, want_contact, want_viewer, n)
             JOIN conversations c ON c.org_id = k.want_org AND c.contact_id = k.want_contact
             WHERE k.want_viewer IS NULL OR ${visibleSql('k.want_viewer')}
             ORDER BY k.n, c.last_message_at DESC NULLS LAST, c.id DESC`,
      values: [keys.map((k) => k.orgId), keys.map((k) => k.contactId), keys.map((k) => k.viewer)],
    });
    const out = new Map<string, ConversationBrief[]>();
    for (const { batch_n, ...brief } of rows) {
      const id = briefsKey(keys[Number(batch_n) - 1]);
      const list = out.get(id);
      if (list) list.push(brief);
      else out.set(id, [brief]);
    }
    return out;
  },
});

/**
 * A contact's conversations as its detail shows them, newest first. On the pool, the reads of one turn (a batch of
 * ContactConversations calls: crm's contact details, grpc-kit's call-batch.ts) share one query; in a transaction, or
 * with ids that are not uuids, the read of the one contact.
 */
export async function briefsForContact(db: Queryable, orgId: string, contactId: string, viewer: string | null): Promise<ConversationBrief[]> {
  const coalesce = isPool(db) && isUuid(orgId) && isUuid(contactId) && (viewer === null || isUuid(viewer));
  return coalesce ? ((await briefsAtOnce(db, { orgId, contactId, viewer })) ?? []) : briefsOfOneContact(db, orgId, contactId, viewer);
}

/**
 * Each contact's most recently active conversation (forContact's first row), for many contacts in one statement: a
 * campaign asks for a page of recipients at once instead of one call and one query each.
 */
export async function latestForContacts(db: Queryable, orgId: string, contactIds: string[]) {
  if (contactIds.length === 0) return [];
  const { rows } = await db.query<{ contact_id: string; id: string; chatnet_account_id: string }>({
    name: 'msg_latest_for_contacts',
    text: `SELECT DISTINCT ON (c.contact_id) c.contact_id, c.id, c.chatnet_account_id FROM conversations c
           WHERE c.org_id = $1 AND c.contact_id = ANY($2::uuid[])
           ORDER BY c.contact_id, c.last_message_at DESC NULLS LAST, c.id DESC`,
    values: [orgId, contactIds],
  });
  return rows;
}

export async function existingIds(db: Queryable, orgId: string, ids: string[], viewer: string | null = null): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT c.id FROM conversations c WHERE c.org_id = $1 AND c.id = ANY($2::uuid[])${viewer ? ` AND ${visibleSql('$3')}` : ''}`,
    viewer ? [orgId, ids, viewer] : [orgId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** Empties the list preview of a conversation whose last message is `messageId` (the contact recalled it). */
export async function clearLastMessagePreview(db: Queryable, orgId: string, conversationId: string, messageId: string): Promise<void> {
  await db.query(`UPDATE conversations SET last_message_content = '' WHERE org_id = $1 AND id = $2 AND last_message_id = $3`, [
    orgId,
    conversationId,
    messageId,
  ]);
}
