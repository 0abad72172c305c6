import { AppError, invalid, notFound, requireCan, requireUser, OrgContext } from '@crm/grpc-kit';
import { requireText } from '../../shared';
import type { IntegrationDeps } from '../deps';
import { NETWORK_ID } from './network-errors';
import { networkId, networkToken } from './sandbox.driver';
import * as net from './sandbox.repo';

/**
 * The sandbox network's control API (like the chat network's): create pages and lead forms, deliver leads,
 * cut the network off (outage) and revoke a page token. Exists only with SOCIALNET_DRIVER=sandbox and needs
 * `sandbox:control` (owner, admin); everything is scoped to the caller's organization.
 */
function sandboxOn(d: IntegrationDeps, ctx: OrgContext): string {
  if (!d.sandbox) throw new AppError('not_found', 'Sandbox control is off (SOCIALNET_DRIVER is not sandbox)');
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'sandbox:control');
  return orgId;
}

const MAX_LEADS_PER_CALL = 5000;
const MAX_FIELDS = 50;
const LEAD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_FOLLOWERS = 2_000_000_000;

function count(value: number | undefined, field: string, max: number): number {
  const v = value ?? 0;
  if (!Number.isInteger(v) || v < 0 || v > max) throw invalid(field, `must be an integer from 0 to ${max}`);
  return v;
}

/** Network ids are random; a collision with an existing one is retried with a fresh id. */
async function withFreshId<T>(make: (id: string) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await make(networkId());
    } catch (err) {
      if ((err as { code?: string }).code !== '23505' || attempt >= 2) throw err;
    }
  }
}

async function ownPage(d: IntegrationDeps, orgId: string, pageId: string) {
  const page = NETWORK_ID.test(pageId ?? '') ? await net.findPage(d.pool, orgId, pageId) : undefined;
  if (!page) throw notFound('Page');
  return page;
}

export async function createPage(d: IntegrationDeps, ctx: OrgContext, req: { name?: string; followers?: number }) {
  const orgId = sandboxOn(d, ctx);
  const name = requireText(req.name, 'name', 200);
  const followers = count(req.followers, 'followers', MAX_FOLLOWERS);
  const row = await withFreshId((id) => net.insertPage(d.pool, { id, orgId, name, followers, accessToken: networkToken() }));
  return { id: row.id, name: row.name, followers: row.followers, connected: false, formCount: row.form_count };
}

export async function createForm(d: IntegrationDeps, ctx: OrgContext, req: { pageId?: string; name?: string }) {
  const orgId = sandboxOn(d, ctx);
  const name = requireText(req.name, 'name', 200);
  const page = await ownPage(d, orgId, req.pageId ?? '');
  const row = await withFreshId((id) => net.insertForm(d.pool, { id, orgId, pageId: page.id, name }));
  return { id: row.id, pageId: row.page_id, name: row.name, leadCount: row.lead_count };
}

interface LeadInput {
  id?: string;
  fullName?: string;
  phone?: string;
  email?: string;
  fields?: Record<string, string>;
}

/**
 * Leads as the network would hold them: not validated as contacts (a sync must cope with whatever people
 * typed), only bounded in size. Ids are the caller's or generated; ids the network already has are ignored.
 */
function leadOf(l: LeadInput, i: number): net.NewSandboxLead {
  const at = `leads[${i}]`;
  const id = l.id ? l.id.trim() : networkId();
  if (!LEAD_ID.test(id)) throw invalid(`${at}.id`, 'must be 1-64 letters, digits, - or _');
  const text = (value: string | undefined, field: string, max: number) => {
    const v = value ?? '';
    if (v.length > max) throw invalid(`${at}.${field}`, `must be at most ${max} characters`);
    return v;
  };
  const entries = Object.entries(l.fields ?? {});
  if (entries.length > MAX_FIELDS) throw invalid(`${at}.fields`, `must have at most ${MAX_FIELDS} entries`);
  const fields: Record<string, string> = {};
  for (const [k, v] of entries) fields[text(k, 'fields', 200)] = text(v, `fields.${k}`, 2000);
  return {
    leadId: id,
    data: { fullName: text(l.fullName, 'fullName', 500), phone: text(l.phone, 'phone', 100), email: text(l.email, 'email', 500), fields },
  };
}

export async function addLeads(d: IntegrationDeps, ctx: OrgContext, req: { formId?: string; leads?: LeadInput[] }) {
  const orgId = sandboxOn(d, ctx);
  const input = req.leads ?? [];
  if (input.length === 0) throw invalid('leads', 'must have at least one lead');
  if (input.length > MAX_LEADS_PER_CALL) throw invalid('leads', `must have at most ${MAX_LEADS_PER_CALL} leads`);
  const leads = input.map(leadOf);
  const form = NETWORK_ID.test(req.formId ?? '') ? await net.findForm(d.pool, orgId, req.formId!) : undefined;
  if (!form) throw notFound('Form');
  const added = await net.insertLeads(d.pool, orgId, form.id, leads);
  return { added: added.length, leadIds: leads.map((l) => l.leadId), leadCount: (await net.findForm(d.pool, orgId, form.id))!.lead_count };
}

export async function setOutage(d: IntegrationDeps, ctx: OrgContext, req: { pageId?: string; afterLeads?: number }) {
  const orgId = sandboxOn(d, ctx);
  const afterLeads = req.afterLeads === undefined || req.afterLeads === null ? null : count(req.afterLeads, 'afterLeads', MAX_FOLLOWERS);
  const page = await ownPage(d, orgId, req.pageId ?? '');
  await net.setOutage(d.pool, orgId, page.id, afterLeads);
  return { ok: true, message: afterLeads === null ? 'Outage ended' : `Fetching beyond ${afterLeads} leads of a form now fails` };
}

export async function revokeToken(d: IntegrationDeps, ctx: OrgContext, pageId: string) {
  const orgId = sandboxOn(d, ctx);
  const page = await ownPage(d, orgId, pageId);
  await net.replaceToken(d.pool, orgId, page.id, networkToken());
  return { ok: true, message: 'Page token revoked' };
}
