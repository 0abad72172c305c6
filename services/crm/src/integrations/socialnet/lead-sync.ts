import { randomUUID } from 'node:crypto';
import { AppError, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { isUuid, requireText } from '../../shared';
import type { IntegrationDeps } from '../deps';
import { NETWORK_ID } from './network-errors';
import { connectedPage, onPage } from './pages';
import * as syncs from './syncs.repo';

/**
 * Start a lead sync of one form of a connected page: stored as `processing` and worked in the background by
 * the sync worker (woken at commit). A sync of that form already running is returned instead of a second
 * one (`started` false). Any member who may create contacts may start one: it only imports leads of pages
 * an admin connected, and importing is idempotent.
 */
export async function start(d: IntegrationDeps, ctx: OrgContext, req: { pageId?: string; formId?: string }) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const pageId = requireText(req.pageId, 'pageId', 128);
  const formId = requireText(req.formId, 'formId', 128);
  if (!NETWORK_ID.test(formId)) throw notFound('Form');
  const { row, access } = await connectedPage(d, ctx, pageId);
  const form = (await onPage(d, row, () => d.driver.listForms(access))).find((f) => f.id === formId);
  if (!form) throw notFound('Form');
  // The insert loses only to a running sync of the form; that one may finish between the two statements.
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await syncs.insertSync(d.pool, {
      id: randomUUID(),
      orgId,
      integrationId: row.id,
      pageId,
      formId,
      estimatedCount: form.leadCount,
      requestedBy: isUuid(ctx.userId) ? ctx.userId : null,
    });
    if (inserted) return syncs.toLeadSync(inserted, true);
    const running = await syncs.runningSync(d.pool, orgId, pageId, formId);
    if (running) return syncs.toLeadSync(running, false);
  }
  throw new AppError('unavailable', 'The form is being synced concurrently; try again');
}

export async function get(d: IntegrationDeps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const row = isUuid(id) ? await syncs.findSync(d.pool, orgId, id) : undefined;
  if (!row) throw notFound('Lead sync');
  return syncs.toLeadSync(row);
}
