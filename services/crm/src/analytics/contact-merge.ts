import type { PoolClient } from '@crm/db';
import { applyContactChanges, type ContactSnapshot } from './contact-events';
import * as repo from './contacts.repo';
import { FunnelDeltas } from './funnel-deltas';
import { utcDay, UserStatsDeltas } from './user-stats';

/**
 * Contact merges in the analytics read model. The merged person is one contact: the target's row takes the
 * source's history (stages reached, the earlier conversion, the first assignment to each user) and the source's
 * row becomes a tombstone, so the funnel and team performance count the person once and a late event about the
 * source cannot bring it back. Undo puts both back from what the merge recorded, keeping what the target gained
 * since.
 */

interface AnalyticsState {
  contact: repo.AnalyticsContact;
  assignments: repo.Assignment[];
}

/** What a merge recorded (contact_merges.analytics), in its JSON form: dates as ISO strings. */
export interface AnalyticsMergeRecord {
  source: AnalyticsState;
  targetBefore: AnalyticsState;
  targetAfter: AnalyticsState;
}

/** The columns of a contacts row (to_jsonb) the read model takes a snapshot of. */
export type ContactJson = Record<string, unknown>;

function snapshotOf(row: ContactJson): ContactSnapshot {
  const uuidOrNull = (v: unknown) => (typeof v === 'string' && v ? v.toLowerCase() : null);
  return {
    id: String(row.id).toLowerCase(),
    status: String(row.status ?? ''),
    statusId: uuidOrNull(row.status_id),
    assignedUserId: uuidOrNull(row.assigned_user_id),
    dealValue: Number(row.deal_value) || 0,
    createdAt: new Date(String(row.created_at)),
  };
}

/**
 * A contact whose contact.created has not reached the read model yet enters it now, as that event would have
 * it (its state as of its last update): folding it later would be too late, as the source is gone by then.
 */
async function ensureRow(db: PoolClient, orgId: string, row: ContactJson): Promise<void> {
  const id = String(row.id).toLowerCase();
  if (await repo.lockContact(db, orgId, id)) return;
  const at = new Date(String(row.updated_at ?? row.created_at));
  await applyContactChanges(db, [{ orgId, contactId: id, changes: [{ kind: 'snapshot', snapshot: snapshotOf(row), at, assigned: true }] }]);
}

async function stateOf(db: PoolClient, orgId: string, contactId: string): Promise<AnalyticsState | undefined> {
  const contact = await repo.lockContact(db, orgId, contactId);
  return contact && { contact, assignments: await repo.assignmentsOf(db, orgId, contactId) };
}

const unionIds = (a: string[], b: string[]) => [...new Set([...a, ...b])].sort();

function unionReached(a: repo.Reached, b: repo.Reached): repo.Reached {
  return { lead: a.lead || b.lead, customer: a.customer || b.customer, statusIds: unionIds(a.statusIds, b.statusIds) };
}

const time = (d: Date | string | null) => (d === null ? undefined : new Date(d).getTime());

/** The earliest assignment to each user of both contacts, credited to whoever the conversion is credited to. */
function unitedAssignments(a: repo.Assignment[], b: repo.Assignment[], convertedBy: string | null): repo.Assignment[] {
  const byUser = new Map<string, repo.Assignment>();
  for (const x of [...a, ...b]) {
    const old = byUser.get(x.userId);
    if (!old || time(x.at)! < time(old.at)!) byUser.set(x.userId, x);
  }
  return [...byUser.values()].sort((x, y) => (x.userId < y.userId ? -1 : 1)).map((x) => ({ ...x, credited: x.userId === convertedBy }));
}

/** What one contact adds to the aggregates (+1) or takes from them (−1). */
function count(funnel: FunnelDeltas, users: UserStatsDeltas, s: AnalyticsState, sign: 1 | -1) {
  if (!s.contact.deleted) funnel.add(utcDay(time(s.contact.createdAt)!), s.contact.reached, sign);
  for (const a of s.assignments) users.add(time(a.at)!, a.userId, { assigned: sign, converted: a.credited ? sign : 0 });
}

/** A contact's read-model rows as `next` says (dates may come back from JSON as strings). */
async function write(db: PoolClient, orgId: string, contactId: string, next: AnalyticsState) {
  await repo.updateContact(db, orgId, contactId, { ...next.contact, createdAt: new Date(next.contact.createdAt) });
  await repo.deleteAssignments(db, orgId, contactId);
  for (const a of next.assignments) await repo.saveAssignment(db, orgId, contactId, { ...a, at: new Date(a.at) });
}

