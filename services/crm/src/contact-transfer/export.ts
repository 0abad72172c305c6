import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import * as contacts from '../contacts';
import type { crm } from '@crm/proto-types';
import { contactFilter } from '../contacts';
import { isUuid } from '../shared';
import type { Deps } from '../deps';

const PAGE_DEFAULT = 500;
const PAGE_MAX = 1000;

/**
 * ExportContacts: one page of the contacts the list's filters match, in id order after `afterId`; team leads and
 * above (contacts:export). Inbox visibility applies as in the list.
 */
export async function exportPage(deps: Deps, ctx: OrgContext, req: crm.ExportContactsRequest__Output) {
  // Checked here, where the contacts live, whatever the caller checked before.
  requireCan(ctx, 'contacts:export');
  const { orgId } = ctx;
  const afterId = req.afterId;
  if (afterId && !isUuid(afterId)) throw invalid('afterId', 'must be a contact id');
  const limit = Math.min(PAGE_MAX, Math.max(1, req.limit || PAGE_DEFAULT));
  const f = await contactFilter(deps, ctx, { page: 1, limit: 1, ...(req.filters ?? {}) });
  if (!f) return { data: [], nextAfter: '' };
  const rows = await contacts.listContactsById(deps.pool, orgId, f, afterId.toLowerCase(), limit);
  return { data: rows.map((r) => contacts.toContact(r)), nextAfter: rows.length === limit ? rows[rows.length - 1].id : '' };
}

/** RecordContactTransfer: the one audit entry of a finished import (team lead and above) or export. */
export async function recordTransfer(deps: Deps, ctx: OrgContext, req: crm.ContactTransferSummary__Output) {
  if (req.kind === 'import') {
    requireCan(ctx, 'contacts:import');
    await withTransaction(deps.pool, (tx) =>
      recordAudit(tx, ctx, {
        action: 'contacts.imported',
        resourceType: 'contact',
        details: { created: req.created ?? 0, updated: req.updated ?? 0, failed: req.failed ?? 0 },
      }),
    );
  } else if (req.kind === 'export') {
    requireCan(ctx, 'contacts:export');
    let filters: unknown = {};
    try {
      filters = JSON.parse(req.filtersJson || '{}');
    } catch {
      throw invalid('filtersJson', 'must be JSON');
    }
    await withTransaction(deps.pool, (tx) =>
      recordAudit(tx, ctx, { action: 'contacts.exported', resourceType: 'contact', details: { exported: req.exported ?? 0, filters } }),
    );
  } else {
    throw invalid('kind', 'must be one of import, export');
  }
  return { ok: true, message: 'Recorded' };
}
