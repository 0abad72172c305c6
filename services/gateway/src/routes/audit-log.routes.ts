import { Router } from 'express';
import { page } from './common.schemas';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { dateRange } from '../http/validate';
import { AuditEntry, AuditQuery } from './audit-log.schemas';
import type { RouteDeps } from './deps';
import { auditEntryOut } from './identity.out';

/** GET /audit-log: who did what in the caller's organization (admin and owner; identity checks again). */
export const auditRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Audit log' });

auditRoutes.route('GET /audit-log', {
  summary: 'Who did what in the organization (admins and owners)',
  permission: 'audit:view',
  query: AuditQuery,
  paging: { limit: 50, max: 100 },
  response: page(AuditEntry),
  handler: async ({ query: q, page, ctx, deps }) => {
    const { dateFrom, dateTo } = dateRange(q.from, q.to, 'from', 'to');
    const out = await deps.clients.identity.ListAuditLog(
      { ...page, actorId: q.actorId ?? '', action: q.action ?? '', dateFrom: dateFrom ?? '', dateTo: dateTo ?? '' },
      ctx,
    );
    return { data: out.data.map(auditEntryOut), pagination: out.pagination! };
  },
});

/**
 * Mounted by the identity routes, before the app's bearer check (identity's sign-in routes take none), so the route
 * checks the bearer itself.
 */
export function auditLogRoutes(deps: RouteDeps): Router {
  const r = Router();
  r.get('/audit-log', deps.auth.bearer, auditRoutes.router(deps, responseContract(deps.config)));
  return r;
}
