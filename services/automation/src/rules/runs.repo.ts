import { iso, isoOrUndefined, offsetOf, PageRequest, pagination, Queryable } from '@crm/db';
import type { ActionDef } from '../rule-definitions';
import { compile } from './program';

export type RunStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';

export interface RunContext {
  event: { id: string; type: string; occurredAt: string };
  data: unknown;
  /** The contact as crm described it, when it was fetched (to judge conditions or to render a template). */
  contact?: Record<string, unknown>;
  /** Answers of http_request steps by their place in `steps` (steps.<n>.status / steps.<n>.body in templates). */
  answers?: Record<string, { status: number; body: unknown }>;
}

/** One step a run took, as its history shows it. */
export interface RunStep {
  path: string;
  type: string;
  status: 'running' | 'waiting' | 'succeeded' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  error: string | null;
  /** if steps: which way the run went. */
  branch?: 'then' | 'else';
}

export interface RunRow {
  id: string;
  org_id: string;
  rule_id: string;
  event_id: string;
  event_type: string;
  contact_id: string | null;
  conversation_id: string | null;
  /** The trigger type that started the run ('' for runs older than the column). */
  trigger_type: string;
  steps: RunStep[];
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

/** The run statuses the API shows: a queued or retrying run is running, a completed one succeeded. */
const SHOWN: Record<RunStatus, string> = {
  pending: 'running',
  running: 'running',
  waiting: 'waiting',
  completed: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
};
const STORED: Record<string, RunStatus[]> = {
  running: ['pending', 'running'],
  waiting: ['waiting'],
  succeeded: ['completed'],
  failed: ['failed'],
  cancelled: ['cancelled'],
};

function toRun(r: RunRow) {
  return {
    id: r.id,
    ruleId: r.rule_id,
    eventId: r.event_id,
    eventType: r.event_type,
    trigger: r.trigger_type,
    contactId: r.contact_id ?? '',
    conversationId: r.conversation_id ?? '',
    status: SHOWN[r.status],
    steps: r.steps.map((st) => ({
      path: st.path,
      type: st.type,
      status: st.status,
      startedAt: st.startedAt,
      finishedAt: st.finishedAt ?? undefined,
      error: st.error ?? '',
      branch: st.branch ?? '',
    })),
    startedAt: iso(r.created_at),
    // Steps done (a wait under way counts: it was started), of every step the rule's tree has (a run that skipped a
    // branch ends with fewer done).
    actionsDone: r.steps.length ? r.steps.filter((st) => st.status !== 'failed').length : r.next_action,
    totalActions: compile(r.actions).filter((i) => i.kind === 'step').length,
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
  conversationId: string | null;
  triggerType: string;
  context: RunContext;
  actions: ActionDef[];
}

const INSERT = {
  name: 'automation_insert_run_v2',
  text: `INSERT INTO rule_runs (id, org_id, rule_id, event_id, event_type, contact_id, context, actions, status, resume_at, conversation_id, trigger_type)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', now(), $9, $10)
         ON CONFLICT (rule_id, event_id) DO NOTHING`,
};

/** Start a run; a second run of the same rule for the same event is ignored. Returns whether it was new. */
export async function insertRun(db: Queryable, r: NewRun): Promise<boolean> {
  const { rowCount } = await db.query({
    ...INSERT,
    values: [
      r.id,
      r.orgId,
      r.ruleId,
      r.eventId,
      r.eventType,
      r.contactId,
      JSON.stringify(r.context),
      JSON.stringify(r.actions),
      r.conversationId,
      r.triggerType,
    ],
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

/**
 * The timer facility: milliseconds until the next pending/waiting run falls due or a running run's lease ends (its
 * instance died), by the database's clock; null when nothing waits.
 */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>({
    name: 'automation_runs_next_due',
    text: `SELECT EXTRACT(EPOCH FROM (LEAST(
             (SELECT min(resume_at) FROM rule_runs WHERE status IN ('pending', 'waiting')),
             (SELECT min(lease_until) FROM rule_runs WHERE status = 'running')) - now())) * 1000 AS ms`,
  });
  return rows[0]?.ms === null || rows[0]?.ms === undefined ? null : Number(rows[0].ms);
}

/** Wakes every runner: a run was written that falls due earlier than they may be sleeping for. */
export const RUNS_CHANNEL = 'automation_runs';
const notifyRunners = (db: Queryable) => db.query(`SELECT pg_notify('${RUNS_CHANNEL}', '')`);

// Every progress write is conditional on the run still being at the step this worker performed, so a worker that
// lost its lease (and the run) cannot move it back or forward a second time. The steps taken so far are written
// with it: the history costs no write of its own.
const ADVANCE = {
  name: 'automation_advance_run_v2',
  text: `UPDATE rule_runs SET next_action = $5, attempts = 0, error = '', context = COALESCE($4::jsonb, context), steps = $6::jsonb,
           lease_until = now() + $3 * interval '1 millisecond', updated_at = now()
         WHERE id = $1 AND status = 'running' AND next_action = $2`,
};

export async function advance(
  db: Queryable,
  id: string,
  done: number,
  next: number,
  steps: RunStep[],
  leaseMs: number,
  context?: RunContext,
): Promise<boolean> {
  const { rowCount } = await db.query({
    ...ADVANCE,
    values: [id, done, leaseMs, context ? JSON.stringify(context) : null, next, JSON.stringify(steps)],
  });
  return rowCount === 1;
}

export async function startWait(db: Queryable, id: string, index: number, next: number, until: Date, steps: RunStep[]): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE rule_runs SET status = 'waiting', next_action = $4, attempts = 0, error = '', resume_at = $3, steps = $5::jsonb, lease_until = NULL,
       updated_at = now()
     WHERE id = $1 AND status = 'running' AND next_action = $2`,
    [id, index, until, next, JSON.stringify(steps)],
  );
  // Other instances may be asleep until later than this: the one that is free when it falls due takes it.
  if (rowCount) await notifyRunners(db);
}

export async function retryLater(db: Queryable, id: string, index: number, at: Date, error: string): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE rule_runs SET status = 'pending', attempts = attempts + 1, error = $4, resume_at = $3, lease_until = NULL, updated_at = now()
     WHERE id = $1 AND status = 'running' AND next_action = $2`,
    [id, index, at, error],
  );
  if (rowCount) await notifyRunners(db);
}

export async function finish(
  db: Queryable,
  id: string,
  status: 'completed' | 'failed' | 'cancelled',
  error = '',
  failedAttempt = false,
  steps?: RunStep[],
): Promise<void> {
  await db.query(
    `UPDATE rule_runs SET status = $2, error = $3, attempts = attempts + $4, resume_at = NULL, lease_until = NULL, finished_at = now(),
       steps = COALESCE($5::jsonb, steps), updated_at = now()
     WHERE id = $1 AND status = 'running'`,
    [id, status, error, failedAttempt ? 1 : 0, steps ? JSON.stringify(steps) : null],
  );
}

export async function listRuns(db: Queryable, orgId: string, ruleId: string, page: PageRequest, status?: string) {
  const args: unknown[] = [orgId, ruleId];
  const where = ['org_id = $1', 'rule_id = $2'];
  if (status) where.push(`status = ANY($${args.push(STORED[status] ?? [status])})`);
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

export async function getRun(db: Queryable, orgId: string, id: string) {
  const { rows } = await db.query<RunRow>('SELECT * FROM rule_runs WHERE org_id = $1 AND id = $2', [orgId, id]);
  return rows[0] ? toRun(rows[0]) : undefined;
}

/**
 * The run-log sweep (timer facility): milliseconds until the oldest finished run passes the retention, null when no
 * run is finished.
 */
export async function nextSweepInMs(db: Queryable, retentionDays: number): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>(
    `SELECT EXTRACT(EPOCH FROM (min(finished_at) + $1 * interval '1 day' - now())) * 1000 AS ms FROM rule_runs WHERE finished_at IS NOT NULL`,
    [retentionDays],
  );
  return rows[0]?.ms === null || rows[0]?.ms === undefined ? null : Number(rows[0].ms);
}

/** Finished runs past the retention are removed, a batch at a time (SKIP LOCKED: instances share the sweep). */
export async function sweepFinished(db: Queryable, retentionDays: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM rule_runs WHERE id IN (
       SELECT id FROM rule_runs WHERE finished_at < now() - $1 * interval '1 day' ORDER BY finished_at LIMIT 5000 FOR UPDATE SKIP LOCKED)`,
    [retentionDays],
  );
  return rowCount ?? 0;
}
