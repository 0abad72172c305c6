import type { z } from 'zod';
import { answered } from '../http/shape';
import type { crm } from '@crm/proto-types';
import type { CredentialsStatus, Integration as IntegrationOut, LeadSync as LeadSyncOut, LeadSyncStarted } from './integrations.schemas';

type Integration = crm.Integration__Output;
type LeadSync = crm.LeadSync__Output;
type SocialnetCredentials = crm.SocialnetCredentials__Output;

/** A connected page: its config back to an object. */
export function integrationOut(i: Integration): z.input<typeof IntegrationOut> {
  return {
    id: i.id,
    type: i.type,
    name: i.name,
    status: i.status as z.input<typeof IntegrationOut>['status'],
    config: JSON.parse(i.configJson || '{}') as Record<string, unknown>,
    lastSync: i.lastSync ?? null,
    createdAt: i.createdAt,
  };
}

/** Whether a token is stored and its mask; never the token. */
export function credentialsOut(c: SocialnetCredentials): z.input<typeof CredentialsStatus> {
  return { hasToken: c.hasToken, tokenMask: c.tokenMask, updatedAt: c.updatedAt ?? null };
}

export function leadSyncOut(l: LeadSync): z.input<typeof LeadSyncOut> {
  return {
    syncId: l.id,
    integrationId: l.integrationId,
    pageId: l.pageId,
    formId: l.formId,
    status: l.status as z.input<typeof LeadSyncOut>['status'],
    estimatedCount: l.estimatedCount,
    counts: answered(l.counts, 'crm LeadSync: counts'),
    skippedLeads: l.skippedLeads.map((s) => ({ leadId: s.leadId, reason: s.reason })),
    error: l.errorCode ? { code: l.errorCode, message: l.errorMessage ?? '' } : null,
    createdAt: l.createdAt,
    updatedAt: l.updatedAt,
    completedAt: l.completedAt ?? null,
  };
}

/** A sync just asked for: a second ask while one runs answers the running one (alreadyRunning). */
export function leadSyncStartedOut(l: LeadSync): z.input<typeof LeadSyncStarted> {
  return { syncId: l.id, status: l.status, estimatedCount: l.estimatedCount, alreadyRunning: !l.started };
}
