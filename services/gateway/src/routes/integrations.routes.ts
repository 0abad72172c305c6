import { type RequestHandler, Router } from 'express';
import { z } from 'zod';
import { sandboxRoutesEnabled } from '../config';
import { MessageBody } from './common.schemas';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { answered } from '../http/shape';
import type { RouteDeps, ServiceRoutes } from './deps';
import { credentialsOut, integrationOut, leadSyncOut, leadSyncStartedOut } from './integrations.out';
import {
  Credentials,
  CredentialsStatus,
  Integration,
  LeadSync,
  LeadSyncStarted,
  SandboxForm,
  SandboxFormCreated,
  SandboxLead,
  SandboxLeads,
  SandboxLeadsAdded,
  SandboxOutage,
  SandboxPage,
  SandboxPageCreated,
  SocialnetForms,
  SocialnetPages,
  SyncRequest,
} from './integrations.schemas';

function leadIn(l: z.infer<typeof SandboxLead>) {
  const { id, fullName, phone, email, fields, ...rest } = l;
  const answers: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...rest, ...(fields ?? {}) })) answers[k] = String(v);
  return { id: id ?? '', fullName, phone, email, fields: answers };
}

const crm = (deps: RouteDeps) => deps.clients.crmIntegrations;

/**
 * Integrations (crm): the social network's pages and lead forms, connecting pages, lead syncs. Calls that reach
 * the network answer 422 when the token is missing or expired, 429 when the network rate-limits, 503 when it
 * does not answer. Internal API (bearer). Served and documented from these declarations.
 */
export const integrationRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Integrations' });

integrationRoutes.route('GET /integrations', {
  summary: 'The organization’s integrations (connected, disconnected or expired), oldest first',
  response: z.array(Integration),
  handler: async ({ ctx, deps }) => (await crm(deps).ListIntegrations({}, ctx)).data.map(integrationOut),
});
integrationRoutes.route('DELETE /integrations/:id', {
  summary: 'Disconnect an integration: its token is erased, the record kept (admins and owners)',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await crm(deps).DisconnectIntegration({ id: param('id') }, ctx);
  },
});
integrationRoutes.route('GET /integrations/socialnet/credentials', {
  summary: 'Whether a social-network user token is stored (masked)',
  response: CredentialsStatus,
  handler: async ({ ctx, deps }) => credentialsOut(await crm(deps).GetSocialnetCredentials({}, ctx)),
});
integrationRoutes.route('PUT /integrations/socialnet/credentials', {
  summary: 'Store the social-network user token ("" removes it; admins and owners)',
  body: Credentials,
  response: CredentialsStatus,
  handler: async ({ body, ctx, deps }) => credentialsOut(await crm(deps).SetSocialnetCredentials(body, ctx)),
});
integrationRoutes.route('GET /integrations/socialnet/pages', {
  summary: 'The pages the token reaches, each with whether it is connected and its form count',
  response: SocialnetPages,
  errors: [422, 503],
  handler: async ({ ctx, deps }) => (await crm(deps).ListSocialnetPages({}, ctx)).data,
});
integrationRoutes.route('POST /integrations/socialnet/pages/:id/connect', {
  summary: 'Connect a page (201 the first time, 200 when it is connected again; admins and owners)',
  status: [200, 201],
  response: Integration,
  errors: [422, 503],
  handler: async ({ res, param, ctx, deps }) => {
    const out = await crm(deps).ConnectSocialnetPage({ id: param('id') }, ctx);
    if (out.created) res.status(201);
    return integrationOut(answered(out.integration, 'crm ConnectSocialnetPage: integration'));
  },
});
integrationRoutes.route('GET /integrations/socialnet/pages/:id/forms', {
  summary: 'The lead forms of a connected page (422 when it is not connected)',
  response: SocialnetForms,
  errors: [422, 503],
  handler: async ({ param, ctx, deps }) => (await crm(deps).ListSocialnetForms({ id: param('id') }, ctx)).data,
});
integrationRoutes.route('POST /integrations/socialnet/leads/sync', {
  summary: 'Import a form’s leads as contacts, in the background; a sync of that form already running is answered instead',
  body: SyncRequest,
  status: 202,
  response: LeadSyncStarted,
  errors: [404, 422, 503],
  handler: async ({ body, ctx, deps }) => leadSyncStartedOut(await crm(deps).StartLeadSync(body, ctx)),
});
integrationRoutes.route('GET /integrations/socialnet/leads/sync/:syncId', {
  summary: 'A lead sync’s progress and outcome',
  response: LeadSync,
  handler: async ({ param, ctx, deps }) => leadSyncOut(await crm(deps).GetLeadSync({ id: param('syncId') }, ctx)),
});

