import { randomUUID } from 'node:crypto';
import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import { invalid, notFound, requireCan, type OrgContext } from '@crm/grpc-kit';
import type { crm } from '@crm/proto-types';
import { findContact, recordActivity, viewerOf } from '../contacts';
import type { Deps } from '../deps';
import { isoTimestamp, isUuid, oneOf, optionalText, requireText, requireUuid } from '../shared';
import * as repo from './tasks.repo';

/**
 * Tasks (follow-ups): a title, notes, a due time, an assignee, optionally a contact and a conversation. Every
 * reference is the org's: the assignee an active user (identity; 400 naming assigneeId), the contact one the
 * caller can see (404), the conversation one the caller can see (messaging answers under their inbox
 * visibility; 404). Creating and completing a task lands on its contact's timeline; the due timer (due-timer.ts)
 * raises task.due.
 */

export const TASK_STATUSES = ['open', 'done'] as const;
export const TITLE_MAX = 200;
export const NOTES_MAX = 4000;

const isService = (ctx: OrgContext) => ctx.caller !== undefined && ctx.caller !== 'gateway';

/** The task or 404; under inbox visibility an agent's view of a task they may not see is 404 too. */
async function load(deps: Deps, ctx: OrgContext, id: string) {
  const row = isUuid(id) ? await repo.findTask(deps.pool, ctx.orgId, id.toLowerCase(), { viewer: viewerOf(ctx) }) : undefined;
  if (!row) throw notFound('Task');
  return row;
}

/** An optional id field: absent or '' is none; otherwise it must be a UUID (400 naming the field). */
function optionalId(v: string | undefined, field: string): string | null | undefined {
  if (v === undefined) return undefined;
  if (v === '') return null;
  return requireUuid(v, field);
}

function optionalTime(v: string | undefined, field: string): Date | null | undefined {
  if (v === undefined) return undefined;
  if (v === '') return null;
  return isoTimestamp(v, field);
}

/** Checks the references a create or update sets (nulls and absent ones need no check). */
async function checkReferences(
  deps: Deps,
  ctx: OrgContext,
  r: { assigneeId?: string | null; contactId?: string | null; conversationId?: string | null },
) {
  if (r.assigneeId) await deps.users.assertAssignable(ctx, r.assigneeId, 'assigneeId');
  if (r.contactId && !(await findContact(deps.pool, ctx.orgId, r.contactId, false, viewerOf(ctx)))) throw notFound('Contact');
  if (r.conversationId && !(await deps.conversations.visibleConversation(ctx, r.conversationId))) throw notFound('Conversation');
}

function timelineTitle(row: repo.TaskRow): string {
  return row.due_at ? `${row.title} (due ${row.due_at.toISOString()})` : row.title;
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  return repo.toTask(await load(deps, ctx, id));
}

export async function list(deps: Deps, ctx: OrgContext, req: crm.ListTasksRequest__Output) {
  const f: repo.TaskFilter = {
    page: Math.max(1, req.page || 1),
    limit: Math.min(100, Math.max(1, req.limit || 50)),
    viewer: viewerOf(ctx),
  };
  if (req.assigneeId === 'me') {
    if (!ctx.userId) throw invalid('assigneeId', '"me" needs a signed-in user');
    f.assigneeId = ctx.userId;
  } else if (req.assigneeId) f.assigneeId = requireUuid(req.assigneeId, 'assigneeId');
  if (req.status) f.status = oneOf(req.status, TASK_STATUSES, 'status');
  if (req.contactId) f.contactId = requireUuid(req.contactId, 'contactId');
  if (req.conversationId) f.conversationId = requireUuid(req.conversationId, 'conversationId');
  if (req.dueBefore) f.dueBefore = isoTimestamp(req.dueBefore, 'dueBefore');
  return repo.listTasks(deps.pool, ctx.orgId, f);
}

