import { AppError, invalid, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import { Queryable, withTransaction } from '@crm/db';
import { enqueueEvent, recordAudit } from '@crm/events';
import type { Deps } from '../deps';
import { askCsatOnClose } from '../csat';
import { convs, ConversationRow, CONVERSATION_STATUSES, ConversationStatus, messages, EVENTS } from '../conversations';
import { addConversationsToFolder, findFolder } from '../folders';
import { checkMayAssign } from '../assignment';
import { parseSnoozedUntil, statusChangedData } from '../status';
import { bulkIds, isUuid, messagingRules as rules, optionalOneOf } from '@crm/validation';
import { viewerOf } from '../visibility';
import { markManySeenOnNetwork } from '../inbox';
import { runMacroOnMany } from '../macros';

export const BULK_MAX_IDS = rules.BULK_MAX_IDS;
const ACTIONS = rules.BULK_ACTIONS;
/** The set-based actions (one transaction over the locked rows); `macro` runs conversation by conversation. */
type Action = Exclude<(typeof ACTIONS)[number], 'macro'>;

export interface BulkRequest {
  ids?: string[];
  action?: string;
  userId?: string;
  teamId?: string;
  teamIdSet?: boolean;
  status?: string;
  snoozedUntil?: string;
  folderId?: string;
  macroId?: string;
}

export interface BulkFailure {
  id: string;
  code: string;
}

/** A conversation the action was refused for: the error's stable code (`forbidden` for permission). */
function failureOf(id: string, err: unknown): BulkFailure {
  if (!(err instanceof AppError)) throw err;
  return { id, code: err.kind === 'permission_denied' ? 'forbidden' : err.code };
}

/**
 * What one action does to the locked rows it may change: the ids it refused, with why, and what it does once the
 * transaction committed (never inside it: a remote call must not hold the row locks, nor act on a rolled-back change).
 */
type Apply = (db: Queryable, rows: ConversationRow[]) => Promise<{ failed: BulkFailure[]; afterCommit?: () => void }>;

function optionalId(value: string | undefined, field: string): string | null {
  if (value === undefined || value === '') return null;
  if (!isUuid(value)) throw invalid(field, 'must be an id or null');
  return value.toLowerCase();
}

/**
 * assign: the single route's rules per conversation (an agent takes unassigned ones for themselves or releases
 * their own; others fail with `forbidden`), identity asked once for the user and team, one UPDATE, one
 * `conversation.assigned` per conversation whose owner changed.
 */
async function prepareAssign(deps: Deps, ctx: OrgContext, req: BulkRequest): Promise<Apply> {
  // As in AssignConversation, an absent userId means nobody (the gateway insists the caller says so with null).
  const assigneeId = optionalId(req.userId, 'userId');
  const teamId = req.teamIdSet ? optionalId(req.teamId, 'teamId') : undefined;
  if (assigneeId) {
    const user = await deps.remote.orgUser(ctx, assigneeId);
    if (!user) throw invalid('userId', 'is not a user of this organization');
    if (user.status !== 'active') throw invalid('userId', 'is not an active user');
  }
  if (teamId && !(await deps.remote.orgTeam(ctx, teamId))) throw invalid('teamId', 'is not a team of this organization');
  return async (db, rows) => {
    const failed: BulkFailure[] = [];
    const changed: { row: ConversationRow; teamId: string | null }[] = [];
    for (const row of rows) {
      const next = { assigneeId, teamId: teamId === undefined ? row.team_id : teamId };
      try {
        checkMayAssign(ctx, row, next);
      } catch (err) {
        failed.push(failureOf(row.id, err));
        continue;
      }
      if (next.assigneeId !== row.assignee_id || next.teamId !== row.team_id) changed.push({ row, teamId: next.teamId });
    }
    if (changed.length === 0) return { failed };
    await convs.setOwnerMany(
      db,
      ctx.orgId,
      changed.map((c) => c.row.id),
      assigneeId,
      changed.map((c) => c.teamId),
    );
    for (const { row, teamId: team } of changed) {
      await enqueueEvent(db, {
        type: EVENTS.conversationAssigned,
        orgId: ctx.orgId,
        data: {
          conversationId: row.id,
          contactId: row.contact_id,
          chatnetAccountId: row.chatnet_account_id,
          assigneeId,
          teamId: team,
          previousAssigneeId: row.assignee_id,
          assignedBy: ctx.userId || null,
          reason: null,
        },
        traceparent: ctx.traceparent,
      });
    }
    return { failed };
  };
}

/** status: as PUT /status (snoozed needs a future snoozedUntil); one UPDATE, one `conversation.status_changed` per change. */
function prepareStatus(ctx: OrgContext, req: BulkRequest): Apply {
  const status = optionalOneOf(req.status, CONVERSATION_STATUSES, 'status') as ConversationStatus | undefined;
  if (!status) throw invalid('status', 'is required');
  const until = parseSnoozedUntil(req.snoozedUntil, status);
  return async (db, rows) => {
    const changed = rows.filter((r) => r.status !== status || (r.snoozed_until?.getTime() ?? null) !== (until?.getTime() ?? null));
    if (changed.length === 0) return { failed: [] };
    await convs.setStatusMany(
      db,
      ctx.orgId,
      changed.map((r) => r.id),
      status,
      until,
    );
    for (const row of changed) {
      await enqueueEvent(db, {
        type: EVENTS.conversationStatusChanged,
        orgId: ctx.orgId,
        data: statusChangedData(row, status, row.status, until, ctx.userId || null),
        traceparent: ctx.traceparent,
      });
    }
    // Closed: their contacts are asked how it went (when the org asks), in one statement.
    if (status === 'closed')
      await askCsatOnClose(
        db,
        changed.filter((r) => r.status !== 'closed'),
      );
    return { failed: [] };
  };
}

/** folder: add to one of the org's folders (repeats are no-ops; like the single route, no event). */
async function prepareFolder(deps: Deps, ctx: OrgContext, req: BulkRequest): Promise<Apply> {
  if (req.folderId === undefined || req.folderId === '') throw invalid('folderId', 'is required');
  const folder = isUuid(req.folderId) ? await findFolder(deps.pool, ctx.orgId, req.folderId) : undefined;
  if (!folder) throw invalid('folderId', 'is not a chat folder of this organization');
  return async (db, rows) => {
    await addConversationsToFolder(
      db,
      ctx.orgId,
      folder.id,
      rows.map((r) => r.id),
    );
    return { failed: [] };
  };
}

/**
 * read: every message from the contact read, counters recounted; like POST /:id/read, no event, and once committed
 * each conversation's newest newly read messages are marked read on the network, in the background (the answer
 * does not wait for the network, as with the single route; a failure is logged).
 */
function prepareRead(deps: Deps, ctx: OrgContext): Apply {
  return async (db, rows) => {
    const ids = rows.map((r) => r.id);
    const newly = await messages.markAllReadMany(db, ctx.orgId, ids);
    await convs.recountMany(db, ctx.orgId, ids);
    const reads = rows.map((conv) => ({ conv, newly: newly.get(conv.id) ?? [] }));
    return { failed: [], afterCommit: () => void markManySeenOnNetwork(deps, ctx, reads) };
  };
}

function prepare(deps: Deps, ctx: OrgContext, action: Action, req: BulkRequest): Apply | Promise<Apply> {
  switch (action) {
    case 'assign':
      return prepareAssign(deps, ctx, req);
    case 'status':
      return prepareStatus(ctx, req);
    case 'folder':
      return prepareFolder(deps, ctx, req);
    case 'read':
      return prepareRead(deps, ctx);
  }
}

/**
 * POST /conversations/bulk → {updated, failed}. Every parameter is checked before anything changes (a bad one is a
 * 400 for the whole request); then one transaction locks the org's conversations among the ids (≤ 1,000, in id
 * order), applies the action with set-based statements, writes one event per changed conversation and the one
 * audit entry, so the entry exists exactly when the changes do. `updated` counts the conversations the action
 * succeeded on, including those already in the asked state (they publish nothing).
 */
export async function bulkUpdate(deps: Deps, ctx: OrgContext, req: BulkRequest) {
  requireCan(ctx, 'conversations:write');
  const chosen = optionalOneOf(req.action, ACTIONS, 'action');
  if (!chosen) throw invalid('action', `is required (one of ${ACTIONS.join(', ')})`);
  if (chosen === 'macro') return runMacroOnMany(deps, ctx, req, BULK_MAX_IDS);
  const action: Action = chosen;
  const { valid, malformed } = bulkIds(req.ids, BULK_MAX_IDS);
  const apply = await prepare(deps, ctx, action, req);

  const result = await withTransaction(deps.pool, async (db) => {
    // Ids an agent may not see (inbox visibility "assigned") fail as not_found, like another org's.
    const rows = await convs.lockMany(db, ctx.orgId, valid, viewerOf(ctx));
    const found = new Set(rows.map((r) => r.id));
    const failed: BulkFailure[] = [
      ...malformed.map((id) => ({ id, code: 'not_found' })),
      ...valid.filter((id) => !found.has(id)).map((id) => ({ id, code: 'not_found' })),
    ];
    const applied: Awaited<ReturnType<Apply>> = rows.length > 0 ? await apply(db, rows) : { failed: [] };
    failed.push(...applied.failed);
    const refused = new Set(failed.map((f) => f.id));
    const updatedIds = rows.map((r) => r.id).filter((id) => !refused.has(id));
    await recordAudit(db, ctx, {
      action: `conversations.bulk_${action}`,
      resourceType: 'conversation',
      details: {
        requested: valid.length + malformed.length,
        updated: updatedIds.length,
        failed: failed.length,
        ids: updatedIds,
        failedIds: failed.map((f) => f.id),
        params: paramsOf(action, req),
      },
    });
    return { updated: updatedIds.length, failed, afterCommit: applied.afterCommit };
  });
  result.afterCommit?.();
  deps.log.debug({ action, updated: result.updated, failed: result.failed.length, ...traceFields(ctx) }, 'conversations bulk action');
  return { updated: result.updated, failed: result.failed };
}

/** What the audit entry says was asked, beside the ids. */
function paramsOf(action: Action, req: BulkRequest): Record<string, unknown> {
  switch (action) {
    case 'assign':
      return { userId: req.userId || null, ...(req.teamIdSet ? { teamId: req.teamId || null } : {}) };
    case 'status':
      return { status: req.status, ...(req.snoozedUntil ? { snoozedUntil: req.snoozedUntil } : {}) };
    case 'folder':
      return { folderId: req.folderId };
    case 'read':
      return {};
  }
}
