import type { PoolClient } from '@crm/db';
import * as repo from './contacts.repo';
import { FunnelDeltas } from './funnel-deltas';
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

/** One org's aggregate changes from a batch. */
interface Aggregates {
  funnel: FunnelDeltas;
  users: UserStatsDeltas;
}

/**
 * What one contact event says, for the read model. `created`: the snapshot is the contact's creation (contact.created),
 * so the contact almost surely has no row yet.
 */
export type ContactChange =
  { kind: 'snapshot'; snapshot: ContactSnapshot; at: Date; assigned: boolean; created?: boolean } | { kind: 'deleted'; at: Date };

export interface ContactChanges {
  orgId: string;
  contactId: string;
  changes: ContactChange[];
}

/**
 * Apply a batch's contact events in the consumer's transaction. The batch's new contacts, of every org, first get
 * their rows with one statement (in org and id order); then per org (in id order), each other contact (in id order,
 * its row lock serialising batches that touch it) takes its events in delivery order; the funnel and user rows are
 * summed over the batch and written last, each kind in one statement, in key order. A batch's round trips so do not
 * grow with the number of orgs in it.
 */
export async function applyContactChanges(db: PoolClient, batch: ContactChanges[]): Promise<void> {
  const byOrg = new Map<string, Map<string, ContactChange[]>>();
  for (const { orgId, contactId, changes } of batch) {
    const contacts = byOrg.get(orgId) ?? new Map<string, ContactChange[]>();
    byOrg.set(orgId, contacts);
    contacts.set(contactId, [...(contacts.get(contactId) ?? []), ...changes]);
  }
  const orgs = [...byOrg.keys()].sort();
  const aggregates = new Map<string, Aggregates>(orgs.map((orgId) => [orgId, { funnel: new FunnelDeltas(), users: new UserStatsDeltas() }]));
  const inserted = await insertNewContacts(db, byOrg, aggregates);
  for (const orgId of orgs) {
    const contacts = byOrg.get(orgId)!;
    const agg = aggregates.get(orgId)!;
    for (const contactId of [...contacts.keys()].sort()) {
      if (inserted.has(repo.contactKey(orgId, contactId))) continue;
      for (const c of contacts.get(contactId)!) {
        if (c.kind === 'snapshot') await applyContactSnapshot(db, orgId, c.snapshot, c.at, c.assigned, agg);
        else await applyContactDeleted(db, orgId, contactId, c.at, agg);
      }
    }
  }
  await FunnelDeltas.applyAll(
    db,
    orgs.map((orgId) => [orgId, aggregates.get(orgId)!.funnel]),
  );
  await UserStatsDeltas.applyAll(
    db,
    orgs.map((orgId) => [orgId, aggregates.get(orgId)!.users]),
  );
}

/**
 * Keep the contact's assignments and the users' counters in step with who its conversion is credited to, and
 * record an assignment to `assignee` at `at` (the first one to each user counts; an earlier one arriving late
 * takes its place).
 */
async function updateAssignments(
  db: PoolClient,
  orgId: string,
  contactId: string,
  convertedBy: string | null,
  assignee: string | null,
  at: Date,
  deltas: UserStatsDeltas,
) {
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
}

/** The read model's row of a contact first seen in this snapshot. */
function freshRow(s: ContactSnapshot, at: Date): repo.AnalyticsContact {
  const isCustomer = s.status === 'customer';
  return {
    createdAt: s.createdAt,
    snapshotAt: at,
    assignedUserId: s.assignedUserId,
    dealValue: s.dealValue,
    reached: union(NOTHING_REACHED, s),
    convertedAt: isCustomer ? at : null,
    convertedBy: isCustomer ? s.assignedUserId : null,
    deleted: false,
  };
}

/**
 * The common case, new contacts (contact.created): every contact of the batch with one snapshot, whatever its org,
 * gets its row with one statement, before any contact row is locked (rows are taken in (org, id) order in each step,
 * so batches still wait for each other instead of deadlocking). Those that had a row already are applied one by one
 * as before; returns the contactKeys done here. A row inserted here has no assignments yet, so one with neither an
 * assignee nor a conversion needs nothing more than its funnel count.
 */
