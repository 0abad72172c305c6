import type { PoolClient } from '@crm/db';
import * as repo from './contacts.repo';
import { utcDay, UserStatsDeltas } from './user-stats';

/** The fields of a contact.created / contact.updated snapshot the read model uses. */
export interface ContactSnapshot {
  id: string;
  status: string;
  statusId: string | null;
  assignedUserId: string | null;
  dealValue: number;
  createdAt: Date;
}

const sameReached = (a: repo.Reached, b: repo.Reached) =>
  a.lead === b.lead && a.customer === b.customer && a.statusIds.length === b.statusIds.length && a.statusIds.every((id, i) => id === b.statusIds[i]);

function union(r: repo.Reached, s: ContactSnapshot): repo.Reached {
  const ids = s.statusId && !r.statusIds.includes(s.statusId) ? [...r.statusIds, s.statusId].sort() : r.statusIds;
  return { lead: r.lead || s.status === 'lead', customer: r.customer || s.status === 'customer', statusIds: ids };
}

const NOTHING_REACHED: repo.Reached = { lead: false, customer: false, statusIds: [] };
const funnelKey = (day: string, r: repo.Reached) => JSON.stringify([day, r.lead, r.customer, r.statusIds]);

/** Funnel rows changed in one order everywhere, so concurrent transactions cannot deadlock on them. */
async function moveInFunnel(db: PoolClient, orgId: string, day: string, from: repo.Reached | undefined, to: repo.Reached | undefined) {
  const changes: [repo.Reached, number][] = [];
  if (from) changes.push([from, -1]);
  if (to) changes.push([to, 1]);
  changes.sort(([a], [b]) => (funnelKey(day, a) < funnelKey(day, b) ? -1 : 1));
  for (const [reached, n] of changes) await repo.addToFunnel(db, orgId, day, reached, n);
}

/**
 * Keep the contact's assignments and the users' counters in step with who its conversion is credited to, and
 * record an assignment to `assignee` at `at` (the first one to each user counts; an earlier one arriving late
 * takes its place).
 */
async function updateAssignments(db: PoolClient, orgId: string, contactId: string, convertedBy: string | null, assignee: string | null, at: Date) {
  const deltas = new UserStatsDeltas();
  const existing = await repo.assignmentsOf(db, orgId, contactId);
  for (const a of existing) {
    const credited = a.userId === convertedBy;
    if (credited === a.credited) continue;
    await repo.saveAssignment(db, orgId, contactId, { ...a, credited });
    deltas.add(a.at.getTime(), a.userId, { converted: credited ? 1 : -1 });
  }
  if (assignee) {
    const credited = assignee === convertedBy;
    const old = existing.find((a) => a.userId === assignee);
    if (!old || at.getTime() < old.at.getTime()) {
      await repo.saveAssignment(db, orgId, contactId, { userId: assignee, at, credited });
      if (old) deltas.add(old.at.getTime(), assignee, { assigned: -1, converted: credited ? -1 : 0 });
      deltas.add(at.getTime(), assignee, { assigned: 1, converted: credited ? 1 : 0 });
    }
  }
  await deltas.apply(db, orgId);
}

/**
 * Apply a contact snapshot taken at `at` (the event's time). Everything is order-tolerant: stages reached are
 * a union, the conversion is the earliest snapshot as a customer (credited to its assignee then), assignments
 * keep the earliest time per user, and the current fields (assignee, deal value) come from the newest snapshot
 * seen. `assigned` says the snapshot records an assignment (created with an assignee, or assignedUserId among
 * the changes).
 */
export async function applyContactSnapshot(db: PoolClient, orgId: string, s: ContactSnapshot, at: Date, assigned: boolean): Promise<void> {
  const assignee = assigned ? s.assignedUserId : null;
  let row = await repo.lockContact(db, orgId, s.id);
  const isCustomer = s.status === 'customer';
  if (!row) {
    const fresh: repo.AnalyticsContact = {
      createdAt: s.createdAt,
      snapshotAt: at,
      assignedUserId: s.assignedUserId,
      dealValue: s.dealValue,
      reached: union(NOTHING_REACHED, s),
      convertedAt: isCustomer ? at : null,
      convertedBy: isCustomer ? s.assignedUserId : null,
      deleted: false,
    };
    if (await repo.insertContact(db, orgId, s.id, fresh)) {
      await moveInFunnel(db, orgId, utcDay(s.createdAt.getTime()), undefined, fresh.reached);
      await updateAssignments(db, orgId, s.id, fresh.convertedBy, assignee, at);
      return;
    }
    row = (await repo.lockContact(db, orgId, s.id))!;
  }
  // A deleted contact stays deleted, whatever arrives late.
  if (row.deleted) return;
  const next: repo.AnalyticsContact = { ...row, reached: union(row.reached, s) };
  if (at.getTime() >= row.snapshotAt.getTime()) {
    next.snapshotAt = at;
    next.assignedUserId = s.assignedUserId;
    next.dealValue = s.dealValue;
  }
  if (isCustomer && (!row.convertedAt || at.getTime() < row.convertedAt.getTime())) {
    next.convertedAt = at;
    next.convertedBy = s.assignedUserId;
  }
  await repo.updateContact(db, orgId, s.id, next);
  if (!sameReached(row.reached, next.reached)) await moveInFunnel(db, orgId, utcDay(row.createdAt.getTime()), row.reached, next.reached);
  if (assignee || next.convertedBy !== row.convertedBy) await updateAssignments(db, orgId, s.id, next.convertedBy, assignee, at);
}

/** The contact leaves every count; a tombstone keeps late events from bringing it back. */
export async function applyContactDeleted(db: PoolClient, orgId: string, contactId: string, at: Date): Promise<void> {
  let row = await repo.lockContact(db, orgId, contactId);
  if (!row) {
    const tombstone: repo.AnalyticsContact = {
      createdAt: at,
      snapshotAt: at,
      assignedUserId: null,
      dealValue: 0,
      reached: NOTHING_REACHED,
      convertedAt: null,
      convertedBy: null,
      deleted: true,
    };
    if (await repo.insertContact(db, orgId, contactId, tombstone)) return;
    row = (await repo.lockContact(db, orgId, contactId))!;
  }
  if (row.deleted) return;
  await repo.updateContact(db, orgId, contactId, { ...row, deleted: true });
  await moveInFunnel(db, orgId, utcDay(row.createdAt.getTime()), row.reached, undefined);
  const deltas = new UserStatsDeltas();
  for (const a of await repo.assignmentsOf(db, orgId, contactId)) deltas.add(a.at.getTime(), a.userId, { assigned: -1, converted: a.credited ? -1 : 0 });
  await repo.deleteAssignments(db, orgId, contactId);
  await deltas.apply(db, orgId);
}
