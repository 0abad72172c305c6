import type { crm } from '@crm/proto-types';

type Integration = crm.Integration__Output;
type LeadSync = crm.LeadSync__Output;
type SocialnetCredentials = crm.SocialnetCredentials__Output;

/** A connected page: its config back to an object. */
export function integrationOut(i: Integration) {
  return {
    id: i.id,
    type: i.type,
    name: i.name,
    status: i.status,
    config: JSON.parse(i.configJson || '{}') as Record<string, unknown>,
    lastSync: i.lastSync ?? null,
    createdAt: i.createdAt,
  };
}

/** Whether a token is stored and its mask; never the token. */
export function credentialsOut(c: SocialnetCredentials) {
  return { hasToken: c.hasToken, tokenMask: c.tokenMask, updatedAt: c.updatedAt ?? null };
}

export function leadSyncOut(l: LeadSync) {
  return {
    syncId: l.id,
    integrationId: l.integrationId,
    pageId: l.pageId,
    formId: l.formId,
    status: l.status,
    estimatedCount: l.estimatedCount,
    counts: l.counts,
    skippedLeads: l.skippedLeads.map((s) => ({ leadId: s.leadId, reason: s.reason })),
    error: l.errorCode ? { code: l.errorCode, message: l.errorMessage ?? '' } : null,
    createdAt: l.createdAt,
    updatedAt: l.updatedAt,
    completedAt: l.completedAt ?? null,
  };
}

/** A sync just asked for: a second ask while one runs answers the running one (alreadyRunning). */
export function leadSyncStartedOut(l: LeadSync) {
  return { syncId: l.id, status: l.status, estimatedCount: l.estimatedCount, alreadyRunning: !l.started };
}
