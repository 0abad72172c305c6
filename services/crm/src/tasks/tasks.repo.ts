import { iso, isoOrUndefined, offsetOf, pagination, type Pool, type Queryable } from '@crm/db';
import { conversationIdVisibleSql, orgLimitsAgentsSql } from '../contacts';

/** The channel the due timer listens on: every write that adds or moves a due time announces it (at commit). */
export const TASKS_DUE_CHANNEL = 'crm_tasks_due';

export interface TaskRow {
  id: string;
  org_id: string;
  title: string;
  notes: string;
  due_at: Date | null;
  status: 'open' | 'done';
  assignee_id: string | null;
  contact_id: string | null;
  conversation_id: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

const FIELDS =
  't.id, t.org_id, t.title, t.notes, t.due_at, t.status, t.assignee_id, t.contact_id, t.conversation_id, t.created_by, t.created_at, t.updated_at, t.completed_at';

/** The task as crm.v1.Task (absent optionals for nulls). */
export function toTask(r: TaskRow) {
  return {
    id: r.id,
    title: r.title,
    notes: r.notes,
    dueAt: isoOrUndefined(r.due_at),
    status: r.status,
    assigneeId: r.assignee_id ?? undefined,
    contactId: r.contact_id ?? undefined,
    conversationId: r.conversation_id ?? undefined,
    createdBy: r.created_by ?? undefined,
    createdAt: iso(r.created_at),
    completedAt: isoOrUndefined(r.completed_at),
    updatedAt: iso(r.updated_at),
  };
}

/** The task as events (and webhooks) carry it: the public shape, nulls spelled out. */
export function toEventTask(r: TaskRow) {
  return {
    id: r.id,
    title: r.title,
    notes: r.notes || null,
    dueAt: r.due_at ? iso(r.due_at) : null,
    status: r.status,
    assigneeId: r.assignee_id,
    contactId: r.contact_id,
    conversationId: r.conversation_id,
    createdBy: r.created_by,
    createdAt: iso(r.created_at),
    completedAt: r.completed_at ? iso(r.completed_at) : null,
  };
}

/**
 * Inbox visibility for tasks, for the agent at `userRef`: the org does not limit its agents, or the task is
 * assigned to or was created by them, or it is on a conversation they can see (the contacts module's rule).
 */
function taskVisibleSql(userRef: string): string {
  return `(NOT ${orgLimitsAgentsSql('t.org_id')} OR t.assignee_id = ${userRef} OR t.created_by = ${userRef}
    OR (t.conversation_id IS NOT NULL AND ${conversationIdVisibleSql('t.conversation_id', 't.org_id', userRef)}))`;
}

export interface NewTask {
  id: string;
  orgId: string;
  title: string;
  notes: string;
  dueAt: Date | null;
  assigneeId: string | null;
  contactId: string | null;
  conversationId: string | null;
  createdBy: string | null;
}

/** Inserts the task; false when a task with this id exists already (a repeated create from a service). */
export async function insertTask(db: Queryable, t: NewTask): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'crm_task_insert',
    text: `INSERT INTO tasks (id, org_id, title, notes, due_at, assignee_id, contact_id, conversation_id, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
    values: [t.id, t.orgId, t.title, t.notes, t.dueAt, t.assigneeId, t.contactId, t.conversationId, t.createdBy],
  });
  if (t.dueAt && rowCount) await announceDue(db);
  return (rowCount ?? 0) > 0;
}

/** The org's task; with `viewer`, only one that agent may see. */
export async function findTask(
  db: Queryable,
  orgId: string,
  id: string,
  opts: { viewer?: string; forUpdate?: boolean } = {},
): Promise<TaskRow | undefined> {
  const visible = opts.viewer ? ` AND ${taskVisibleSql('$3::uuid')}` : '';
  const { rows } = await db.query<TaskRow>({
    name: `crm_task_by_id${opts.viewer ? '_visible' : ''}${opts.forUpdate ? '_lock' : ''}`,
    text: `SELECT ${FIELDS} FROM tasks t WHERE t.id = $1 AND t.org_id = $2${visible}${opts.forUpdate ? ' FOR UPDATE OF t' : ''}`,
    values: opts.viewer ? [id, orgId, opts.viewer] : [id, orgId],
  });
  return rows[0];
}

export interface TaskPatch {
  title?: string;
  notes?: string;
  dueAt?: Date | null;
  status?: 'open' | 'done';
  assigneeId?: string | null;
  contactId?: string | null;
  conversationId?: string | null;
}

const PATCH_COLUMNS: Record<Exclude<keyof TaskPatch, 'status'>, string> = {
  title: 'title',
  notes: 'notes',
  dueAt: 'due_at',
  assigneeId: 'assignee_id',
  contactId: 'contact_id',
  conversationId: 'conversation_id',
};

/**
 * Applies a patch. Done sets completed_at (kept when it was done already), open clears it. A due time that moves
 * is due again (its task.due was for the old time); the timer hears of every change that can make a task due.
 */
export async function updateTask(db: Queryable, orgId: string, id: string, p: TaskPatch): Promise<void> {
  const sets: string[] = [];
  const args: unknown[] = [id, orgId];
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  for (const [key, col] of Object.entries(PATCH_COLUMNS) as [keyof typeof PATCH_COLUMNS, string][]) {
    if (p[key] !== undefined) sets.push(`${col} = ${arg(p[key])}`);
  }
  if (p.dueAt !== undefined) {
    sets.push(`due_fired_at = CASE WHEN due_at IS NOT DISTINCT FROM ${arg(p.dueAt)}::timestamptz THEN due_fired_at END`);
    sets.push('due_lease_until = NULL');
  }
  if (p.status !== undefined) {
    const s = arg(p.status);
    sets.push(`status = ${s}`, `completed_at = CASE WHEN ${s} = 'done' THEN COALESCE(completed_at, now()) END`);
  }
  sets.push('updated_at = now()');
  await db.query(`UPDATE tasks SET ${sets.join(', ')} WHERE id = $1 AND org_id = $2`, args);
  if (p.dueAt !== undefined || p.status === 'open') await announceDue(db);
}

export async function deleteTask(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query({ name: 'crm_task_delete', text: 'DELETE FROM tasks WHERE id = $1 AND org_id = $2', values: [id, orgId] });
}

export interface TaskFilter {
  page: number;
  limit: number;
  assigneeId?: string;
  status?: 'open' | 'done';
  contactId?: string;
  conversationId?: string;
  dueBefore?: Date;
  /** The agent whose inbox visibility limits the list. */
  viewer?: string;
}

/** Soonest due first; tasks without a due time after those with one; then oldest first. */
export async function listTasks(pool: Pool, orgId: string, f: TaskFilter) {
  const where = ['t.org_id = $1'];
  const args: unknown[] = [orgId];
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  if (f.assigneeId) where.push(`t.assignee_id = ${arg(f.assigneeId)}`);
  if (f.status) where.push(`t.status = ${arg(f.status)}`);
  if (f.contactId) where.push(`t.contact_id = ${arg(f.contactId)}`);
  if (f.conversationId) where.push(`t.conversation_id = ${arg(f.conversationId)}`);
  if (f.dueBefore) where.push(`t.due_at < ${arg(f.dueBefore)}`);
  if (f.viewer) where.push(taskVisibleSql(`${arg(f.viewer)}::uuid`));
  const whereSql = where.join(' AND ');
  const [page, count] = await Promise.all([
    pool.query<TaskRow>(
      `SELECT ${FIELDS} FROM tasks t WHERE ${whereSql} ORDER BY t.due_at ASC NULLS LAST, t.created_at, t.id LIMIT ${f.limit} OFFSET ${offsetOf(f)}`,
      args,
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks t WHERE ${whereSql}`, args),
  ]);
  return { data: page.rows.map(toTask), pagination: pagination(f, count.rows[0].n) };
}

