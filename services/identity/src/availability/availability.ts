import { AppError, forbidden, invalid, requireUser, type OrgContext } from '@crm/grpc-kit';
import { withTransaction, type Queryable } from '@crm/db';
import { AVAILABILITY_STATUSES, enqueueEvent } from '@crm/events';
import { isUuid, oneOf } from '@crm/validation';
import type { Deps } from '../deps';
import * as repo from './availability.repo';

const gone = () => new AppError('unauthenticated', 'User no longer exists or is inactive');

/**
 * user.availability_changed in the transaction of the change, when the effective status moved; in the trace of the
 * call that changed it (`traceparent`), none for the offline timer's.
 */
export async function publishChange(db: Queryable, c: repo.Changed | undefined, traceparent?: string): Promise<void> {
  if (!c || c.previous === c.row.availability) return;
  await enqueueEvent(db, {
    traceparent,
    type: 'user.availability_changed',
    orgId: c.row.org_id,
    data: { userId: c.row.id, status: c.row.availability, previousStatus: c.previous, chosenStatus: c.row.availability_chosen },
  });
}

/** GET /profile/availability: the signed-in user's own. */
export async function get(deps: Deps, ctx: OrgContext) {
  const { orgId, userId } = requireUser(ctx);
  const row = await repo.find(deps.pool, orgId, userId);
  if (!row) throw gone();
  return repo.toAvailability(row);
}

/** PUT /profile/availability: the caller's own choice; effective at once while they are reachable (see repo.choose). */
export async function set(deps: Deps, ctx: OrgContext, req: { status?: string }) {
  const { orgId, userId } = requireUser(ctx);
  const status = oneOf(req.status, AVAILABILITY_STATUSES, 'status');
  const changed = await withTransaction(deps.pool, async (db) => {
    const c = await repo.choose(db, orgId, userId, status);
    await publishChange(db, c, ctx.traceparent);
    return c;
  });
  if (!changed) throw gone();
  return repo.toAvailability(changed.row);
}

/**
 * ReportPresence, from the gateway only: the user's first socket across the gateways connected, or their last one
 * went. `seq` orders the reports (two gateways may report a disconnect and a reconnect in either order): one older
 * than the last applied changes nothing.
 */
export async function report(deps: Deps, ctx: OrgContext, req: { userId?: string; connected?: boolean; seq?: number }) {
  if (ctx.caller !== 'gateway') throw forbidden('Only the gateway reports presence');
  if (!req.userId || !isUuid(req.userId)) throw invalid('userId', 'must be a user id');
  const seq = Number(req.seq);
  if (!Number.isSafeInteger(seq) || seq < 1) throw invalid('seq', 'must be a positive integer');
  const { orgId } = ctx;
  const userId = req.userId;
  await withTransaction(deps.pool, async (db) => {
    const c = req.connected
      ? await repo.connected(db, orgId, userId, seq)
      : await repo.disconnected(db, orgId, userId, seq, deps.config.AVAILABILITY_OFFLINE_AFTER_MS);
    await publishChange(db, c, ctx.traceparent);
  });
  return { ok: true, message: 'Presence recorded' };
}
