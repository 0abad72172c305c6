import type { Queryable } from '@crm/db';

/** What automation moved for one crm contact merge (contact_merges.moved). */
export interface MergeMoves {
  /** rule_runs ids repointed to the target. */
  runs: string[];
  /** Campaigns whose recipient row of the source now names the target. */
  recipients: string[];
  /** Pending recipient rows the merge marked skipped (the campaign reaches the person through the other row). */
  setAside: SetAside[];
}

export interface SetAside {
  campaignId: string;
  contactId: string;
  /** The row's error before, and the one the merge wrote (undo restores only a row still showing it). */
  error: string;
  marker: string;
}

export interface MergeIds {
  mergeId: string;
  orgId: string;
  targetId: string;
  sourceId: string;
}

/**
 * Record that the merge is being applied; false when it was already (a redelivery) or its undo came first.
 * Concurrent deliveries of one merge wait here for each other (the primary key).
 */
export async function claimMerge(db: Queryable, m: MergeIds): Promise<boolean> {
  const res = await db.query(
    `INSERT INTO contact_merges (merge_id, org_id, target_id, source_id, merged_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (merge_id) DO NOTHING`,
    [m.mergeId, m.orgId, m.targetId, m.sourceId],
  );
  return (res.rowCount ?? 0) > 0;
}

export async function saveMoves(db: Queryable, orgId: string, mergeId: string, moves: MergeMoves): Promise<void> {
  await db.query('UPDATE contact_merges SET moved = $3 WHERE org_id = $1 AND merge_id = $2', [orgId, mergeId, JSON.stringify(moves)]);
}

/**
 * The moves of a merge to undo, locked; undefined when there is nothing to undo (already undone, another org's
 * id). An undo whose merge has not been seen records the merge as undone, so the merge arriving late moves nothing.
 */
export async function claimUndo(db: Queryable, m: MergeIds): Promise<MergeMoves | undefined> {
  const fresh = await db.query(
    `INSERT INTO contact_merges (merge_id, org_id, target_id, source_id, undone_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (merge_id) DO NOTHING`,
    [m.mergeId, m.orgId, m.targetId, m.sourceId],
  );
  if ((fresh.rowCount ?? 0) > 0) return undefined;
  const { rows } = await db.query<{ moved: Partial<MergeMoves>; undone_at: Date | null }>(
    'SELECT moved, undone_at FROM contact_merges WHERE org_id = $1 AND merge_id = $2 FOR UPDATE',
    [m.orgId, m.mergeId],
  );
  const row = rows[0];
  if (!row || row.undone_at) return undefined;
  return { runs: row.moved.runs ?? [], recipients: row.moved.recipients ?? [], setAside: row.moved.setAside ?? [] };
}

export async function markUndone(db: Queryable, orgId: string, mergeId: string): Promise<void> {
  await db.query('UPDATE contact_merges SET undone_at = now() WHERE org_id = $1 AND merge_id = $2', [orgId, mergeId]);
}

/** Rule runs (any state: the run log shows the contact; a waiting run acts on it later) of `from` → `to`. */
export async function moveRuns(db: Queryable, orgId: string, from: string, to: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('UPDATE rule_runs SET contact_id = $3 WHERE org_id = $1 AND contact_id = $2 RETURNING id', [
    orgId,
    from,
    to,
  ]);
  return rows.map((r) => r.id);
}

export async function moveRunsBack(db: Queryable, orgId: string, ids: string[], from: string, to: string): Promise<void> {
  if (ids.length === 0) return;
  await db.query('UPDATE rule_runs SET contact_id = $4 WHERE org_id = $1 AND id = ANY($2::uuid[]) AND contact_id = $3', [orgId, ids, from, to]);
}

export interface RecipientPair {
  campaign_id: string;
  source_status: string;
  target_status: string;
}