export async function create(deps: Deps, ctx: OrgContext, req: crm.CreateTaskRequest__Output) {
  requireCan(ctx, 'contacts:write');
  const t: repo.NewTask = {
    // A service names the id (automation: derived from the run), so that its retry creates the task once.
    id: isService(ctx) && req.id ? requireUuid(req.id, 'id') : randomUUID(),
    orgId: ctx.orgId,
    title: requireText(req.title, 'title', TITLE_MAX),
    notes: optionalText(req.notes, 'notes', NOTES_MAX),
    dueAt: optionalTime(req.dueAt, 'dueAt') ?? null,
    assigneeId: optionalId(req.assigneeId, 'assigneeId') ?? null,
    contactId: optionalId(req.contactId, 'contactId') ?? null,
    conversationId: optionalId(req.conversationId, 'conversationId') ?? null,
    createdBy: ctx.userId && isUuid(ctx.userId) ? ctx.userId : null,
  };
  await checkReferences(deps, ctx, t);
  return withTransaction(deps.pool, async (tx) => {
    let fresh: boolean;
    try {
      fresh = await repo.insertTask(tx, t);
    } catch (err) {
      // The contact was deleted since we looked.
      if ((err as { code?: string }).code === '23503') throw notFound('Contact');
      throw err;
    }
    const row = (await repo.findTask(tx, ctx.orgId, t.id))!;
    // A repeated create (same id): the task as made the first time, nothing announced twice.
    if (!fresh) return repo.toTask(row);
    if (row.contact_id) await recordActivity(tx, { orgId: ctx.orgId, contactId: row.contact_id, type: 'task_created', data: timelineTitle(row) });
    await enqueueEvent(tx, { type: 'task.created', orgId: ctx.orgId, data: { task: repo.toEventTask(row) }, traceparent: ctx.traceparent });
    return repo.toTask(row);
  });
}

export async function update(deps: Deps, ctx: OrgContext, req: crm.UpdateTaskRequest__Output) {
  requireCan(ctx, 'contacts:write');
  const viewer = viewerOf(ctx);
  await load(deps, ctx, req.id);
  const id = req.id.toLowerCase();
  const p: repo.TaskPatch = {};
  if (req.title !== undefined) p.title = requireText(req.title, 'title', TITLE_MAX);
  if (req.notes !== undefined) p.notes = optionalText(req.notes, 'notes', NOTES_MAX);
  if (req.dueAt !== undefined) p.dueAt = optionalTime(req.dueAt, 'dueAt');
  if (req.status !== undefined) p.status = oneOf(req.status, TASK_STATUSES, 'status');
  if (req.assigneeId !== undefined) p.assigneeId = optionalId(req.assigneeId, 'assigneeId');
  if (req.contactId !== undefined) p.contactId = optionalId(req.contactId, 'contactId');
  if (req.conversationId !== undefined) p.conversationId = optionalId(req.conversationId, 'conversationId');
  await checkReferences(deps, ctx, p);
  return withTransaction(deps.pool, async (tx) => {
    const before = await repo.findTask(tx, ctx.orgId, id, { viewer, forUpdate: true });
    if (!before) throw notFound('Task');
    try {
      await repo.updateTask(tx, ctx.orgId, id, p);
    } catch (err) {
      if ((err as { code?: string }).code === '23503') throw notFound('Contact');
      throw err;
    }
    const after = (await repo.findTask(tx, ctx.orgId, id))!;
    if (before.status !== 'done' && after.status === 'done') {
      if (after.contact_id) await recordActivity(tx, { orgId: ctx.orgId, contactId: after.contact_id, type: 'task_completed', data: after.title });
      await enqueueEvent(tx, { type: 'task.completed', orgId: ctx.orgId, data: { task: repo.toEventTask(after) }, traceparent: ctx.traceparent });
    }
    return repo.toTask(after);
  });
}

export async function remove(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'contacts:write');
  await load(deps, ctx, id);
  await repo.deleteTask(deps.pool, ctx.orgId, id.toLowerCase());
  return { ok: true, message: 'Task deleted' };
}
