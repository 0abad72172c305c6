import { randomUUID } from 'node:crypto';
import { AppError, notFound, requireCan, requireUser, traceFields, OrgContext } from '@crm/grpc-kit';
import { withTransaction, type Queryable } from '@crm/db';
import { AVAILABILITY_STATUSES, enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import * as orgs from '../db/orgs.repo';
import * as tokens from '../db/tokens.repo';
import * as users from '../db/users.repo';
import { record as recordAudit } from './audit';
import { invitationExpiresAt, invitationUrl } from './invitations';
import { checkPasswordStrength, hashPassword } from './passwords';
import { newSecretToken } from './secret-tokens';
import { invalidateAccessTokens } from './sessions';
import {
  assertKeepsAnOwner,
  assertMayGrant,
  demotesOwner,
  isActiveOwner,
  requireMayChangeAccess,
  requireMayDeactivate,
  requireMayEdit,
} from './user-access';
import { isUuid, normaliseEmail, optionalHttpUrl, optionalOneOf, optionalText, rejectNul, requireText } from '@crm/validation';
import { requireRole, rules } from './validation';

async function loadInOrg(deps: Deps, orgId: string, id: string) {
  const row = isUuid(id) ? await users.findInOrg(deps.pool, orgId, id) : undefined;
  if (!row) throw notFound('User');
  return row;
}

export async function profile(deps: Deps, ctx: OrgContext) {
  const { orgId, userId } = requireUser(ctx);
  const row = await users.findInOrg(deps.pool, orgId, userId);
  if (!row || row.status !== 'active') throw new AppError('unauthenticated', 'User no longer exists or is inactive');
  return users.toUser(row);
}

/** Like get(): any caller inside the organization, including a service acting for it without a user. */
export async function list(deps: Deps, ctx: OrgContext, req: users.UserFilter) {
  const { orgId } = ctx;
  if (req.status) rules.userStatus(req.status);
  if (req.role) requireRole(req.role);
  optionalOneOf(req.availability, AVAILABILITY_STATUSES, 'availability');
  rejectNul(req.department, 'department');
  rejectNul(req.search, 'search');
  return users.listUsers(deps.pool, orgId, req);
}

/**
 * Any caller inside the organization may read one of its users: a signed-in user, an API key, or another
 * service acting for the organization (crm checking an assignee, automation naming a user) with no user id.
 */
export async function get(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const row = await loadInOrg(deps, orgId, id);
  // A user's preferences are their own business: teammates reading the user through the gateway do not see them;
  // a service that acts on them (automation's email alerts) does.
  return ctx.caller && ctx.caller !== 'gateway' ? { ...users.toUser(row), notifyByEmail: row.notify_by_email } : users.toUser(row);
}

export async function create(
  deps: Deps,
  ctx: OrgContext,
  req: { email: string; fullName: string; role: string; department: string; phone: string; password?: string },
) {
  requireCan(ctx, 'users:manage');
  const email = normaliseEmail(req.email);
  const fullName = requireText(req.fullName, 'fullName');
  const role = requireRole(req.role || 'agent');
  assertMayGrant(ctx.role, role);
  const department = optionalText(req.department, 'department');
  const phone = optionalText(req.phone, 'phone', rules.IDENTITY_TEXT_MAX.phone);
  let passwordHash: string | null = null;
  if (req.password !== undefined && req.password !== '') {
    checkPasswordStrength(req.password);
    passwordHash = await hashPassword(req.password);
  }
  const expiresAt = invitationExpiresAt(Date.now());
  const created = await withTransaction(deps.pool, async (db) => {
    if (await users.findByEmail(db, email)) {
      throw new AppError('already_exists', 'A user with this email already exists', { code: 'email_taken' });
    }
    const row = await users.insertUser(db, { id: randomUUID(), orgId: ctx.orgId, email, passwordHash, fullName, role, department, phone });
    let inviteUrl: string | undefined;
    if (!passwordHash) {
      // No password given: a single-use link, mailed when a mail server is configured and shown to the admin either way.
      const { token, hash } = newSecretToken();
      await tokens.insertInvitation(db, { id: randomUUID(), orgId: ctx.orgId, userId: row.id, tokenHash: hash, expiresAt });
      inviteUrl = invitationUrl(deps.config.PUBLIC_URL, token);
    }
    // Never the password or the invitation link (it signs the user in): only whether one was created.
    await recordAudit(db, ctx, {
      action: 'user.created',
      resourceType: 'user',
      resourceId: row.id,
      details: { email, fullName, role, invited: !passwordHash },
    });
    return { row, inviteUrl };
  });
  const { row, inviteUrl } = created;
  // Mailed only after the commit: a user that was never created must not receive an invitation.
  const invitationSent = inviteUrl ? await mailInvitation(deps, ctx, row.email, row.full_name, inviteUrl, expiresAt) : false;
  return {
    id: row.id,
    email: row.email,
    fullName: row.full_name,
    role: row.role,
    createdAt: row.created_at.toISOString(),
    lastLogin: row.last_login?.toISOString(),
    invitationSent,
    inviteUrl,
  };
}

async function mailInvitation(deps: Deps, ctx: OrgContext, to: string, fullName: string, url: string, expiresAt: Date): Promise<boolean> {
  const [orgName, inviter] = await Promise.all([
    orgs.organizationName(deps.pool, ctx.orgId),
    ctx.userId && isUuid(ctx.userId) ? users.findInOrg(deps.pool, ctx.orgId, ctx.userId) : undefined,
  ]);
  return deps.mailer.sendInvitation({
    to,
    fullName,
    orgName: orgName ?? 'your team',
    inviterName: inviter?.full_name,
    url,
    expiresAt,
    logFields: traceFields(ctx),
  });
}

export async function update(
  deps: Deps,
  ctx: OrgContext,
  req: { id: string; fullName?: string; role?: string; department?: string; phone?: string; avatar?: string; status?: string },
) {
  const actor = requireUser(ctx);
  const { orgId } = actor;
  const target = await loadInOrg(deps, orgId, req.id);
  const changesAccess = req.role !== undefined || req.status !== undefined;
  requireMayEdit(actor, target.id, changesAccess);
  const patch = {
    fullName: req.fullName !== undefined ? requireText(req.fullName, 'fullName') : undefined,
    department: req.department !== undefined ? optionalText(req.department, 'department') : undefined,
    phone: req.phone !== undefined ? optionalText(req.phone, 'phone', rules.IDENTITY_TEXT_MAX.phone) : undefined,
    // Shown to every user of the org as an image's src: only http(s), whoever calls (the gateway checks it too).
    avatar: req.avatar !== undefined ? optionalHttpUrl(req.avatar, 'avatar', rules.IDENTITY_TEXT_MAX.avatar) : undefined,
    role: req.role !== undefined ? requireRole(req.role) : undefined,
    status: req.status !== undefined ? rules.userStatus(req.status) : undefined,
  };
  if (changesAccess) requireMayChangeAccess(actor, target, patch.role);
  const row = await withTransaction(deps.pool, async (db) => {
    if (demotesOwner(target, patch)) assertKeepsAnOwner(await users.countActiveOwners(db, orgId));
    const updated = (await users.updateUser(db, orgId, target.id, patch))!;
    if (patch.status === 'inactive') await tokens.revokeAllForUser(db, target.id);
    if (target.status !== 'inactive' && updated.status === 'inactive') await publishDeactivated(db, updated, ctx);
    for (const entry of auditedChanges(target, updated)) await recordAudit(db, ctx, entry);
    return updated;
  });
  if (changesAccess) await invalidateAccessTokens(deps, target.id);
  return users.toUser(row);
}

/** user.deactivated, in the transaction that deactivates (messaging releases their conversations on it), in the call's trace. */
function publishDeactivated(db: Queryable, user: users.UserRow, ctx: OrgContext) {
  return enqueueEvent(db, { type: 'user.deactivated', orgId: user.org_id, data: { userId: user.id }, traceparent: ctx.traceparent });
}

/** DELETE deactivates: the record stays (history refers to it), sign-in and tokens stop working. */
export async function deactivate(deps: Deps, ctx: OrgContext, id: string) {
  const actor = requireUser(ctx);
  const { orgId } = actor;
  requireCan(ctx, 'users:manage');
  const target = await loadInOrg(deps, orgId, id);
  requireMayDeactivate(actor, target);
  await withTransaction(deps.pool, async (db) => {
    if (isActiveOwner(target)) assertKeepsAnOwner(await users.countActiveOwners(db, orgId));
    await users.updateUser(db, orgId, target.id, { status: 'inactive' });
    await tokens.revokeAllForUser(db, target.id);
    if (target.status !== 'inactive') {
      await recordAudit(db, ctx, {
        action: 'user.deactivated',
        resourceType: 'user',
        resourceId: target.id,
        details: { email: target.email, status: { from: target.status, to: 'inactive' } },
      });
      await publishDeactivated(db, target, ctx);
    }
  });
  await invalidateAccessTokens(deps, target.id);
  return { ok: true, message: 'User deactivated' };
}

/** Profile fields whose change is recorded by name only (the values are personal data, not the point of the log). */
const PROFILE_FIELDS = [
  ['fullName', 'full_name'],
  ['department', 'department'],
  ['phone', 'phone'],
  ['avatar', 'avatar'],
] as const;

/**
 * The audit entries of one update: a role change and a status change are each an entry of their own (with
 * from/to), so a filter on `user.role_changed` finds every one; other edits are one `user.updated` naming the
 * fields. Nothing actually changed: no entry.
 */
function auditedChanges(before: users.UserRow, after: users.UserRow) {
  const changed = PROFILE_FIELDS.filter(([, col]) => before[col] !== after[col]).map(([field]) => field);
  const base = { resourceType: 'user', resourceId: after.id };
  const entries = [];
  if (before.role !== after.role) {
    entries.push({ ...base, action: 'user.role_changed', details: { email: after.email, role: { from: before.role, to: after.role }, changed } });
  }
  if (before.status !== after.status) {
    const action = after.status === 'inactive' ? 'user.deactivated' : 'user.reactivated';
    entries.push({ ...base, action, details: { email: after.email, status: { from: before.status, to: after.status }, changed } });
  }
  if (entries.length === 0 && changed.length > 0) entries.push({ ...base, action: 'user.updated', details: { email: after.email, changed } });
  return entries;
}