/** Campaigns where both contacts are recipients, both rows locked. */
export async function sharedCampaigns(db: Queryable, orgId: string, sourceId: string, targetId: string): Promise<RecipientPair[]> {
  const { rows } = await db.query<RecipientPair>(
    `SELECT s.campaign_id, s.status AS source_status, t.status AS target_status
     FROM campaign_recipients s JOIN campaign_recipients t ON t.campaign_id = s.campaign_id AND t.org_id = $1 AND t.contact_id = $3
     WHERE s.org_id = $1 AND s.contact_id = $2 ORDER BY s.campaign_id FOR UPDATE OF s, t`,
    [orgId, sourceId, targetId],
  );
  return rows;
}

/**
 * A pending row (locked by sharedCampaigns) becomes skipped with `marker` as its error, counted on its campaign;
 * returns its error before, or undefined when it was not pending.
 */
export async function setAside(db: Queryable, orgId: string, campaignId: string, contactId: string, marker: string): Promise<string | undefined> {
  const { rows } = await db.query<{ error: string }>(
    `WITH old AS (
       SELECT error FROM campaign_recipients WHERE org_id = $1 AND campaign_id = $2 AND contact_id = $3 AND status = 'pending'),
     aside AS (
       UPDATE campaign_recipients SET status = 'skipped', error = $4, updated_at = now()
       WHERE org_id = $1 AND campaign_id = $2 AND contact_id = $3 AND status = 'pending' RETURNING 1),
     counted AS (
       UPDATE campaigns SET skipped_count = skipped_count + (SELECT count(*) FROM aside)::int, updated_at = now() WHERE id = $2 AND org_id = $1)
     SELECT error FROM old`,
    [orgId, campaignId, contactId, marker],
  );
  return rows[0]?.error;
}

/**
 * A set-aside row goes back to pending while it still shows the merge's marker and its campaign can still send
 * (active or paused); a finished or cancelled campaign keeps it skipped.
 */
export async function restoreSetAside(db: Queryable, orgId: string, s: SetAside): Promise<void> {
  await db.query(
    `WITH back AS (
       UPDATE campaign_recipients r SET status = 'pending', error = $5, updated_at = now()
       FROM campaigns c
       WHERE r.org_id = $1 AND r.campaign_id = $2 AND r.contact_id = $3 AND r.status = 'skipped' AND r.error = $4
         AND c.id = r.campaign_id AND c.org_id = $1 AND c.status IN ('active', 'paused')
       RETURNING 1)
     UPDATE campaigns SET skipped_count = skipped_count - (SELECT count(*) FROM back)::int, updated_at = now()
     WHERE id = $2 AND org_id = $1 AND EXISTS (SELECT 1 FROM back)`,
    [orgId, s.campaignId, s.contactId, s.marker, s.error],
  );
}

/**
 * The source's recipient rows in campaigns the target is not in name the target; each keeps the contact id its
 * send key was made with. Returns the campaigns.
 */
export async function moveRecipients(db: Queryable, orgId: string, from: string, to: string): Promise<string[]> {
  const { rows } = await db.query<{ campaign_id: string }>(
    `UPDATE campaign_recipients s SET contact_id = $3, original_contact_id = COALESCE(original_contact_id, contact_id), updated_at = now()
     WHERE org_id = $1 AND contact_id = $2
       AND NOT EXISTS (SELECT 1 FROM campaign_recipients t WHERE t.campaign_id = s.campaign_id AND t.contact_id = $3)
     RETURNING campaign_id`,
    [orgId, from, to],
  );
  return rows.map((r) => r.campaign_id);
}

/** The rows moved by the merge (the target's row in each listed campaign: there is one per campaign) go back. */
export async function moveRecipientsBack(db: Queryable, orgId: string, campaignIds: string[], from: string, to: string): Promise<void> {
  if (campaignIds.length === 0) return;
  await db.query(
    `UPDATE campaign_recipients s SET contact_id = $4, original_contact_id = NULLIF(original_contact_id, $4), updated_at = now()
     WHERE org_id = $1 AND campaign_id = ANY($2::uuid[]) AND contact_id = $3
       AND NOT EXISTS (SELECT 1 FROM campaign_recipients t WHERE t.campaign_id = s.campaign_id AND t.contact_id = $4)`,
    [orgId, campaignIds, from, to],
  );
}
