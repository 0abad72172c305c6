import type { Queryable } from '@crm/db';
import type { EventEnvelope } from './envelope';
import { enqueueEvent, type NewEvent } from './outbox';

/**
 * Audit entries travel from every service to identity, which keeps the organization's audit log.
 * The event is internal: the webhooks service offers only its own catalogue, which never lists it.
 */
export const AUDIT_RECORDED = 'audit.recorded';

export type AuditActorType = 'user' | 'api_key' | 'system';

/** The payload of `audit.recorded`, the same shape whichever service records it. */
export interface AuditRecorded {
  actorId: string | null;
  actorType: AuditActorType;
  /** `<resource>.<verb>`, e.g. `contact.deleted`, `user.role_changed`. */
  action: string;
  resourceType: string;
  resourceId: string | null;
  /** What changed, in words a reader of the log understands. Never a secret: masks at most. */
  details: Record<string, unknown>;
  ip: string | null;
  requestId: string | null;
}

/**
 * The verified caller as a service's handler sees it (structurally grpc-kit's CallContext, which this package
 * does not import). `caller` is who signed the call: 'gateway' for a request from outside.
 */
export interface AuditCaller {
  orgId: string;
  userId?: string;
  requestId?: string;
  clientIp?: string;
  caller?: string;
  /** The trace the entry continues: a handler's `ctx.traceparent` (none when the service acts on its own). */
  traceparent?: string;
}

export interface AuditAction {
  action: string;
  resourceType: string;
  resourceId?: string | null;
  details?: Record<string, unknown>;
}

/**
 * Who acted: a signed-in user; else, for a request the gateway signed without a user, an integration's API key
 * (the gateway's only user-less credential inside an organization); else the system (a service on its own).
 */
export function auditActor(ctx: AuditCaller): { actorId: string | null; actorType: AuditActorType } {
  if (ctx.userId) return { actorId: ctx.userId, actorType: 'user' };
  return { actorId: null, actorType: ctx.caller === 'gateway' ? 'api_key' : 'system' };
}

/** The `audit.recorded` payload for an action taken by `ctx`. */
export function auditEntry(ctx: AuditCaller, a: AuditAction): AuditRecorded {
  return {
    ...auditActor(ctx),
    action: a.action,
    resourceType: a.resourceType,
    resourceId: a.resourceId ?? null,
    details: a.details ?? {},
    ip: ctx.clientIp || null,
    requestId: ctx.requestId || null,
  };
}

export function auditEvent(ctx: AuditCaller, a: AuditAction): NewEvent {
  return { type: AUDIT_RECORDED, orgId: ctx.orgId, data: auditEntry(ctx, a), traceparent: ctx.traceparent };
}

/**
 * Record an audit entry through the outbox. Call it with the transaction that makes the change, so the entry
 * exists exactly when the change committed.
 */
export function recordAudit(db: Queryable, ctx: AuditCaller, a: AuditAction): Promise<EventEnvelope> {
  return enqueueEvent(db, auditEvent(ctx, a));
}