/**
 * The sandbox social network's control routes: mounted outside production; crm answers 404 unless
 * SOCIALNET_DRIVER=sandbox. Owners and admins (sandbox:control); everything in the caller's organization.
 */
export const socialnetSandboxRoutes = routeArea({
  prefix: '/sandbox/socialnet',
  auth: 'bearer',
  tag: 'Sandbox social network',
  sandbox: 'socialnet',
});

socialnetSandboxRoutes.route('POST /pages', {
  summary: 'Create a page on the sandbox network (then list and connect it under /api/v1/integrations/socialnet)',
  body: SandboxPage,
  status: 201,
  response: SandboxPageCreated,
  // crm's answer while the sandbox driver is off.
  errors: [404],
  handler: async ({ body, ctx, deps }) => crm(deps).SandboxCreatePage(body, ctx),
});
socialnetSandboxRoutes.route('POST /pages/:pageId/forms', {
  summary: 'Create a lead form on a page',
  body: SandboxForm,
  status: 201,
  response: SandboxFormCreated,
  handler: async ({ param, body, ctx, deps }) => crm(deps).SandboxCreateForm({ pageId: param('pageId'), ...body }, ctx),
});
socialnetSandboxRoutes.route('POST /forms/:formId/leads', {
  summary: 'Submit leads to a form (ids the network already has are left as they were)',
  body: SandboxLeads,
  response: SandboxLeadsAdded,
  handler: async ({ param, body, ctx, deps }) => crm(deps).SandboxAddLeads({ formId: param('formId'), leads: body.leads.map(leadIn) }, ctx),
});
socialnetSandboxRoutes.route('POST /pages/:pageId/outage', {
  summary: 'Make fetching a form’s leads fail past afterLeads leads (null ends the outage)',
  body: SandboxOutage,
  response: MessageBody,
  handler: async ({ param, body, ctx, deps }) => {
    const out = await crm(deps).SandboxSetOutage({ pageId: param('pageId'), afterLeads: body.afterLeads ?? undefined }, ctx);
    return { message: out.message };
  },
});
socialnetSandboxRoutes.route('POST /pages/:pageId/revoke', {
  summary: 'Revoke the page’s access token, as the network would',
  response: MessageBody,
  handler: async ({ param, ctx, deps }) => {
    const out = await crm(deps).SandboxRevokeToken({ id: param('pageId') }, ctx);
    return { message: out.message };
  },
});

/**
 * Integrations (internal API) and the sandbox network's control routes at the root. The sandbox routes need an
 * owner's or admin's bearer token; crm answers 404 for them unless SOCIALNET_DRIVER=sandbox, and in production they
 * are not mounted at all.
 */
export function integrationsRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  const root = Router();
  // The chat network's module may have checked the token already (its `/sandbox` prefix covers these paths):
  // check once, so a call spends one unit of the per-user rate limit.
  const bearerOnce: RequestHandler = (req, res, next) => (res.locals.principal ? next() : deps.auth.bearer(req, res, next));
  root.use('/sandbox/socialnet', bearerOnce, socialnetSandboxRoutes.router(deps, contract));
  return { internal: integrationRoutes.router(deps, contract), root: sandboxRoutesEnabled(deps.config) ? root : undefined };
}
