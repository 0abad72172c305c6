import { createHash } from 'node:crypto';
import { notFound, requireUser, roleRank, ROLES, OrgContext } from '@crm/grpc-kit';
import { Queryable, withTransaction } from '@crm/db';
import { enqueueEvents } from '@crm/events';
import type { Deps } from '../deps';
import * as repo from './notifications.repo';
import { isUuid } from '@crm/validation';

/**
 * Notifications live here. Audience: one user (`userId`), or the whole org (`userId` null), optionally
 * only users holding at least `audienceRole`. Read state is per reader, so an org-wide notification is
 * unread for each user until they read it.
 */

function readerOf(ctx: OrgContext): repo.Reader {
  const { orgId, userId, role } = requireUser(ctx);
  const rank = roleRank(role);
  return { orgId, userId, roles: ROLES.filter((r) => roleRank(r) <= rank) };
}

export async function list(deps: Deps, ctx: OrgContext, req: { page: number; limit: number; unreadOnly: boolean }) {
  const page = { page: Math.max(1, req.page || 1), limit: Math.min(100, Math.max(1, req.limit || 50)) };
  return repo.listNotifications(deps.pool, readerOf(ctx), page, Boolean(req.unreadOnly));
}

export async function markRead(deps: Deps, ctx: OrgContext, id: string) {
  const reader = readerOf(ctx);
  if (!isUuid(id) || !(await repo.markRead(deps.pool, reader, id.toLowerCase()))) throw notFound('Notification');
  return { ok: true, message: 'Notification marked as read' };
}

export async function markAllRead(deps: Deps, ctx: OrgContext) {
  const updated = await repo.markAllRead(deps.pool, readerOf(ctx));
  return { message: updated === 1 ? '1 notification marked as read' : `${updated} notifications marked as read`, updated };
}

export interface NotificationInput {
  orgId: string;
  /** Only this user; undefined: everyone in the org (or everyone holding audienceRole). */
  userId?: string;
  audienceRole?: 'admin' | 'owner' | 'team_lead';
  type: string;
  title: string;
  message: string;
  resourceId?: string;
  /**
   * The trace its `notification.created` continues: the consumed event's that raised it (eventTraceparent). Undefined
   * for the work of a timer, a rule run or a campaign (a trace of its own). Named by every caller: the service passes
   * its trace explicitly, having no active context (main.ts).
   */
  traceparent: string | undefined;
}

/** A stable id from the thing that caused the notification, so doing it twice creates it once. */
export function derivedId(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  // Shaped as a version-4 UUID (the id column and clients expect one).
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Store a notification and, in the same transaction, the `notification.created` event the gateway pushes
 * to socket.io (room user:<id>, or org:<orgId> when it is for the org). A repeated id does nothing.
 */
export async function create(db: Queryable, id: string, n: NotificationInput): Promise<boolean> {
  return (await createMany(db, [{ id, input: n }])).has(id.toLowerCase());
}

/**
 * create for several notifications: one statement for the rows and one for their events. Returns the ids that were
 * new, lowercase (as PostgreSQL returns a uuid).
 */
export async function createMany(db: Queryable, items: { id: string; input: NotificationInput }[]): Promise<Set<string>> {
  const rows: repo.NewNotification[] = items.map(({ id, input: n }) => ({
    id: id.toLowerCase(),
    orgId: n.orgId,
    userId: n.userId ?? null,
    audienceRole: n.userId ? null : (n.audienceRole ?? null),
    type: n.type,
    title: n.title.slice(0, 200),
    message: n.message.slice(0, 4000),
    resourceId: n.resourceId ?? '',
  }));
  const fresh = await repo.insertNotifications(db, rows);
  await enqueueEvents(
    db,
    rows
      .map((r, i) => ({ r, traceparent: items[i].input.traceparent }))
      .filter(({ r }) => fresh.has(r.id))
      .map(({ r, traceparent }) => ({
        id: derivedId('notification.created', r.id),
        type: 'notification.created' as const,
        orgId: r.orgId,
        data: {
          id: r.id,
          ...(r.userId ? { userId: r.userId } : {}),
          ...(!r.userId && r.audienceRole ? { audienceRole: r.audienceRole as NonNullable<NotificationInput['audienceRole']> } : {}),
          type: r.type,
          title: r.title,
          message: r.message,
          resourceId: r.resourceId,
        },
        traceparent,
      })),
  );
  return fresh;
}

/** For callers without a transaction at hand. */
export function createNow(deps: Deps, id: string, n: NotificationInput): Promise<boolean> {
  return withTransaction(deps.pool, (db) => create(db, id, n));
}