/** Replace each contact's state `prev` by `next`, moving the aggregates with it. */
async function replace(db: PoolClient, orgId: string, changes: Array<{ contactId: string; prev: AnalyticsState; next: AnalyticsState }>) {
  const funnel = new FunnelDeltas();
  const users = new UserStatsDeltas();
  for (const c of changes) {
    count(funnel, users, c.prev, -1);
    count(funnel, users, c.next, 1);
    await write(db, orgId, c.contactId, c.next);
  }
  await FunnelDeltas.applyAll(db, [[orgId, funnel]]);
  await users.apply(db, orgId);
}

/** JSON round trip, so the record holds what undo will read back (dates as strings). */
const asJson = <T>(v: T): T => JSON.parse(JSON.stringify(v));

/**
 * Fold the source's analytics into the target's, in the merge's transaction (which holds both contacts rows);
 * returns what undo needs. Rows are locked in id order, aggregates last in key order, as the event consumer does.
 */
export async function foldContactAnalytics(db: PoolClient, orgId: string, target: ContactJson, source: ContactJson): Promise<AnalyticsMergeRecord> {
  const targetId = String(target.id).toLowerCase();
  const sourceId = String(source.id).toLowerCase();
  for (const row of [target, source].sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1))) await ensureRow(db, orgId, row);
  const t = (await stateOf(db, orgId, targetId))!;
  const s = (await stateOf(db, orgId, sourceId))!;

  const earlier =
    s.contact.convertedAt && (!t.contact.convertedAt || time(s.contact.convertedAt)! < time(t.contact.convertedAt)!) ? s.contact : t.contact;
  const contact: repo.AnalyticsContact = {
    ...t.contact,
    reached: unionReached(t.contact.reached, s.contact.reached),
    convertedAt: earlier.convertedAt,
    convertedBy: earlier.convertedBy,
  };
  const after: AnalyticsState = { contact, assignments: unitedAssignments(t.assignments, s.assignments, contact.convertedBy) };
  const tombstone: AnalyticsState = { contact: { ...s.contact, deleted: true }, assignments: [] };
  await replace(db, orgId, [
    { contactId: targetId, prev: t, next: after },
    { contactId: sourceId, prev: s, next: tombstone },
  ]);
  return asJson({ source: s, targetBefore: t, targetAfter: after });
}

const sameAt = (a: repo.Assignment, b: repo.Assignment) => time(a.at) === time(b.at);

/**
 * Take a merge apart: the source gets its own state back, and the target gives back what the merge brought:
 * stages only the source had (unless reached again since), the source's conversion (while it is still the one
 * recorded) and the assignments that came from the source. Whatever the target's events changed since stays.
 */
export async function unfoldContactAnalytics(
  db: PoolClient,
  orgId: string,
  targetId: string,
  sourceId: string,
  record: AnalyticsMergeRecord,
): Promise<void> {
  const ids = [targetId, sourceId].sort();
  const current = new Map<string, AnalyticsState | undefined>();
  for (const id of ids) current.set(id, await stateOf(db, orgId, id));
  const t = current.get(targetId);
  const s = current.get(sourceId);
  if (!t || !s) return;

  const before = record.targetBefore.contact;
  const after = record.targetAfter.contact;
  const gained = (was: boolean, merged: boolean, now: boolean) => was || (now && !merged);
  const reached: repo.Reached = {
    lead: gained(before.reached.lead, after.reached.lead, t.contact.reached.lead),
    customer: gained(before.reached.customer, after.reached.customer, t.contact.reached.customer),
    statusIds: unionIds(
      before.reached.statusIds,
      t.contact.reached.statusIds.filter((id) => !after.reached.statusIds.includes(id)),
    ),
  };
  const conversionUnchanged = time(t.contact.convertedAt) === time(after.convertedAt) && t.contact.convertedBy === after.convertedBy;
  const contact: repo.AnalyticsContact = {
    ...t.contact,
    reached,
    ...(conversionUnchanged ? { convertedAt: before.convertedAt, convertedBy: before.convertedBy } : {}),
  };
  const assignments: repo.Assignment[] = [];
  for (const a of t.assignments) {
    const merged = record.targetAfter.assignments.find((x) => x.userId === a.userId && sameAt(x, a));
    if (!merged) assignments.push(a);
    else {
      const own = record.targetBefore.assignments.find((x) => x.userId === a.userId);
      if (own) assignments.push(own);
    }
  }
  const restoredTarget: AnalyticsState = { contact, assignments: assignments.map((a) => ({ ...a, credited: a.userId === contact.convertedBy })) };
  await replace(db, orgId, [
    { contactId: targetId, prev: t, next: restoredTarget },
    { contactId: sourceId, prev: s, next: record.source },
  ]);
}