async function insertNewContacts(
  db: PoolClient,
  byOrg: Map<string, Map<string, ContactChange[]>>,
  aggregates: Map<string, Aggregates>,
): Promise<Set<string>> {
  const candidates: Array<{ orgId: string; contactId: string; row: repo.AnalyticsContact; change: ContactChange & { kind: 'snapshot' } }> = [];
  for (const [orgId, contacts] of byOrg)
    for (const [contactId, changes] of contacts) {
      const only = changes.length === 1 ? changes[0] : undefined;
      if (only?.kind !== 'snapshot' || only.snapshot.id !== contactId) continue;
      candidates.push({ orgId, contactId, row: freshRow(only.snapshot, only.at), change: only });
    }
  // The statement is made for a new contact (contact.created): one round trip where the usual path makes three (lock,
  // insert, its assignments), or for several contacts of one org. An update of one contact usually finds its row: for
  // updates alone, one each, it would be a wasted round trip before the same usual path.
  const perOrg = new Map<string, number>();
  for (const c of candidates) perOrg.set(c.orgId, (perOrg.get(c.orgId) ?? 0) + 1);
  if (!candidates.some((c) => c.change.created) && ![...perOrg.values()].some((n) => n > 1)) return new Set();
  candidates.sort((a, b) => (a.orgId !== b.orgId ? (a.orgId < b.orgId ? -1 : 1) : a.contactId < b.contactId ? -1 : 1));
  const inserted = await repo.insertContacts(db, candidates);
  for (const { orgId, contactId, row, change } of candidates) {
    if (!inserted.has(repo.contactKey(orgId, contactId))) continue;
    const agg = aggregates.get(orgId)!;
    agg.funnel.move(utcDay(change.snapshot.createdAt.getTime()), undefined, row.reached);
    const assignee = change.assigned ? change.snapshot.assignedUserId : null;
    if (assignee || row.convertedBy) await updateAssignments(db, orgId, contactId, row.convertedBy, assignee, change.at, agg.users);
  }
  return inserted;
}

/**
 * Apply a contact snapshot taken at `at` (the event's time). Everything is order-tolerant: stages reached are
 * a union, the conversion is the earliest snapshot as a customer (credited to its assignee then), assignments
 * keep the earliest time per user, and the current fields (assignee, deal value) come from the newest snapshot
 * seen. `assigned` says the snapshot records an assignment (created with an assignee, or assignedUserId among
 * the changes).
 */
async function applyContactSnapshot(db: PoolClient, orgId: string, s: ContactSnapshot, at: Date, assigned: boolean, agg: Aggregates): Promise<void> {
  const assignee = assigned ? s.assignedUserId : null;
  let row = await repo.lockContact(db, orgId, s.id);
  const isCustomer = s.status === 'customer';
  if (!row) {
    const fresh = freshRow(s, at);
    if (await repo.insertContact(db, orgId, s.id, fresh)) {
      agg.funnel.move(utcDay(s.createdAt.getTime()), undefined, fresh.reached);
      // A row inserted now has no assignments yet: with neither an assignee nor a conversion there is nothing to credit.
      if (assignee || fresh.convertedBy) await updateAssignments(db, orgId, s.id, fresh.convertedBy, assignee, at, agg.users);
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
  if (!sameReached(row.reached, next.reached)) agg.funnel.move(utcDay(row.createdAt.getTime()), row.reached, next.reached);
  if (assignee || next.convertedBy !== row.convertedBy) await updateAssignments(db, orgId, s.id, next.convertedBy, assignee, at, agg.users);
}

/** The contact leaves every count; a tombstone keeps late events from bringing it back. */
async function applyContactDeleted(db: PoolClient, orgId: string, contactId: string, at: Date, agg: Aggregates): Promise<void> {
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
  agg.funnel.move(utcDay(row.createdAt.getTime()), row.reached, undefined);
  for (const a of await repo.assignmentsOf(db, orgId, contactId))
    agg.users.add(a.at.getTime(), a.userId, { assigned: -1, converted: a.credited ? -1 : 0 });
  await repo.deleteAssignments(db, orgId, contactId);
}
