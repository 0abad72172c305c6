import { withTransaction } from '@crm/db';
import { notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { isUuid } from '../shared';
import type { IntegrationDeps } from './deps';
import * as repo from './integrations.repo';
import { failRunningOf } from './socialnet/syncs.repo';

/** Every integration of the org (connected, disconnected or with an expired token), oldest first. */
export async function list(d: IntegrationDeps, ctx: OrgContext) {
  const { orgId } = ctx;
  return { data: (await repo.listIntegrations(d.pool, orgId)).map(repo.toIntegration) };
}

/**
 * Disconnect: the token is erased and the row kept (status disconnected) with its lastSync; a sync still
 * running for it fails with page_not_connected. Owners and admins only.
 */
export async function disconnect(d: IntegrationDeps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Integration');
  await withTransaction(d.pool, async (tx) => {
    if (!(await repo.markDisconnected(tx, orgId, id))) throw notFound('Integration');
    await failRunningOf(tx, orgId, id, 'page_not_connected', 'The page was disconnected before the sync finished');
  });
  return { ok: true, message: 'Integration disconnected' };
}
