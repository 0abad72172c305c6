import { z } from 'zod';
import type { credentialsOut, integrationOut, leadSyncOut, leadSyncStartedOut } from '../../routes/integrations.out';
import { Credentials, SyncRequest } from '../../routes/integrations.routes';
import { proto, replyItem } from '../proto-schema';
import { area } from '../registry';
import { keysMatch } from '../schemas/check';

const INTEGRATIONS = 'crm/v1/integrations.proto';

/** integrations.out integrationOut: config as an object. */
const Integration = z.object({
  id: z.string(),
  type: z.string().meta({ description: 'socialnet' }),
  name: z.string(),
  status: z.enum(['connected', 'disconnected', 'auth_expired']),
  config: z.record(z.string(), z.unknown()).meta({ description: '{pageId, formCount} for socialnet' }),
  lastSync: z.string().nullable(),
  createdAt: z.string(),
});
keysMatch<z.infer<typeof Integration>, ReturnType<typeof integrationOut>>(true);

/** integrations.out credentialsOut: only whether a token is stored, and its mask. */
const CredentialsStatus = z.object({ hasToken: z.boolean(), tokenMask: z.string(), updatedAt: z.string().nullable() });
keysMatch<z.infer<typeof CredentialsStatus>, ReturnType<typeof credentialsOut>>(true);

/** integrations.out leadSyncOut. */
const LeadSync = z.object({
  syncId: z.string(),
  integrationId: z.string(),
  pageId: z.string(),
  formId: z.string(),
  status: z.enum(['processing', 'completed', 'failed']),
  estimatedCount: z.number().int(),
  counts: proto(INTEGRATIONS, 'crm.v1.LeadSyncCounts'),
  skippedLeads: z.array(proto(INTEGRATIONS, 'crm.v1.SkippedLead')),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
});
keysMatch<z.infer<typeof LeadSync>, ReturnType<typeof leadSyncOut>>(true);

/** integrations.out leadSyncStartedOut. */
const LeadSyncStarted = z.object({ syncId: z.string(), status: z.string(), estimatedCount: z.number().int(), alreadyRunning: z.boolean() });
keysMatch<z.infer<typeof LeadSyncStarted>, ReturnType<typeof leadSyncStartedOut>>(true);

/**
 * Integrations (crm): the social network's pages and lead forms, connecting pages, lead syncs. Calls that reach
 * the network answer 422 when the token is missing or expired, 429 when the network rate-limits, 503 when it
 * does not answer.
 */
const integrations = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Integrations' });
integrations.op('GET /integrations', {
  summary: 'The organization’s integrations (connected, disconnected or expired), oldest first',
  responses: { 200: z.array(Integration) },
});
integrations.op('DELETE /integrations/:id', {
  summary: 'Disconnect an integration: its token is erased, the record kept (admins and owners)',
  responses: { 204: null },
});
integrations.op('GET /integrations/socialnet/credentials', {
  summary: 'Whether a social-network user token is stored (masked)',
  responses: { 200: CredentialsStatus },
});
integrations.op('PUT /integrations/socialnet/credentials', {
  summary: 'Store the social-network user token ("" removes it; admins and owners)',
  body: Credentials,
  responses: { 200: CredentialsStatus },
});
integrations.op('GET /integrations/socialnet/pages', {
  summary: 'The pages the token reaches, each with whether it is connected and its form count',
  responses: { 200: z.array(replyItem('crmIntegrations', 'ListSocialnetPages')) },
  errors: [422, 503],
});
integrations.op('POST /integrations/socialnet/pages/:id/connect', {
  summary: 'Connect a page (201 the first time, 200 when it is connected again; admins and owners)',
  responses: { 200: Integration, 201: Integration },
  errors: [422, 503],
});
integrations.op('GET /integrations/socialnet/pages/:id/forms', {
  summary: 'The lead forms of a connected page (422 when it is not connected)',
  responses: { 200: z.array(replyItem('crmIntegrations', 'ListSocialnetForms')) },
  errors: [422, 503],
});
integrations.op('POST /integrations/socialnet/leads/sync', {
  summary: 'Import a form’s leads as contacts, in the background; a sync of that form already running is answered instead',
  body: SyncRequest,
  responses: { 202: LeadSyncStarted },
  errors: [404, 422, 503],
});
integrations.op('GET /integrations/socialnet/leads/sync/:syncId', { summary: 'A lead sync’s progress and outcome', responses: { 200: LeadSync } });

// The sandbox social network's control routes are described in socialnet-sandbox.ts.
export const integrationOps = integrations.ops;
