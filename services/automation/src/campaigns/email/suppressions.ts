import { invalid, notFound, requireCan, requireUser, traceFields, type CallContext, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../../deps';
import { markOpened, recipientForLink } from './email-links.repo';
import * as repo from './email-suppressions.repo';
import { validEmail } from '../../email-channel';
import { LinkPurpose, LinkSigner } from '../../email-links';

/** GET /email-suppressions: campaign managers see who will not be emailed. */
export async function list(deps: Deps, ctx: OrgContext, req: { page?: number; limit?: number }) {
  requireCan(ctx, 'campaigns:manage');
  const { orgId } = requireUser(ctx);
  return repo.listSuppressions(deps.pool, orgId, { page: Math.max(1, req.page || 1), limit: Math.min(100, Math.max(1, req.limit || 50)) });
}

/** DELETE /email-suppressions/:email: admins and owners only (emailing someone who unsubscribed again is their call). */
export async function remove(deps: Deps, ctx: OrgContext, req: { email?: string }) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = requireUser(ctx);
  const email = (req.email ?? '').trim();
  if (!validEmail(email)) throw invalid('email', 'must be an email address');
  if (!(await repo.unsuppress(deps.pool, orgId, email))) throw notFound('Suppressed address');
  return { ok: true, message: 'The address will receive campaign emails again' };
}

/** The recipient a public link names, when its token verifies; not found otherwise (a forged or stale link). */
async function linked(deps: Deps, purpose: LinkPurpose, token: string | undefined) {
  const parsed = LinkSigner.parse(token ?? '');
  const rec = parsed ? await recipientForLink(deps.pool, parsed.campaignId, parsed.contactId) : undefined;
  if (!parsed || !rec || rec.type !== 'email' || !rec.email) throw notFound('Link');
  if (!deps.links.verify(purpose, { orgId: rec.org_id, email: rec.email, campaignId: parsed.campaignId, contactId: parsed.contactId }, parsed.mac))
    throw notFound('Link');
  return { ...rec, campaignId: parsed.campaignId, contactId: parsed.contactId };
}

/** GET /u/<token> (no sign-in): the address a genuine link names, for the page that asks to confirm; nothing changes. */
export async function checkUnsubscribeLink(deps: Deps, req: { token?: string }) {
  const rec = await linked(deps, 'unsubscribe', req.token);
  return { email: rec.email };
}

/** POST /u/<token> (no sign-in; the page's button or RFC 8058 one-click): the address joins the org's suppression list. Repeating it changes nothing. */
export async function unsubscribe(deps: Deps, ctx: CallContext, req: { token?: string }) {
  const rec = await linked(deps, 'unsubscribe', req.token);
  await repo.suppress(deps.pool, rec.org_id, rec.email, 'unsubscribed', rec.campaignId);
  deps.log.info({ orgId: rec.org_id, campaignId: rec.campaignId, ...traceFields(ctx) }, 'email: recipient unsubscribed');
  return { email: rec.email };
}

/** GET /o/<token>.gif (no sign-in): the first load of the pixel marks the recipient's email opened. */
export async function recordOpen(deps: Deps, req: { token?: string }) {
  const rec = await linked(deps, 'open', req.token);
  const first = await markOpened(deps.pool, rec.org_id, rec.campaignId, rec.contactId);
  return { ok: true, message: first ? 'opened' : 'already opened' };
}
