import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { iso, isoOrUndefined, type PoolClient, withRetriedTransaction } from '@crm/db';
import { enqueueEvent, recordAudit } from '@crm/events';
import { foldContactAnalytics, unfoldContactAnalytics } from '../analytics';
import type { crm } from '@crm/proto-types';
import type { Deps } from '../deps';
import {
  ContactRow,
  findAppointment,
  findByChatnetUid,
  findContact,
  findIdByPhone,
  lockContactJsonRows,
  toAppointment,
  toContact,
  toEventContact,
} from '../contacts';
import { isUuid } from '../shared';
import { apiFields, type JsonRow, mergedFields, restoredFields } from './merge-fields';
import * as repo from './merges.repo';

/**
 * Contact merges (issue #15): a duplicate (the source) is folded into the contact that stays (the target) in one
 * transaction, and can be taken apart again within UNDO_WINDOW_DAYS. Team leads and above only: a merge removes a
 * contact, so it needs what deleting one needs (and those roles see every contact, whatever inbox visibility says).
 */

/** An undo the merge's state refuses: 409 with a code saying why. */
const refused = (code: string, message: string) => new AppError('already_exists', message, { code });

function counts(moved: repo.MovedIds) {
  const n = (t: repo.MovedTable) => moved[t]?.length ?? 0;
  return {
    notes: n('contact_notes'),
    appointments: n('appointments'),
    activities: n('contact_activities'),
    friends: n('contact_friends'),
    leadLinks: n('socialnet_lead_links'),
  };
}

function mergeOut(m: repo.MergeRow, target: ContactRow, source?: ContactRow) {
  return {
    id: m.id,
    targetId: m.target_id,
    sourceId: m.source_id,
    mergedBy: m.merged_by ?? undefined,
    mergedAt: iso(m.merged_at),
    undoableUntil: iso(m.undoable_until),
    undoneAt: isoOrUndefined(m.undone_at),
    filledFields: apiFields(m.target_after),
    moved: counts(m.moved),
    target: toContact(target),
    ...(source ? { source: toContact(source) } : {}),
  };
}

/**
 * A moved appointment changed contact: appointment.updated lets its reminder (automation) follow it, in the trace of
 * the call that moved it (`traceparent`).
 */
async function appointmentsMoved(tx: PoolClient, orgId: string, ids: string[], traceparent: string | undefined) {
  for (const id of ids) {
    const row = await findAppointment(tx, orgId, id);
    if (row)
      await enqueueEvent(tx, { type: 'appointment.updated', orgId, data: { appointment: toAppointment(row), changes: ['contactId'] }, traceparent });
  }
}

const label = (row: JsonRow) => String(row.name || row.phone || row.email || row.id);

export async function mergeContacts(deps: Deps, ctx: OrgContext, req: crm.MergeContactsRequest__Output) {
  requireCan(ctx, 'contacts:delete');
  const { orgId } = ctx;
  const targetId = req.targetId.toLowerCase();
  const sourceId = req.sourceId.toLowerCase();
  if (!isUuid(targetId)) throw notFound('Contact');
  if (!sourceId) throw invalid('sourceId', 'is required');
  if (!isUuid(sourceId)) throw invalid('sourceId', 'must be a contact id');
  if (sourceId === targetId) throw invalid('sourceId', 'must be another contact than the one it is merged into');

  return withRetriedTransaction(deps.pool, async (tx) => {
    const rows = await lockContactJsonRows(tx, orgId, [targetId, sourceId]);
    const target = rows.get(targetId);
    const source = rows.get(sourceId);
    if (!target) throw notFound('Contact');
    if (!source) throw notFound('Source contact');

    const moved: repo.MovedIds = {};
    for (const table of Object.keys(repo.MOVED_TABLES) as repo.MovedTable[]) {
      const keys = await repo.moveAll(tx, table, orgId, sourceId, targetId);
      if (keys.length) moved[table] = keys;
    }
    const kept = await repo.keptRows(tx, orgId, sourceId);
    // The analytics read model has no foreign keys: the source's history joins the target's there too.
    const analytics = await foldContactAnalytics(tx, orgId, target, source);
    const after = mergedFields(target, source);
    const before = Object.fromEntries(Object.keys(after).map((col) => [col, target[col] ?? null]));
    const changes = apiFields(after);
    // The source leaves and the target takes what it lacked, through the contacts' writer (its activity, contact.updated).
    const updated = await deps.contactWriter.inTrace(ctx.traceparent).merge(tx, orgId, {
      targetId,
      sourceId,
      fill: after,
      changes,
      activity: { type: 'merged', data: `Merged ${label(source)} (contact ${sourceId}) into this contact` },
    });

    const merge = await repo.insertMerge(tx, {
      id: randomUUID(),
      orgId,
      targetId,
      sourceId,
      sourceRow: source,
      targetBefore: before,
      targetAfter: after,
      moved,
      kept,
      analytics,
      mergedBy: ctx.userId || null,
    });
    await appointmentsMoved(tx, orgId, moved.appointments ?? [], ctx.traceparent);
    await enqueueEvent(tx, {
      type: 'contact.merged',
      orgId,
      data: { mergeId: merge.id, targetId, sourceId, target: toEventContact(updated), source: toEventContact(source as unknown as ContactRow) },
      traceparent: ctx.traceparent,
    });
    await recordAudit(tx, ctx, {
      action: 'contact.merged',
      resourceType: 'contact',
      resourceId: targetId,
      details: { mergeId: merge.id, sourceId, sourceName: source.name, sourcePhone: source.phone, filledFields: changes, moved: counts(moved) },
    });
    return mergeOut(merge, updated);
  });
}

