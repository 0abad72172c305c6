import type { Queryable } from '@crm/db';
import type { ConversationState, Duration, Item, ItemKind } from './turns';
import type { Unit } from './user-stats';

/** SQL of the conversation side of the read model (analytics_conversations, _items, _durations, aggregates). */

export interface ConversationRow {
  last: Pick<Item, 'at' | 'kind' | 'id'>;
  state: ConversationState;
}

const ms = (d: Date | null) => (d ? d.getTime() : null);
const date = (v: number | null) => (v === null ? null : new Date(v));

/**
 * Stores the items (distinct ids) in one statement, in the order given (the caller sorts by id, so concurrent
 * batches storing the same item wait for each other in one order); returns the ids that were new, leaving out
 * items already stored (the same message reported twice).
 */
export async function insertItems(db: Queryable, orgId: string, rows: { conversationId: string; item: Item }[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const res = await db.query<{ item_id: string }>({
    name: 'analytics_items_insert',
    text: `INSERT INTO analytics_items (org_id, item_id, conversation_id, at, kind, user_id)
           SELECT $1, i.item_id, i.conversation_id, i.at, i.kind, i.user_id
           FROM unnest($2::uuid[], $3::uuid[], $4::timestamptz[], $5::smallint[], $6::uuid[]) WITH ORDINALITY AS i(item_id, conversation_id, at, kind, user_id, n)
           ORDER BY i.n
           ON CONFLICT (org_id, item_id) DO NOTHING RETURNING item_id`,
    values: [
      orgId,
      rows.map((r) => r.item.id),
      rows.map((r) => r.conversationId),
      rows.map((r) => new Date(r.item.at)),
      rows.map((r) => r.item.kind),
      rows.map((r) => r.item.userId),
    ],
  });
  return new Set(res.rows.map((r) => r.item_id));
}

interface StateRow {
  conversation_id: string;
  last_at: Date;
  last_kind: ItemKind;
  last_item: string;
  episode_start: Date | null;
  turn_start: Date | null;
  episode_replied: boolean;
}

const STATE_COLUMNS = 'conversation_id, last_at, last_kind, last_item, episode_start, turn_start, episode_replied';

function toConversationRow(r: StateRow): ConversationRow {
  return {
    last: { at: r.last_at.getTime(), kind: r.last_kind, id: r.last_item },
    state: { episodeStart: ms(r.episode_start), turnStart: ms(r.turn_start), episodeReplied: r.episode_replied },
  };
}

/**
 * The state of the conversations that exist among `conversationIds`, locked until the transaction ends. One
 * statement, locking in conversation id order (the sort runs below the lock), so batches sharing conversations
 * wait for each other instead of deadlocking.
 */
export async function lockConversations(db: Queryable, orgId: string, conversationIds: string[]): Promise<Map<string, ConversationRow>> {
  if (conversationIds.length === 0) return new Map();
  const { rows } = await db.query<StateRow>({
    name: 'analytics_conversations_lock',
    text: `SELECT ${STATE_COLUMNS} FROM analytics_conversations
           WHERE org_id = $1 AND conversation_id = ANY($2::uuid[]) ORDER BY conversation_id FOR UPDATE`,
    values: [orgId, conversationIds],
  });
  return new Map(rows.map((r) => [r.conversation_id, toConversationRow(r)]));
}

/** The conversation's state, locked until the transaction ends; undefined for a conversation not seen yet. */
export async function lockConversation(db: Queryable, orgId: string, conversationId: string): Promise<ConversationRow | undefined> {
  const { rows } = await db.query<StateRow>({
    name: 'analytics_conversation_lock',
    text: `SELECT ${STATE_COLUMNS} FROM analytics_conversations WHERE org_id = $1 AND conversation_id = $2 FOR UPDATE`,
    values: [orgId, conversationId],
  });
  return rows[0] && toConversationRow(rows[0]);
}

/** A conversation's new state, to write. */
export interface ConversationWrite extends ConversationRow {
  conversationId: string;
}

/** The state columns as arrays, $2.. of the statements below. */
const stateArrays = (rows: ConversationWrite[]) => [
  rows.map((r) => r.conversationId),
  rows.map((r) => new Date(r.last.at)),
  rows.map((r) => r.last.kind),
  rows.map((r) => r.last.id),
  rows.map((r) => date(r.state.episodeStart)),
  rows.map((r) => date(r.state.turnStart)),
  rows.map((r) => r.state.episodeReplied),
];
const STATE_UNNEST = `unnest($2::uuid[], $3::timestamptz[], $4::smallint[], $5::uuid[], $6::timestamptz[], $7::timestamptz[], $8::boolean[])`;

/**
 * First items of conversations: creates their rows in one statement, in the order given (the caller sorts by
 * id). Returns the ids created; one left out was created first by a concurrent transaction (this one waited for
 * it) and must be locked and read instead.
 */
export async function createConversations(db: Queryable, orgId: string, rows: ConversationWrite[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const res = await db.query<{ conversation_id: string }>({
    name: 'analytics_conversations_insert',
    text: `INSERT INTO analytics_conversations (org_id, ${STATE_COLUMNS})
           SELECT $1, c.conversation_id, c.last_at, c.last_kind, c.last_item, c.episode_start, c.turn_start, c.episode_replied
           FROM ${STATE_UNNEST} WITH ORDINALITY AS c(${STATE_COLUMNS}, n)
           ORDER BY c.n
           ON CONFLICT (org_id, conversation_id) DO NOTHING RETURNING conversation_id`,
    values: [orgId, ...stateArrays(rows)],
  });
  return new Set(res.rows.map((r) => r.conversation_id));
}

/** Writes the new states of conversations this transaction has locked (each id once), in one statement. */
export async function saveConversations(db: Queryable, orgId: string, rows: ConversationWrite[]) {
  if (rows.length === 0) return;
  await db.query({
    name: 'analytics_conversations_update',
    text: `UPDATE analytics_conversations AS t
           SET last_at = c.last_at, last_kind = c.last_kind, last_item = c.last_item,
               episode_start = c.episode_start, turn_start = c.turn_start, episode_replied = c.episode_replied
           FROM ${STATE_UNNEST} AS c(${STATE_COLUMNS})
           WHERE t.org_id = $1 AND t.conversation_id = c.conversation_id`,
    values: [orgId, ...stateArrays(rows)],
  });
}

/** Every item of the conversation, in replay order (see compareItems). */
export async function conversationItems(db: Queryable, orgId: string, conversationId: string): Promise<Item[]> {
  const { rows } = await db.query<{ item_id: string; at: Date; kind: ItemKind; user_id: string | null }>({
    name: 'analytics_conversation_items',
    text: `SELECT item_id, at, kind, user_id FROM analytics_items WHERE org_id = $1 AND conversation_id = $2
           ORDER BY at, kind, item_id`,
    values: [orgId, conversationId],
  });
  return rows.map((r) => ({ id: r.item_id, at: r.at.getTime(), kind: r.kind, userId: r.user_id }));
}

export interface StoredDuration extends Duration {
  ms: number;
  bucket: number;
}

const KIND_CODE = { response: 1, resolution: 2 } as const;

function toDuration(r: {
  kind: number;
  first: boolean;
  started_at: Date;
  ended_at: Date;
  ms: number;
  bucket: number;
  user_id: string | null;
}): StoredDuration {
  return {
    kind: r.kind === 1 ? 'response' : 'resolution',
    first: r.first,
    startedAt: r.started_at.getTime(),
    endedAt: r.ended_at.getTime(),
    ms: r.ms,
    bucket: r.bucket,
    userId: r.user_id,
  };
}

/** Removes the conversation's durations (before a replay) and returns them, so the aggregates can be taken back. */
export async function deleteDurations(db: Queryable, orgId: string, conversationId: string): Promise<StoredDuration[]> {
  const { rows } = await db.query({
    name: 'analytics_durations_delete',
    text: `DELETE FROM analytics_durations WHERE org_id = $1 AND conversation_id = $2
           RETURNING kind, first, started_at, ended_at, ms, bucket, user_id`,
    values: [orgId, conversationId],
  });
  return rows.map(toDuration);
}

/** Durations of any of the org's conversations, in one statement. */
export async function insertDurations(db: Queryable, orgId: string, ds: (StoredDuration & { conversationId: string })[]) {
  if (ds.length === 0) return;
  await db.query({
    name: 'analytics_durations_insert',
    text: `INSERT INTO analytics_durations (org_id, conversation_id, kind, first, started_at, ended_at, ms, bucket, user_id)
           SELECT $1, * FROM unnest($2::uuid[], $3::smallint[], $4::boolean[], $5::timestamptz[], $6::timestamptz[], $7::bigint[], $8::smallint[], $9::uuid[])`,
    values: [
      orgId,
      ds.map((d) => d.conversationId),
      ds.map((d) => KIND_CODE[d.kind]),
      ds.map((d) => d.first),
      ds.map((d) => new Date(d.startedAt)),
      ds.map((d) => new Date(d.endedAt)),
      ds.map((d) => d.ms),
      ds.map((d) => d.bucket),
      ds.map((d) => d.userId),
    ],
  });
}

export interface HistogramDelta {
  unit: Unit;
  start: string;
  series: number;
  bucket: number;
  n: number;
  sumMs: number;
}

/**
 * Rows are changed in key order (the caller sorts), so two transactions touching the same rows lock them in
 * the same order and cannot deadlock.
 */
export async function addToHistogram(db: Queryable, deltas: Array<HistogramDelta & { orgId: string }>) {
  if (deltas.length === 0) return;
  await db.query({
    name: 'analytics_histogram_add_many',
    text: `INSERT INTO analytics_histogram AS h (org_id, unit, start, series, bucket, n, sum_ms)
           SELECT * FROM unnest($1::uuid[], $2::"char"[], $3::date[], $4::smallint[], $5::smallint[], $6::integer[], $7::bigint[])
           ON CONFLICT (org_id, unit, start, series, bucket) DO UPDATE SET n = h.n + EXCLUDED.n, sum_ms = h.sum_ms + EXCLUDED.sum_ms`,
    values: [
      deltas.map((d) => d.orgId),
      deltas.map((d) => d.unit),
      deltas.map((d) => d.start),
      deltas.map((d) => d.series),
      deltas.map((d) => d.bucket),
      deltas.map((d) => d.n),
      deltas.map((d) => d.sumMs),
    ],
  });
}
