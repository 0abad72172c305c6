import { withTransaction } from '@crm/db';
import { enqueueEvent, recordAudit } from '@crm/events';
import { forbidden, invalid, notFound, roleRank, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as assignments from './assignments.repo';
import { ASSIGNMENT_MODES, AssignmentMode, AssignmentRow, AssignmentSettings, TIMEOUT_ACTIONS, TimeoutAction } from './assignments.repo';
import { EVENTS } from '../conversations';
import { isUuid } from '@crm/validation';

export const MAX_ASSIGNMENT_USERS = 100;
export const MAX_OPEN_PER_USER = 10_000;
/** A week: a longer reply window is no timeout anybody waits for. */
export const MAX_REPLY_TIMEOUT_MINUTES = 10_080;

interface AssignmentInput {
  chatnetAccountId?: string;
  mode?: string;
  userIds?: string[];
  maxOpenPerUser?: number;
  onlyOnline?: boolean;
  replyTimeoutMinutes?: number;
  onTimeout?: string;
  drainBacklog?: boolean;
}

function present(accountId: string, row: AssignmentRow | undefined) {
  if (!row) return { chatnetAccountId: accountId, mode: 'manual', userIds: [], onlyOnline: false, drainBacklog: false };
  return {
    chatnetAccountId: accountId,
    mode: row.mode,
    userIds: row.user_ids,
    ...(row.max_open_per_user === null ? {} : { maxOpenPerUser: row.max_open_per_user }),
    onlyOnline: row.only_online,
    ...(row.reply_timeout_minutes === null ? {} : { replyTimeoutMinutes: row.reply_timeout_minutes }),
    ...(row.on_timeout === null ? {} : { onTimeout: row.on_timeout }),
    drainBacklog: row.drain_backlog,
  };
}

/** The audit entry's view of the settings before the change. */
const auditedRow = (r: AssignmentRow): AssignmentSettings => ({
  mode: r.mode,
  userIds: r.user_ids,
  maxOpenPerUser: r.max_open_per_user,
  onlyOnline: r.only_online,
  replyTimeoutMinutes: r.reply_timeout_minutes,
  onTimeout: r.on_timeout,
  drainBacklog: r.drain_backlog,
});

/** Another org's account (or a malformed id) is 404, as the connector says. */
async function requireAccount(deps: Deps, ctx: OrgContext, id: string | undefined): Promise<string> {
  if (!isUuid(id) || !(await deps.remote.accountInOrg(ctx, id))) throw notFound('Chat-network account');
  return id.toLowerCase();
}

/** The reply timeout: both or neither (a window without an action, or an action without a window, is a mistake). */
function parseTimeout(req: AssignmentInput): { replyTimeoutMinutes: number | null; onTimeout: TimeoutAction | null } {
  const minutes = req.replyTimeoutMinutes;
  const action = req.onTimeout || undefined;
  if (minutes === undefined) {
    if (action !== undefined) throw invalid('replyTimeoutMinutes', 'is required when onTimeout is set');
    return { replyTimeoutMinutes: null, onTimeout: null };
  }
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_REPLY_TIMEOUT_MINUTES) {
    throw invalid('replyTimeoutMinutes', `must be a whole number from 1 to ${MAX_REPLY_TIMEOUT_MINUTES}, or null`);
  }
  if (action === undefined) throw invalid('onTimeout', `is required when replyTimeoutMinutes is set (${TIMEOUT_ACTIONS.join(', ')})`);
  if (!(TIMEOUT_ACTIONS as readonly string[]).includes(action)) throw invalid('onTimeout', `must be one of ${TIMEOUT_ACTIONS.join(', ')}`);
  return { replyTimeoutMinutes: minutes, onTimeout: action as TimeoutAction };
}

function parse(req: AssignmentInput): AssignmentSettings {
  const mode = req.mode as AssignmentMode;
  if (!(ASSIGNMENT_MODES as readonly string[]).includes(mode)) throw invalid('mode', `must be one of ${ASSIGNMENT_MODES.join(', ')}`);
  const raw = req.userIds ?? [];
  if (raw.length > MAX_ASSIGNMENT_USERS) throw invalid('userIds', `must list at most ${MAX_ASSIGNMENT_USERS} users`);
  const userIds: string[] = [];
  raw.forEach((id, i) => {
    if (!isUuid(id)) throw invalid(`userIds.${i}`, 'must be a user id');
    const lower = id.toLowerCase();
    if (userIds.includes(lower)) throw invalid(`userIds.${i}`, 'is listed twice');
    userIds.push(lower);
  });
  const max = req.maxOpenPerUser;
  if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > MAX_OPEN_PER_USER)) {
    throw invalid('maxOpenPerUser', `must be a whole number from 1 to ${MAX_OPEN_PER_USER}, or null`);
  }
  return {
    mode,
    userIds,
    maxOpenPerUser: max ?? null,
    onlyOnline: req.onlyOnline === true,
    ...parseTimeout(req),
    drainBacklog: req.drainBacklog === true,
  };
}

/** Every listed user must be an active user of the caller's org (identity says; another org's users are unknown there). */
async function checkUsers(deps: Deps, ctx: OrgContext, userIds: string[]): Promise<void> {
  const users = await Promise.all(userIds.map((id) => deps.remote.orgUser(ctx, id)));
  users.forEach((u, i) => {
    if (!u) throw invalid(`userIds.${i}`, 'is not a user of this organization');
    if (u.status !== 'active') throw invalid(`userIds.${i}`, 'is not an active user');
  });
}

/** GET /chatnet-accounts/:id/assignment: anyone in the org; an account never configured is manual with nobody listed. */
export async function get(deps: Deps, ctx: OrgContext, req: { chatnetAccountId?: string }) {
  const { orgId } = ctx;
  const accountId = await requireAccount(deps, ctx, req.chatnetAccountId);
  return present(accountId, await assignments.find(deps.pool, orgId, accountId));
}

/** PUT /chatnet-accounts/:id/assignment: team leads and up; replaces the settings and records `assignment.updated`. */
export async function set(deps: Deps, ctx: OrgContext, req: AssignmentInput) {
  const { orgId } = ctx;
  if (roleRank(ctx.role) < roleRank('team_lead')) throw forbidden('Only team leads, admins and owners change how conversations are assigned');
  const next = parse(req);
  const accountId = await requireAccount(deps, ctx, req.chatnetAccountId);
  await checkUsers(deps, ctx, next.userIds);
  const row = await withTransaction(deps.pool, async (db) => {
    const before = await assignments.find(db, orgId, accountId, true);
    const saved = await assignments.upsert(db, orgId, accountId, next);
    // The gateway (which agents' sockets hear the account) and crm (which contacts agents see) keep copies.
    await enqueueEvent(db, {
      type: EVENTS.accountAssignmentUpdated,
      orgId,
      data: { chatnetAccountId: accountId, mode: next.mode, userIds: next.userIds, maxOpenPerUser: next.maxOpenPerUser },
      traceparent: ctx.traceparent,
    });
    await recordAudit(db, ctx, {
      action: 'assignment.updated',
      resourceType: 'chatnet_account',
      resourceId: accountId,
      details: { ...next, previous: before ? auditedRow(before) : null },
    });
    return saved;
  });
  return present(accountId, row);
}
