import { iso, isoOrUndefined, Queryable } from '@crm/db';
import type { ReportSpec } from './report-request';

/** NOTIFY channel a new report is announced on (the worker LISTENs; delivered when the insert commits). */
export const REPORTS_CHANNEL = 'crm_reports';

export interface ReportRow {
  id: string;
  org_id: string;
  name: string;
  request: ReportSpec;
  status: 'generating' | 'ready' | 'failed';
  error: string | null;
  row_count: number | null;
  created_by: string | null;
  created_at: Date;
  completed_at: Date | null;
}

/** Everything but the CSV, which only the download reads. */
const COLUMNS = 'id, org_id, name, request, status, error, row_count, created_by, created_at, completed_at';

export function toReport(r: ReportRow) {
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    createdAt: iso(r.created_at),
    completedAt: isoOrUndefined(r.completed_at),
    error: r.error ?? undefined,
    rowCount: r.row_count ?? undefined,
    metrics: r.request.metrics,
    dimensions: r.request.dimensions,
    dateFrom: r.request.dateFrom,
    dateTo: r.request.dateTo,
    filtersJson: JSON.stringify(r.request.filters),
    createdBy: r.created_by ?? undefined,
  };
}

export async function insertReport(
  db: Queryable,
  r: { id: string; orgId: string; name: string; spec: ReportSpec; createdBy: string | null },
): Promise<ReportRow> {
  const { rows } = await db.query<ReportRow>({
    name: 'crm_report_insert',
    text: `INSERT INTO reports (id, org_id, name, request, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    values: [r.id, r.orgId, r.name, JSON.stringify(r.spec), r.createdBy],
  });
  await db.query(`NOTIFY ${REPORTS_CHANNEL}`);
  return rows[0];
}

export async function findReport(db: Queryable, orgId: string, id: string): Promise<ReportRow | undefined> {
  const { rows } = await db.query<ReportRow>({
    name: 'crm_report_by_id',
    text: `SELECT ${COLUMNS} FROM reports WHERE id = $1 AND org_id = $2`,
    values: [id, orgId],
  });
  return rows[0];
}

export async function reportCsv(db: Queryable, orgId: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ csv: string | null }>({
    name: 'crm_report_csv',
    text: 'SELECT csv FROM reports WHERE id = $1 AND org_id = $2',
    values: [id, orgId],
  });
  return rows[0]?.csv ?? undefined;
}

export async function listReports(db: Queryable, orgId: string, limit: number, offset: number): Promise<{ rows: ReportRow[]; total: number }> {
  const [page, count] = await Promise.all([
    db.query<ReportRow>({
      name: 'crm_reports_page',
      text: `SELECT ${COLUMNS} FROM reports WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      values: [orgId, limit, offset],
    }),
    db.query<{ n: number }>({ name: 'crm_reports_count', text: 'SELECT count(*)::int AS n FROM reports WHERE org_id = $1', values: [orgId] }),
  ]);
  return { rows: page.rows, total: count.rows[0].n };
}

export interface ClaimedReport {
  id: string;
  org_id: string;
  request: ReportSpec;
  /** Claims so far, this one included; also the claim's token (a later claim makes this one's writes no-ops). */
  attempts: number;
}

/**
 * Take up to `limit` reports that are generating and not held by a live lease, oldest first. SKIP LOCKED:
 * instances claiming at once take different rows; the lease keeps them taken after this statement.
 */
export async function claimReports(db: Queryable, limit: number, leaseMs: number): Promise<ClaimedReport[]> {
  const { rows } = await db.query<ClaimedReport>({
    name: 'crm_reports_claim',
    text: `UPDATE reports r SET lease_until = now() + make_interval(secs => $2::double precision / 1000), attempts = r.attempts + 1
           FROM (SELECT id FROM reports
                 WHERE status = 'generating' AND (lease_until IS NULL OR lease_until < now())
                 ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
           WHERE r.id = due.id
           RETURNING r.id, r.org_id, r.request, r.attempts`,
    values: [limit, leaseMs],
  });
  return rows;
}

/** Writes only while this claim still holds the report (same attempt, still generating). */
export async function completeReport(db: Queryable, c: ClaimedReport, csv: string, rowCount: number): Promise<boolean> {
  const res = await db.query({
    name: 'crm_report_complete',
    text: `UPDATE reports SET status = 'ready', csv = $3, row_count = $4, completed_at = now(), lease_until = NULL
           WHERE id = $1 AND attempts = $2 AND status = 'generating'`,
    values: [c.id, c.attempts, csv, rowCount],
  });
  return (res.rowCount ?? 0) > 0;
}

export async function failReport(db: Queryable, c: ClaimedReport, error: string): Promise<boolean> {
  const res = await db.query({
    name: 'crm_report_fail',
    text: `UPDATE reports SET status = 'failed', error = $3, completed_at = now(), lease_until = NULL
           WHERE id = $1 AND attempts = $2 AND status = 'generating'`,
    values: [c.id, c.attempts, error],
  });
  return (res.rowCount ?? 0) > 0;
}

/**
 * Hand the report back: claimable again after `delayMs`. `uncounted` (a clean shutdown, not the report's
 * fault) gives the attempt back too.
 */
export async function releaseReport(db: Queryable, c: ClaimedReport, delayMs: number, uncounted = false): Promise<void> {
  await db.query({
    name: 'crm_report_release',
    text: `UPDATE reports SET lease_until = now() + make_interval(secs => $3::double precision / 1000),
                              attempts = attempts - CASE WHEN $4::boolean THEN 1 ELSE 0 END
           WHERE id = $1 AND attempts = $2 AND status = 'generating'`,
    values: [c.id, c.attempts, delayMs, uncounted],
  });
}
