import { eventually } from '@crm/testing';
import type { Client } from './http';

export interface AuditEntryOut {
  id: string;
  actorId: string | null;
  actorType: 'user' | 'api_key' | 'system';
  action: string;
  resourceType: string;
  resourceId: string | null;
  details: Record<string, any>;
  ip: string | null;
  requestId: string | null;
  createdAt: string;
}

/** The audit log's entries for one action (newest first), as an admin or owner reads them. */
export async function auditEntries(admin: Client, action: string): Promise<AuditEntryOut[]> {
  const res = await admin.get(`/api/v1/audit-log?action=${encodeURIComponent(action)}&limit=100`);
  if (res.status !== 200) throw new Error(`GET /audit-log: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/**
 * Waits for the entry of `action` on `resourceId`: entries recorded by other services travel through their
 * outbox and the bus before identity stores them.
 */
export function auditEntryFor(admin: Client, action: string, resourceId: string | null, timeoutMs = 15_000): Promise<AuditEntryOut> {
  return eventually(async () => (await auditEntries(admin, action)).find((e) => e.resourceId === resourceId), timeoutMs, 100);
}
