import { AppError, invalid, requireUser, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as users from '../db/users.repo';

const gone = () => new AppError('unauthenticated', 'User no longer exists or is inactive');

/** GET /profile/notifications: the signed-in user's own preferences. */
export async function get(deps: Deps, ctx: OrgContext) {
  const { orgId, userId } = requireUser(ctx);
  const row = await users.findInOrg(deps.pool, orgId, userId);
  if (!row || row.status !== 'active') throw gone();
  return { notifyByEmail: row.notify_by_email };
}

/** PUT /profile/notifications: only the caller's own; `notifyByEmail` must be a boolean (the gateway checks too). */
export async function set(deps: Deps, ctx: OrgContext, req: { notifyByEmail?: unknown }) {
  const { orgId, userId } = requireUser(ctx);
  if (typeof req.notifyByEmail !== 'boolean') throw invalid('notifyByEmail', 'must be true or false');
  const saved = await users.setNotifyByEmail(deps.pool, orgId, userId, req.notifyByEmail);
  if (saved === undefined) throw gone();
  return { notifyByEmail: saved };
}