/** Why an undo cannot put the source back: the contact that took its phone or chat-network identity since. */
async function undoConflict(deps: Deps, orgId: string, source: JsonRow, constraint: string | undefined): Promise<AppError> {
  const byPhone = constraint === 'contacts_phone_uq';
  const owner = byPhone
    ? await findIdByPhone(deps.pool, orgId, String(source.phone))
    : source.chatnet_uid
      ? (await findByChatnetUid(deps.pool, orgId, String(source.chatnet_uid)))?.id
      : undefined;
  const field = byPhone ? 'phone' : 'chatnetUid';
  return new AppError('already_exists', `The merged contact's ${byPhone ? 'phone number' : 'chat-network identity'} belongs to another contact now`, {
    code: 'merge_undo_conflict',
    details: [{ field, message: `already belongs to contact ${owner ?? '(unknown)'}` }],
  });
}

export async function undoMerge(deps: Deps, ctx: OrgContext, req: crm.UndoContactMergeRequest__Output) {
  requireCan(ctx, 'contacts:delete');
  const { orgId } = ctx;
  const mergeId = req.mergeId.toLowerCase();
  if (!isUuid(mergeId)) throw notFound('Merge');
  let sourceRow: JsonRow | undefined;
  try {
    return await withRetriedTransaction(deps.pool, async (tx) => {
      const m = await repo.lockMerge(tx, orgId, mergeId);
      if (!m) throw notFound('Merge');
      if (m.undone_at) throw refused('merge_already_undone', `This merge was undone at ${iso(m.undone_at)}`);
      if (m.expired)
        throw refused('merge_undo_expired', `A merge can be undone for ${repo.UNDO_WINDOW_DAYS} days; this one could until ${iso(m.undoable_until)}`);
      const target = (await lockContactJsonRows(tx, orgId, [m.target_id])).get(m.target_id);
      if (!target) {
        const later = await repo.activeMergeOfSource(tx, orgId, m.target_id);
        if (later)
          throw refused(
            'merge_target_merged',
            `The contact kept by this merge was merged into another one since (merge ${later}); undo that merge first`,
          );
        throw refused('merge_target_deleted', 'The contact kept by this merge was deleted since');
      }
      sourceRow = m.source_row;

      // The target gives back what the merge filled (freeing the phone and identity the source had), then the source
      // returns, before the rows that moved with it can move back to it.
      const restored = restoredFields(target, m.target_before, m.target_after);
      const changes = apiFields(restored);
      const targetNow = await deps.contactWriter.inTrace(ctx.traceparent).unmerge(tx, orgId, {
        targetId: m.target_id,
        restore: restored,
        changes,
        source: m.source_row,
        activity: { type: 'merge_undone', data: `Undid the merge of ${label(m.source_row)} (contact ${m.source_id})` },
      });
      await repo.restoreKeptRows(tx, m.kept);
      if (m.analytics) await unfoldContactAnalytics(tx, orgId, m.target_id, m.source_id, m.analytics);
      const back: repo.MovedIds = {};
      for (const table of Object.keys(repo.MOVED_TABLES) as repo.MovedTable[]) {
        const keys = await repo.moveListed(tx, table, orgId, m.moved[table] ?? [], m.target_id, m.source_id);
        if (keys.length) back[table] = keys;
      }
      const done = await repo.markUndone(tx, orgId, mergeId, ctx.userId || null);
      const sourceNow = (await findContact(tx, orgId, m.source_id))!;
      await appointmentsMoved(tx, orgId, back.appointments ?? [], ctx.traceparent);
      await enqueueEvent(tx, {
        type: 'contact.merge_undone',
        orgId,
        data: { mergeId, targetId: m.target_id, sourceId: m.source_id, target: toEventContact(targetNow), source: toEventContact(sourceNow) },
        traceparent: ctx.traceparent,
      });
      await recordAudit(tx, ctx, {
        action: 'contact.merge_undone',
        resourceType: 'contact',
        resourceId: m.target_id,
        details: { mergeId, sourceId: m.source_id, restoredFields: changes, movedBack: counts(back) },
      });
      return mergeOut(done, targetNow, sourceNow);
    });
  } catch (err) {
    const pg = (err ?? {}) as { code?: string; constraint?: string };
    if (pg.code === '23505' && sourceRow) throw await undoConflict(deps, orgId, sourceRow, pg.constraint);
    throw err;
  }
}
