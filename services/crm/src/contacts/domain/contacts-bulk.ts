import { AppError, forbidden, invalid, requireCan, roleRank, traceFields, OrgContext } from '@crm/grpc-kit';
import { PoolClient, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import type { crm } from '@crm/proto-types';
import type { ContactsDeps } from '../deps';
import * as repo from '../db/contacts.repo';
import type { BulkPatch } from '../db/contact-batches.repo';
import type { ContactWriter } from '../contact-writer';
import { assertAssignee, assertStatusId } from './contacts';
import { bulkIds, oneOf, rules } from '../../shared';
import { viewerOf } from './visibility';

type Action = (typeof rules.BULK_ACTIONS)[number];
type BulkContactsRequest = crm.BulkContactsRequest__Output;

interface BulkFailure {
  id: string;
  code: string;
}

/** The patch one action makes to one locked contact (tags depend on the contact's own). */
type PatchOf = (row: repo.ContactRow) => BulkPatch;

/** Checks the action's parameters (a 400 naming the field before anything changes) and returns its patch. */
async function preparePatch(deps: ContactsDeps, ctx: OrgContext, action: Exclude<Action, 'delete'>, req: BulkContactsRequest): Promise<PatchOf> {
  switch (action) {
    case 'tag':
    case 'untag': {
      const tags = rules.normaliseTags(req.tags, 'tags');
      if (tags.length === 0) throw invalid('tags', 'must list at least one tag');
      if (action === 'tag') return (row) => ({ tags: rules.normaliseTags([...row.tags, ...tags], 'tags') });
      const gone = new Set(tags.map((t) => t.toLowerCase()));
      return (row) => ({ tags: row.tags.filter((t) => !gone.has(t.toLowerCase())) });
    }
    case 'status': {
      if (!req.status && req.statusId === undefined) throw invalid('status', 'send status and/or statusId');
      const status = req.status ? oneOf(req.status, rules.CONTACT_STATUSES, 'status') : undefined;
      const statusId = req.statusId === undefined ? undefined : req.statusId || null;
      // The org's custom statuses, checked as PUT /contacts/:id checks them.
      await assertStatusId(deps, ctx.orgId, statusId);
      return () => ({ ...(status ? { status } : {}), ...(statusId !== undefined ? { statusId: statusId?.toLowerCase() ?? null } : {}) });
    }
    case 'assign': {
      if (req.assignedUserId === undefined) throw invalid('assignedUserId', 'is required (a user id, or null)');
      const assignedUserId = req.assignedUserId ? req.assignedUserId.toLowerCase() : null;
      await assertAssignee(deps, ctx, assignedUserId);
      return () => ({ assignedUserId });
    }
  }
}

/** One contact's refusal: the rule's stable code (e.g. too many tags → invalid_argument). */
function failureOf(id: string, err: unknown): BulkFailure {
  if (!(err instanceof AppError)) throw err;
  return { id, code: err.code };
}

/** As PUT /contacts/:id per contact (only real changes written, each with an activity and one contact.updated), in one pass. */
async function applyPatches(
  tx: PoolClient,
  contacts: ContactWriter,
  orgId: string,
  rows: repo.ContactRow[],
  patchOf: PatchOf,
): Promise<BulkFailure[]> {
  const failed: BulkFailure[] = [];
  const items: { before: repo.ContactRow; patch: BulkPatch }[] = [];
  for (const row of rows) {
    try {
      items.push({ before: row, patch: patchOf(row) });
    } catch (err) {
      failed.push(failureOf(row.id, err));
    }
  }
  await contacts.updateBulk(tx, orgId, items);
  return failed;
}

/** As DELETE /contacts/:id per contact (one contact.deleted each), in one statement. */
async function deleteRows(tx: PoolClient, contacts: ContactWriter, orgId: string, rows: repo.ContactRow[]): Promise<BulkFailure[]> {
  await contacts.deleteMany(
    tx,
    orgId,
    rows.map((r) => r.id),
  );
  return [];
}

/**
 * POST /contacts/bulk → {updated, failed}. Parameters are checked first (400 naming the field; delete needs team
 * lead or above, else 403 for the whole request); then one transaction locks the org's contacts among the ids
 * (≤ 1,000, in id order), applies the action, publishes what the single operation publishes per contact and
 * records the one audit entry, which therefore exists exactly when the changes do. `updated` counts the contacts
 * the action succeeded on, including those already as asked (they publish nothing).
 */
export async function bulkUpdate(deps: ContactsDeps, ctx: OrgContext, req: BulkContactsRequest) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const action: Action = oneOf(req.action, rules.BULK_ACTIONS, 'action');
  if (action === 'delete' && roleRank(ctx.role) < roleRank('team_lead'))
    throw forbidden('Only team leads, admins and owners delete contacts in bulk');
  const { valid, malformed } = bulkIds(req.ids, rules.BULK_MAX_IDS);
  const patchOf = action === 'delete' ? undefined : await preparePatch(deps, ctx, action, req);

  const result = await withTransaction(deps.pool, async (tx) => {
    // Under "assigned" inbox visibility an agent's hidden contacts fail as not_found, like another org's.
    const rows = await repo.lockMany(tx, orgId, valid, viewerOf(ctx));
    const found = new Set(rows.map((r) => r.id));
    const failed: BulkFailure[] = [
      ...malformed.map((id) => ({ id, code: 'not_found' })),
      ...valid.filter((id) => !found.has(id)).map((id) => ({ id, code: 'not_found' })),
    ];
    const writer = deps.contactWriter.inTrace(ctx.traceparent);
    if (rows.length > 0)
      failed.push(
        ...(patchOf
          ? await writer.batch(tx, (contacts) => applyPatches(tx, contacts, orgId, rows, patchOf))
          : await deleteRows(tx, writer, orgId, rows)),
      );
    const refused = new Set(failed.map((f) => f.id));
    const updatedIds = rows.map((r) => r.id).filter((id) => !refused.has(id));
    await recordAudit(tx, ctx, {
      action: `contacts.bulk_${action}`,
      resourceType: 'contact',
      details: {
        requested: valid.length + malformed.length,
        updated: updatedIds.length,
        failed: failed.length,
        ids: updatedIds,
        failedIds: failed.map((f) => f.id),
        params: paramsOf(action, req),
      },
    });
    return { updated: updatedIds.length, failed };
  });
  deps.log.debug({ action, updated: result.updated, failed: result.failed.length, ...traceFields(ctx) }, 'contacts bulk action');
  return result;
}

/** What the audit entry says was asked, beside the ids. */
function paramsOf(action: Action, req: BulkContactsRequest): Record<string, unknown> {
  switch (action) {
    case 'tag':
    case 'untag':
      return { tags: req.tags ?? [] };
    case 'status':
      return { ...(req.status ? { status: req.status } : {}), ...(req.statusId !== undefined ? { statusId: req.statusId || null } : {}) };
    case 'assign':
      return { assignedUserId: req.assignedUserId || null };
    case 'delete':
      return {};
  }
}
