import { auditEntry, type AuditAction, type AuditRecorded, type ParsedEventData } from '@crm/events';
import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import type { Pool, Queryable } from '@crm/db';
import * as audit from '../db/audit-log.repo';
import { identityRules, isUuid, rejectNul } from '@crm/validation';

/** `user.created`, `contact.deleted` (a filter may end in `.*`: identityRules.AUDIT_ACTION_PATTERN). */
const ACTION = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/;
const SWEEP_BATCH = 5000;

/** identity's own changes: the entry is written in the change's transaction, no bus in between. */
export function record(db: Queryable, ctx: OrgContext, a: AuditAction): Promise<void> {
  return audit.insertEntry(db, ctx.orgId, auditEntry(ctx, a));
}

function instant(value: string | undefined, field: string): string | undefined {
  if (!value) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw invalid(field, 'must be an ISO 8601 timestamp');
  return new Date(t).toISOString();
}

/** GET /audit-log: admins and owners read their own organization's entries, newest first. */
export async function list(
  deps: { pool: Pool },
  ctx: OrgContext,
  req: { page: number; limit: number; actorId?: string; action?: string; dateFrom?: string; dateTo?: string },
) {
  requireCan(ctx, 'audit:view');
  if (req.actorId && !isUuid(req.actorId)) throw invalid('actorId', 'must be a user id');
  rejectNul(req.action, 'action');
  identityRules.auditActionFilter(req.action);
  return audit.listEntries(deps.pool, ctx.orgId, {
    page: Math.max(1, req.page || 1),
    limit: Math.min(100, Math.max(1, req.limit || 50)),
    actorId: req.actorId || undefined,
    action: req.action || undefined,
    dateFrom: instant(req.dateFrom, 'from'),
    dateTo: instant(req.dateTo, 'to'),
  });
}

/**
 * Deletes entries older than the retention, in batches so one sweep never holds a long lock; several
 * instances sweeping at once only share the work.
 */
export async function sweep(pool: Pool, retentionDays: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await audit.deleteOlderThan(pool, retentionDays, SWEEP_BATCH);
    total += n;
    if (n < SWEEP_BATCH) return total;
  }
}

/** PostgreSQL's jsonb refuses \u0000 in strings and keys; a detail carrying one is stored without it. */
function withoutNul(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(/\u0000/g, '');
  if (Array.isArray(v)) return v.map(withoutNul);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/\u0000/g, ''), withoutNul(x)]));
  return v;
}

const str = (v: string | null, max: number): string | null => (v ? v.replace(/\u0000/g, '').slice(0, max) : null);

/**
 * An `audit.recorded` payload from another service, parsed by its schema (the consumer's parseData), made safe to
 * store: an actor id that is no uuid cannot be trusted as one, text is bounded. Undefined when its action is not
 * `<resource>.<verb>` (the schema only asks for text; it can never succeed).
 */
export function fromEvent(d: ParsedEventData<'audit.recorded'>): AuditRecorded | undefined {
  const action = str(d.action, 100);
  const resourceType = str(d.resourceType, 100);
  if (!action || !ACTION.test(action) || !resourceType) return undefined;
  return {
    actorId: isUuid(d.actorId) ? d.actorId : null,
    actorType: d.actorType,
    action,
    resourceType,
    resourceId: str(d.resourceId, 200),
    details: withoutNul(d.details) as Record<string, unknown>,
    ip: str(d.ip, 100),
    requestId: str(d.requestId, 200),
  };
}
