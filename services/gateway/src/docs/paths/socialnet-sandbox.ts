import { SandboxForm, SandboxLeads, SandboxOutage, SandboxPage } from '../../routes/integrations.routes';
import { reply } from '../proto-schema';
import { area } from '../registry';
import { MessageBody } from '../schemas/common';

/**
 * The sandbox social network's control routes: mounted outside production; crm answers 404 unless
 * SOCIALNET_DRIVER=sandbox. Owners and admins (sandbox:control); everything in the caller's organization.
 */
const sandbox = area({ prefix: '/sandbox/socialnet', auth: 'bearer', tag: 'Sandbox social network', sandbox: 'socialnet' });
sandbox.op('POST /pages', {
  summary: 'Create a page on the sandbox network (then list and connect it under /api/v1/integrations/socialnet)',
  body: SandboxPage,
  responses: { 201: reply('crmIntegrations', 'SandboxCreatePage') },
  // crm's answer while the sandbox driver is off.
  errors: [404],
});
sandbox.op('POST /pages/:pageId/forms', {
  summary: 'Create a lead form on a page',
  body: SandboxForm,
  responses: { 201: reply('crmIntegrations', 'SandboxCreateForm') },
});
sandbox.op('POST /forms/:formId/leads', {
  summary: 'Submit leads to a form (ids the network already has are left as they were)',
  body: SandboxLeads,
  responses: { 200: reply('crmIntegrations', 'SandboxAddLeads') },
});
sandbox.op('POST /pages/:pageId/outage', {
  summary: 'Make fetching a form’s leads fail past afterLeads leads (null ends the outage)',
  body: SandboxOutage,
  responses: { 200: MessageBody },
});
sandbox.op('POST /pages/:pageId/revoke', { summary: 'Revoke the page’s access token, as the network would', responses: { 200: MessageBody } });

export const socialnetSandboxOps = sandbox.ops;