// The due timer's queries (due-timer.ts).

/** Wakes the timers of every instance (delivered at commit): a due time was written or moved. */
export async function announceDue(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_notify('${TASKS_DUE_CHANNEL}', '')`);
}

export interface DueTask {
  id: string;
  org_id: string;
  due_at: Date;
}

/** Takes up to `limit` open tasks whose due time came and whose task.due is not raised, under a lease. */
export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<DueTask[]> {
  const { rows } = await db.query<DueTask>({
    name: 'crm_tasks_claim_due',
    text: `UPDATE tasks t SET due_lease_until = now() + $2 * interval '1 millisecond'
           WHERE t.id IN (
             SELECT id FROM tasks
             WHERE status = 'open' AND due_fired_at IS NULL AND due_at IS NOT NULL AND due_at <= now()
               AND (due_lease_until IS NULL OR due_lease_until < now())
             ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
           RETURNING t.id, t.org_id, t.due_at`,
    values: [limit, leaseMs],
  });
  return rows;
}

/**
 * Milliseconds (by the database's clock) until the nearest task falls due: the earliest pending due time not under
 * a live lease, or the earliest live lease's end (its instance may have died). Null when nothing is pending.
 */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>({
    name: 'crm_tasks_next_due',
    text: `SELECT extract(epoch FROM LEAST(
             (SELECT due_at FROM tasks
              WHERE status = 'open' AND due_fired_at IS NULL AND due_at IS NOT NULL AND (due_lease_until IS NULL OR due_lease_until < now())
              ORDER BY due_at LIMIT 1),
             (SELECT due_lease_until FROM tasks
              WHERE due_fired_at IS NULL AND due_lease_until IS NOT NULL AND due_lease_until >= now()
              ORDER BY due_lease_until LIMIT 1)) - now()) * 1000 AS ms`,
  });
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Number(ms);
}

/** The claimed task, locked, if it is still open, due at the claimed time and not raised meanwhile. */
export async function lockStillDue(db: Queryable, t: DueTask): Promise<TaskRow | undefined> {
  const { rows } = await db.query<TaskRow>({
    name: 'crm_tasks_lock_still_due',
    text: `SELECT ${FIELDS} FROM tasks t
           WHERE t.id = $1 AND t.status = 'open' AND t.due_fired_at IS NULL AND t.due_at = $2 FOR UPDATE`,
    values: [t.id, t.due_at],
  });
  return rows[0];
}

export async function markDueRaised(db: Queryable, id: string): Promise<void> {
  await db.query({ name: 'crm_tasks_mark_due', text: 'UPDATE tasks SET due_fired_at = now(), due_lease_until = NULL WHERE id = $1', values: [id] });
}
