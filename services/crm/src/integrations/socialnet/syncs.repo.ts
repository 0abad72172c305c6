import { iso, isoOrUndefined, Queryable } from '@crm/db';

/** NOTIFY channel that wakes the sync worker when a sync is requested (per database: one name is enough). */
export const SYNC_CHANNEL = 'crm_socialnet_syncs';

export type SyncStatus = 'processing' | 'completed' | 'failed';

export interface SkippedLead {
  leadId: string;
  reason: string;
}

export interface SyncRow {
  id: string;
  org_id: string;
  integration_id: string;
  page_id: string;
  form_id: string;
  status: SyncStatus;
  estimated_count: number;
  cursor: string | null;
  created_count: number;
  linked_count: number;
  existing_count: number;
  skipped_count: number;
  skipped_leads: SkippedLead[];
  attempts: number;
  worker_id: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

const COLUMNS = `id, org_id, integration_id, page_id, form_id, status, estimated_count, cursor, created_count, linked_count,
  existing_count, skipped_count, skipped_leads, attempts, worker_id, error_code, error_message, created_at, updated_at, completed_at`;

export function toLeadSync(r: SyncRow, started = true) {
  return {
    id: r.id,
    integrationId: r.integration_id,
    pageId: r.page_id,
    formId: r.form_id,
    status: r.status,
    estimatedCount: r.estimated_count,
    counts: { created: r.created_count, linked: r.linked_count, alreadyImported: r.existing_count, skipped: r.skipped_count },
    skippedLeads: r.skipped_leads ?? [],
    errorCode: r.error_code ?? undefined,
    errorMessage: r.error_message ?? undefined,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    completedAt: isoOrUndefined(r.completed_at),
    started,
  };
}

/**
 * A new processing sync, and a NOTIFY in the same statement (delivered at commit). Undefined when a sync
 * of that form is already processing (the partial unique index).
 */
export async function insertSync(
  db: Queryable,
  s: { id: string; orgId: string; integrationId: string; pageId: string; formId: string; estimatedCount: number; requestedBy: string | null },
): Promise<SyncRow | undefined> {
  const { rows } = await db.query<SyncRow>({
    name: 'crm_sn_sync_insert',
    text: `WITH ins AS (
             INSERT INTO socialnet_syncs (id, org_id, integration_id, page_id, form_id, estimated_count, requested_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (org_id, page_id, form_id) WHERE status = 'processing' DO NOTHING
             RETURNING ${COLUMNS})
           SELECT ins.*, pg_notify('${SYNC_CHANNEL}', '') FROM ins`,
    values: [s.id, s.orgId, s.integrationId, s.pageId, s.formId, s.estimatedCount, s.requestedBy],
  });
  return rows[0];
}

export async function runningSync(db: Queryable, orgId: string, pageId: string, formId: string): Promise<SyncRow | undefined> {
  const { rows } = await db.query<SyncRow>({
    name: 'crm_sn_sync_running',
    text: `SELECT ${COLUMNS} FROM socialnet_syncs WHERE org_id = $1 AND page_id = $2 AND form_id = $3 AND status = 'processing'`,
    values: [orgId, pageId, formId],
  });
  return rows[0];
}

export async function findSync(db: Queryable, orgId: string, id: string): Promise<SyncRow | undefined> {
  const { rows } = await db.query<SyncRow>({
    name: 'crm_sn_sync_by_id',
    text: `SELECT ${COLUMNS} FROM socialnet_syncs WHERE id = $1 AND org_id = $2`,
    values: [id, orgId],
  });
  return rows[0];
}

/**
 * Claim due syncs for this worker: processing, due, and not leased by a live worker. SKIP LOCKED lets
 * several crm instances share the work; the lease lets another take over a sync whose worker died.
 */
export async function claimDue(db: Queryable, workerId: string, limit: number, leaseMs: number): Promise<SyncRow[]> {
  const { rows } = await db.query<SyncRow>({
    name: 'crm_sn_sync_claim',
    text: `UPDATE socialnet_syncs SET worker_id = $1, lease_until = now() + $3 * interval '1 millisecond'
           WHERE id IN (
             SELECT id FROM socialnet_syncs
             WHERE status = 'processing' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
             ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING ${COLUMNS}`,
    values: [workerId, limit, leaseMs],
  });
  return rows;
}

/** The sync, locked for a page's transaction, only while this worker still holds it. */
export async function lockOwned(db: Queryable, id: string, workerId: string): Promise<SyncRow | undefined> {
  const { rows } = await db.query<SyncRow>({
    name: 'crm_sn_sync_lock_owned',
    text: `SELECT ${COLUMNS} FROM socialnet_syncs WHERE id = $1 AND status = 'processing' AND worker_id = $2 FOR UPDATE`,
    values: [id, workerId],
  });
  return rows[0];
}

export interface Progress {
  cursor: string | null;
  created: number;
  linked: number;
  existing: number;
  skipped: number;
  skippedLeads: SkippedLead[];
  done: boolean;
}

/** A committed page: counts added, cursor moved, lease renewed, failures forgotten; completed on the last page. */
export async function saveProgress(db: Queryable, id: string, p: Progress, leaseMs: number): Promise<void> {
  await db.query({
    name: 'crm_sn_sync_progress',
    text: `UPDATE socialnet_syncs SET cursor = $2, created_count = created_count + $3, linked_count = linked_count + $4,
             existing_count = existing_count + $5, skipped_count = skipped_count + $6, skipped_leads = $7::jsonb,
             attempts = 0, error_code = NULL, error_message = NULL, updated_at = now(),
             status = CASE WHEN $8 THEN 'completed' ELSE status END,
             completed_at = CASE WHEN $8 THEN now() ELSE completed_at END,
             lease_until = CASE WHEN $8 THEN NULL ELSE now() + $9 * interval '1 millisecond' END
           WHERE id = $1`,
    values: [id, p.cursor, p.created, p.linked, p.existing, p.skipped, JSON.stringify(p.skippedLeads), p.done, leaseMs],
  });
}

export async function markFailed(db: Queryable, id: string, workerId: string, code: string, message: string): Promise<boolean> {
  const res = await db.query({
    name: 'crm_sn_sync_failed',
    text: `UPDATE socialnet_syncs SET status = 'failed', error_code = $3, error_message = $4, completed_at = now(), updated_at = now(),
             lease_until = NULL
           WHERE id = $1 AND worker_id = $2 AND status = 'processing'`,
    values: [id, workerId, code, message],
  });
  return (res.rowCount ?? 0) > 0;
}

/** A failed attempt that is worth repeating: released with the error shown, due again after `delayMs`. */
export async function scheduleRetry(
  db: Queryable,
  id: string,
  workerId: string,
  code: string,
  message: string,
  delayMs: number,
): Promise<number | undefined> {
  const { rows } = await db.query<{ attempts: number }>({
    name: 'crm_sn_sync_retry',
    text: `UPDATE socialnet_syncs SET attempts = attempts + 1, error_code = $3, error_message = $4, updated_at = now(),
             next_attempt_at = now() + $5 * interval '1 millisecond', lease_until = NULL, worker_id = NULL
           WHERE id = $1 AND worker_id = $2 AND status = 'processing' RETURNING attempts`,
    values: [id, workerId, code, message, delayMs],
  });
  return rows[0]?.attempts;
}

/** On shutdown: what this worker held is free to claim at once (by the next start or another instance). */
export async function releaseAll(db: Queryable, workerId: string): Promise<void> {
  await db.query({
    name: 'crm_sn_sync_release',
    text: `UPDATE socialnet_syncs SET lease_until = NULL, worker_id = NULL WHERE worker_id = $1 AND status = 'processing'`,
    values: [workerId],
  });
}

/** Fail the integration's running syncs (it was disconnected); their worker notices at its next page. */
export async function failRunningOf(db: Queryable, orgId: string, integrationId: string, code: string, message: string): Promise<void> {
  await db.query({
    name: 'crm_sn_sync_fail_running',
    text: `UPDATE socialnet_syncs SET status = 'failed', error_code = $3, error_message = $4, completed_at = now(), updated_at = now(),
             lease_until = NULL
           WHERE org_id = $1 AND integration_id = $2 AND status = 'processing'`,
    values: [orgId, integrationId, code, message],
  });
}

// ------------------------------------------------------------------------------------------------ lead links

/** Which of these lead ids the org has already imported. */
export async function linkedLeadIds(db: Queryable, orgId: string, leadIds: string[]): Promise<Set<string>> {
  if (leadIds.length === 0) return new Set();
  const { rows } = await db.query<{ lead_id: string }>({
    name: 'crm_sn_links_existing',
    text: 'SELECT lead_id FROM socialnet_lead_links WHERE org_id = $1 AND lead_id = ANY($2::text[])',
    values: [orgId, leadIds],
  });
  return new Set(rows.map((r) => r.lead_id));
}

/**
 * Claim a lead for the contact it becomes (or is linked to), before that contact is written. False when the
 * lead was imported already (a concurrent sync committed it first): the primary key makes a lead import
 * happen at most once.
 */
export async function insertLink(
  db: Queryable,
  l: { orgId: string; leadId: string; pageId: string; formId: string; contactId: string; outcome: 'created' | 'linked'; syncId: string },
): Promise<boolean> {
  const res = await db.query({
    name: 'crm_sn_link_insert',
    text: `INSERT INTO socialnet_lead_links (org_id, lead_id, page_id, form_id, contact_id, outcome, sync_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (org_id, lead_id) DO NOTHING`,
    values: [l.orgId, l.leadId, l.pageId, l.formId, l.contactId, l.outcome, l.syncId],
  });
  return (res.rowCount ?? 0) > 0;
}
