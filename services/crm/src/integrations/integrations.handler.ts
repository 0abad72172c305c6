import type { HandlersFor } from '@crm/grpc-kit';
import type { IntegrationDeps } from './deps';
import * as integrations from './integrations';
import * as credentials from './socialnet/credentials';
import * as sync from './socialnet/lead-sync';
import * as pages from './socialnet/pages';
import * as sandbox from './socialnet/sandbox-control';

/** crm.v1.IntegrationsService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function integrationsHandlers(d: IntegrationDeps): HandlersFor<'crm.v1.IntegrationsService'> {
  return {
    ListIntegrations: (_req, ctx) => integrations.list(d, ctx),
    DisconnectIntegration: (req, ctx) => integrations.disconnect(d, ctx, req.id),

    GetSocialnetCredentials: (_req, ctx) => credentials.get(d, ctx),
    SetSocialnetCredentials: (req, ctx) => credentials.set(d, ctx, req),

    ListSocialnetPages: (_req, ctx) => pages.listPages(d, ctx),
    ConnectSocialnetPage: (req, ctx) => pages.connect(d, ctx, req.id),
    ListSocialnetForms: (req, ctx) => pages.listForms(d, ctx, req.id),

    StartLeadSync: (req, ctx) => sync.start(d, ctx, req),
    GetLeadSync: (req, ctx) => sync.get(d, ctx, req.id),

    SandboxCreatePage: (req, ctx) => sandbox.createPage(d, ctx, req),
    SandboxCreateForm: (req, ctx) => sandbox.createForm(d, ctx, req),
    SandboxAddLeads: (req, ctx) => sandbox.addLeads(d, ctx, req),
    SandboxSetOutage: (req, ctx) => sandbox.setOutage(d, ctx, req),
    SandboxRevokeToken: (req, ctx) => sandbox.revokeToken(d, ctx, req.id),
  };
}
