import { randomUUID } from 'node:crypto';
import { withTransaction } from '@crm/db';
import { AppError, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import type { IntegrationDeps } from '../deps';
import * as integrations from '../integrations.repo';
import { credentialsOf } from './credentials';
import { SocialnetError } from './driver';
import { NETWORK_ID, networkAppError, onNetwork } from './network-errors';
import { pageAccessOf, tokenAad } from './page-access';

export const SOCIALNET = 'socialnet';
/** Pages whose forms are counted at once when listing (each count is one network call for HTTP networks). */
const FORM_COUNT_PARALLEL = 4;

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** The network's pages the org can reach, each with whether we hold a working connection to it. */
export async function listPages(d: IntegrationDeps, ctx: OrgContext) {
  const { orgId } = ctx;
  const credentials = await credentialsOf(d, ctx);
  const pages = await onNetwork(() => d.driver.listPages(credentials));
  const connected = await integrations.connectedExternalIds(d.pool, orgId, SOCIALNET);
  const formCounts = await mapLimit(pages, FORM_COUNT_PARALLEL, (p) =>
    onNetwork(() => d.driver.listForms({ orgId, id: p.id, accessToken: p.accessToken })).then((f) => f.length),
  );
  return {
    data: pages.map((p, i) => ({ id: p.id, name: p.name, followers: p.followers, connected: connected.has(p.id), formCount: formCounts[i] })),
  };
}

/**
 * Connect a page: the integration is created (or re-activated: one row per page and org) with the page token
 * the network hands out, encrypted at rest and bound to the row. Owners and admins only.
 */
export async function connect(d: IntegrationDeps, ctx: OrgContext, pageId: string) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  if (!NETWORK_ID.test(pageId ?? '')) throw notFound('Page');
  const credentials = await credentialsOf(d, ctx);
  const page = (await onNetwork(() => d.driver.listPages(credentials))).find((p) => p.id === pageId);
  if (!page) throw notFound('Page');
  const forms = await onNetwork(() => d.driver.listForms({ orgId, id: page.id, accessToken: page.accessToken }));
  const config = { pageId: page.id, formCount: forms.length };
  return withTransaction(d.pool, async (tx) => {
    // Insert first, then lock whichever row exists: the token's AAD needs the id of the row it is stored in.
    const created = await integrations.insertIfMissing(tx, {
      id: randomUUID(),
      orgId,
      type: SOCIALNET,
      name: page.name,
      externalId: page.id,
      config,
    });
    const row = (await integrations.findByExternalId(tx, orgId, SOCIALNET, page.id, true))!;
    const tokenEnc = d.box.encrypt(page.accessToken, tokenAad(orgId, row.id));
    const updated = await integrations.markConnected(tx, orgId, row.id, { name: page.name, config: { ...row.config, ...config }, tokenEnc });
    return { integration: integrations.toIntegration(updated), created };
  });
}

function notConnected(status: integrations.IntegrationStatus | undefined): AppError {
  const message = status === 'auth_expired' ? "The page's access has expired; connect it again" : 'The page is not connected; connect it first';
  return new AppError('failed_precondition', message, { code: 'page_not_connected', details: [{ field: 'pageId', message }] });
}

/**
 * The org's connected page and how to address it. A page the org cannot reach at all is 404; one it can
 * reach but has not connected (or whose token expired) is 422 page_not_connected.
 */
export async function connectedPage(d: IntegrationDeps, ctx: OrgContext, pageId: string) {
  const { orgId } = ctx;
  if (!NETWORK_ID.test(pageId ?? '')) throw notFound('Page');
  const row = await integrations.findByExternalId(d.pool, orgId, SOCIALNET, pageId);
  if (row?.status === 'connected' && row.access_token_enc) return { row, access: pageAccessOf(d.box, row) };
  const credentials = await credentialsOf(d, ctx);
  const reachable = (await onNetwork(() => d.driver.listPages(credentials))).some((p) => p.id === pageId);
  if (!reachable) throw notFound('Page');
  throw notConnected(row?.status);
}

/** A network call for a connected page; a refused token marks the integration auth_expired on the way out. */
export async function onPage<T>(d: IntegrationDeps, row: integrations.IntegrationRow, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof SocialnetError && err.kind === 'auth_expired') {
      await integrations.markAuthExpired(d.pool, row.org_id, row.id);
      throw notConnected('auth_expired');
    }
    if (err instanceof SocialnetError) throw networkAppError(err);
    throw err;
  }
}

export async function listForms(d: IntegrationDeps, ctx: OrgContext, pageId: string) {
  const { row, access } = await connectedPage(d, ctx, pageId);
  const forms = await onPage(d, row, () => d.driver.listForms(access));
  return { data: forms.map((f) => ({ id: f.id, pageId: f.pageId, name: f.name, leadCount: f.leadCount })) };
}
