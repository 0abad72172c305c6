import type { PoolClient, Queryable } from '@crm/db';
import type { AnalyticsMergeRecord } from '../analytics';
import type { JsonRow } from './merge-fields';

/**
 * The tables whose rows belong to a contact and move with it on a merge (and back on undo), with the key that
 * names a row. Conversations are messaging's: it moves them itself on contact.merged.
 */
export const MOVED_TABLES = {
  contact_notes: 'id',
  appointments: 'id',
  contact_activities: 'id',
  contact_friends: 'id',
  socialnet_lead_links: 'lead_id',
  // The tasks module's (a merge removes the source contact, which would otherwise leave its tasks without one).
  tasks: 'id',
  // crm's projection of messaging's conversations (inbox visibility): follows the conversations messaging moves.
  conversation_owners: 'conversation_id',
} as const;
export type MovedTable = keyof typeof MOVED_TABLES;
export type MovedIds = Partial<Record<MovedTable, string[]>>;

/** Rows that cannot move to the target (one scoring state per contact; facts keyed by contact), kept for undo. */
export const KEPT_TABLES = ['contact_score_facts', 'contact_score_state'] as const;
export type KeptRows = Partial<Record<(typeof KEPT_TABLES)[number], JsonRow[]>>;

export interface MergeRow {
  id: string;
  org_id: string;
  target_id: string;
  source_id: string;
  source_row: JsonRow;
  target_before: JsonRow;
  target_after: JsonRow;
  moved: MovedIds;
  kept: KeptRows;
  /** The analytics the merge folded together (null for merges made before it did). */
  analytics: AnalyticsMergeRecord | null;
  merged_by: string | null;
  merged_at: Date;
  undone_at: Date | null;
  undoable_until: Date;
  expired: boolean;
}

/** How long a merge can be undone. */
export const UNDO_WINDOW_DAYS = 30;

/** Move the rows of `from` in one table to `to`; returns the moved keys. Appointments count as changed. */
export async function moveAll(db: Queryable, table: MovedTable, orgId: string, from: string, to: string): Promise<string[]> {
  const key = MOVED_TABLES[table];
  const touch = table === 'appointments' ? ', updated_at = now()' : '';
  const { rows } = await db.query<{ key: string }>(
    `UPDATE ${table} SET contact_id = $3${touch} WHERE org_id = $1 AND contact_id = $2 RETURNING ${key}::text AS key`,
    [orgId, from, to],
  );
  return rows.map((r) => r.key);
}

/** Move back the listed rows that still exist and still belong to `from`; returns the keys moved. */
export async function moveListed(db: Queryable, table: MovedTable, orgId: string, keys: string[], from: string, to: string): Promise<string[]> {
  if (keys.length === 0) return [];
  const key = MOVED_TABLES[table];
  const touch = table === 'appointments' ? ', updated_at = now()' : '';
  const { rows } = await db.query<{ key: string }>(
    `UPDATE ${table} SET contact_id = $4${touch} WHERE org_id = $1 AND contact_id = $3 AND ${key}::text = ANY($2::text[]) RETURNING ${key}::text AS key`,
    [orgId, keys, from, to],
  );
  return rows.map((r) => r.key);
}

export async function keptRows(db: Queryable, orgId: string, contactId: string): Promise<KeptRows> {
  const out: KeptRows = {};
  for (const table of KEPT_TABLES) {
    const { rows } = await db.query<{ row: JsonRow }>(`SELECT to_jsonb(t) AS row FROM ${table} t WHERE org_id = $1 AND contact_id = $2`, [
      orgId,
      contactId,
    ]);
    if (rows.length) out[table] = rows.map((r) => r.row);
  }
  return out;
}

export async function restoreKeptRows(db: Queryable, kept: KeptRows): Promise<void> {
  for (const table of KEPT_TABLES) {
    const rows = kept[table];
    if (!rows?.length) continue;
    await db.query(`INSERT INTO ${table} SELECT * FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb) ON CONFLICT DO NOTHING`, [
      JSON.stringify(rows),
    ]);
  }
}

export interface NewMerge {
  id: string;
  orgId: string;
  targetId: string;
  sourceId: string;
  sourceRow: JsonRow;
  targetBefore: JsonRow;
  targetAfter: JsonRow;
  moved: MovedIds;
  kept: KeptRows;
  analytics: AnalyticsMergeRecord;
  mergedBy: string | null;
}

const MERGE_COLUMNS = `id, org_id, target_id, source_id, source_row, target_before, target_after, moved, kept, analytics, merged_by, merged_at, undone_at,
  merged_at + interval '${UNDO_WINDOW_DAYS} days' AS undoable_until, merged_at + interval '${UNDO_WINDOW_DAYS} days' < now() AS expired`;

export async function insertMerge(db: Queryable, m: NewMerge): Promise<MergeRow> {
  const { rows } = await db.query<MergeRow>(
    `INSERT INTO contact_merges (id, org_id, target_id, source_id, source_row, target_before, target_after, moved, kept, analytics, merged_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${MERGE_COLUMNS}`,
    [
      m.id,
      m.orgId,
      m.targetId,
      m.sourceId,
      ...[m.sourceRow, m.targetBefore, m.targetAfter, m.moved, m.kept, m.analytics].map((v) => JSON.stringify(v)),
      m.mergedBy,
    ],
  );
  return rows[0];
}

export async function lockMerge(db: PoolClient, orgId: string, id: string): Promise<MergeRow | undefined> {
  const { rows } = await db.query<MergeRow>(`SELECT ${MERGE_COLUMNS} FROM contact_merges WHERE org_id = $1 AND id = $2 FOR UPDATE`, [orgId, id]);
  return rows[0];
}

/** The merge (not undone) that took `contactId` away as its source, if any. */
export async function activeMergeOfSource(db: Queryable, orgId: string, contactId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM contact_merges WHERE org_id = $1 AND source_id = $2 AND undone_at IS NULL ORDER BY merged_at DESC LIMIT 1',
    [orgId, contactId],
  );
  return rows[0]?.id;
}

export async function markUndone(db: Queryable, orgId: string, id: string, by: string | null): Promise<MergeRow> {
  const { rows } = await db.query<MergeRow>(
    `UPDATE contact_merges SET undone_at = now(), undone_by = $3 WHERE org_id = $1 AND id = $2 RETURNING ${MERGE_COLUMNS}`,
    [orgId, id, by],
  );
  return rows[0];
}
