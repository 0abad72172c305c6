import { Router } from 'express';
import { z } from 'zod';
import { identityRules as rules } from '@crm/validation';
import type { RouteDeps } from './deps';
import { auditEntryOut } from './identity.out';
import { requirePermission } from '../http/permission';
import { ctxOf } from '../http/principal';
import { dateRange, pageParams, query, s } from '../http/validate';

export const AuditQuery = z.object({
  actorId: z.string().uuid('must be a user id').optional(),
  action: z.string().max(rules.AUDIT_ACTION_MAX, rules.AUDIT_ACTION_MESSAGE).regex(rules.AUDIT_ACTION_PATTERN, rules.AUDIT_ACTION_MESSAGE).optional(),
  from: s.dateOrTimestamp().optional(),
  to: s.dateOrTimestamp().optional(),
});

/** GET /audit-log: who did what in the caller's organization (admin and owner; identity checks again). */
export function auditLogRoutes({ clients, auth }: RouteDeps): Router {
  const r = Router();
  r.get('/audit-log', auth.bearer, requirePermission('audit:view'), async (req, res) => {
    const q = query(req, AuditQuery);
    const { dateFrom, dateTo } = dateRange(q.from, q.to, 'from', 'to');
    const out = await clients.identity.ListAuditLog(
      { ...pageParams(req, 50), actorId: q.actorId ?? '', action: q.action ?? '', dateFrom: dateFrom ?? '', dateTo: dateTo ?? '' },
      ctxOf(req, res),
    );
    res.json({ data: out.data.map(auditEntryOut), pagination: out.pagination });
  });
  return r;
}
