import { iso, isoOrUndefined, offsetOf, PageRequest, pagination, Queryable } from '@crm/db';
import type { ActionDef } from '../domain/definition';

export type RunStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';

export interface RunContext {
  event: { id: string; type: string; occurredAt: string };
  data: unknown;
  /** The contact as crm described it, when it was fetched (to judge conditions or to render a template). */
  contact?: Record<string, unknown>;
}

export interface RunRow {
  id: string;
  org_id: string;
  rule_id: string;
  event_id: string;
  event_type: string;
  contact_id: string | null;
  context: RunContext;
  actions: ActionDef[];
  next_action: number;
  status: RunStatus;
  attempts: number;
  error: string;
  resume_at: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

function toRun(r: RunRow) {
  return {
    id: r.id,
    ruleId: r.rule_id,
    eventId: r.event_id,
    eventType: r.event_type,
    contactId: r.contact_id ?? '',
    status: r.status,
    actionsDone: r.next_action,
    totalActions: r.actions.length,
    error: r.error,
    attempts: r.attempts,
    resumeAt: r.status === 'pending' || r.status === 'waiting' ? isoOrUndefined(r.resume_at) : undefined,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    finishedAt: isoOrUndefined(r.finished_at),
  };
}

export interface NewRun {
  id: string;
  orgId: string;
  ruleId: string;
  eventId: string;
  eventType: string;
  contactId: string | null;
  context: RunContext;
  actions: ActionDef[];
}

const INSERT = {
  name: 'automation_insert_run',
  text: `INSERT INTO rule_runs (id, org_id, rule_id, event_id, event_type, contact_id, context, actions, status, resume_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', now())
         ON CONFLICT (rule_id, event_id) DO NOTHING`,
};

/** Start a run; a second run of the same rule for the same event is ignored. Returns whether it was new. */
export async function insertRun(db: Queryable, r: NewRun): Promise<boolean> {
  const { rowCount } = await db.query({
    ...INSERT,
    values: [r.id, r.orgId, r.ruleId, r.eventId, r.eventType, r.contactId, JSON.stringify(r.context), JSON.stringify(r.actions)],
  });
  return rowCount === 1;
}

// Due: pending or waiting runs whose time has come, and running ones whose lease ran out (their instance died).
const CLAIM = {
  name: 'automation_claim_runs',
  text: `UPDATE rule_runs r SET status = 'running', lease_until = now() + $2 * interval '1 millisecond', updated_at = now()
         WHERE r.id IN (
           SELECT id FROM rule_runs
           WHERE (status IN ('pending', 'waiting') AND resume_at <= now()) OR (status = 'running' AND lease_until < now())
           ORDER BY resume_at NULLS FIRST, id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING r.*`,
};

export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<RunRow[]> {
  const { rows } = await db.query<RunRow>({ ...CLAIM, values: [limit, leaseMs] });
  return rows;
}

/** When the next pending/waiting run falls due, so the runner can sleep exactly that long. */
export async function nextDueAt(db: Queryable): Promise<Date | undefined> {
  const { rows } = await db.query<{ at: Date | null }>(`SELECT min(resume_at) AS at FROM rule_runs WHERE status IN ('pending', 'waiting')`);
  return rows[0]?.at ?? undefined;
}

// Every progress write is conditional on the run still being at the action this worker performed, so a
// worker that lost its lease (and the run) cannot move it back or forward a second time.
const ADVANCE = {
  name: 'automation_advance_run',
  text: `UPDATE rule_runs SET next_action = $2 + 1, attempts = 0, error = '', context = COALESCE($4::jsonb, context),
           lease_until = now() + $3 * interval '1 millisecond', updated_at = now()
         WHERE id = $1 AND status = 'running' AND next_action = $2`,
};

export async function advance(db: Queryable, id: string, done: number, leaseMs: number, context?: RunContext): Promise<boolean> {
  const { rowCount } = await db.query({ ...ADVANCE, values: [id, done, leaseMs, context ? JSON.stringify(context) : null] });
  return rowCount === 1;
}

export async function startWait(db: Queryable, id: string, index: number, until: Date): Promise<void> {
  await db.query(
    `UPDATE rule_runs SET status = 'waiting', next_action = $2 + 1, attempts = 0, error = '', resume_at = $3, lease_until = NULL, updated_at = now()
     WHERE id = $1 AND status = 'running' AND next_action = $2`,
    [id, index, until],
  );
}

export async function retryLater(db: Queryable, id: string, index: number, at: Date, error: string): Promise<void> {
  await db.query(
    `UPDATE rule_runs SET status = 'pending', attempts = attempts + 1, error = $4, resume_at = $3, lease_until = NULL, updated_at = now()
     WHERE id = $1 AND status = 'running' AND next_action = $2`,
    [id, index, at, error],
  );
}

export async function finish(
  db: Queryable,
  id: string,
  status: 'completed' | 'failed' | 'cancelled',
  error = '',
  failedAttempt = false,
): Promise<void> {
  await db.query(
    `UPDATE rule_runs SET status = $2, error = $3, attempts = attempts + $4, resume_at = NULL, lease_until = NULL, finished_at = now(), updated_at = now()
     WHERE id = $1 AND status = 'running'`,
    [id, status, error, failedAttempt ? 1 : 0],
  );
}

export async function listRuns(db: Queryable, orgId: string, ruleId: string, page: PageRequest, status?: string) {
  const args: unknown[] = [orgId, ruleId];
  const where = ['org_id = $1', 'rule_id = $2'];
  if (status) where.push(`status = $${args.push(status)}`);
  const cond = where.join(' AND ');
  const [list, count] = await Promise.all([
    db.query<RunRow>(`SELECT * FROM rule_runs WHERE ${cond} ORDER BY created_at DESC, id DESC LIMIT $${args.length + 1} OFFSET $${args.length + 2}`, [
      ...args,
      page.limit,
      offsetOf(page),
    ]),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM rule_runs WHERE ${cond}`, args),
  ]);
  return { data: list.rows.map(toRun), pagination: pagination(page, count.rows[0].n) };
}

/** Finished runs older than the retention are removed from the log, a batch at a time. */
export async function pruneFinished(db: Queryable, olderThanDays: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM rule_runs WHERE id IN (
       SELECT id FROM rule_runs WHERE finished_at < now() - $1 * interval '1 day' LIMIT 5000 FOR UPDATE SKIP LOCKED)`,
    [olderThanDays],
  );
  return rowCount ?? 0;
}
