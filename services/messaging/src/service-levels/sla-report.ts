import { invalid, requireCan, type OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as repo from './sla-clock.repo';

/** The range when none is given: the 30 days up to now. */
const DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

function instant(value: string | undefined, field: string): Date | undefined {
  if (!value) return undefined;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalid(field, 'must be an ISO 8601 timestamp');
  return at;
}

/**
 * GET /analytics/sla (issue #29 item 10): per policy of the org, the conversations with a window that ended in
 * [from, to) (sla_outcomes: answered or closed in time, or breached), how many breached one, and attainment = met /
 * conversations (null when none). Team leads and above (analytics:view). A deleted policy's outcomes leave the report
 * with it.
 */
export async function slaReport(deps: Deps, ctx: OrgContext, req: { from?: string; to?: string }) {
  requireCan(ctx, 'analytics:view');
  const to = instant(req.to, 'to') ?? new Date();
  const from = instant(req.from, 'from') ?? new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
  if (to.getTime() <= from.getTime()) throw invalid('to', 'must not be before from');
  const rows = await repo.report(deps.pool, ctx.orgId, from, to);
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    data: rows.map((r) => ({
      policyId: r.policyId,
      name: r.name,
      conversations: r.conversations,
      met: r.conversations - r.breached,
      breached: r.breached,
      attainment: r.conversations > 0 ? (r.conversations - r.breached) / r.conversations : undefined,
    })),
  };
}
