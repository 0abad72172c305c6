import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import type { AnalyticsDeps } from './deps';
import { cents, percent, seconds } from './format';
import { periodOut, resolvePeriod } from './period';
import { revenueByUser, userActivity } from './stats.repo';

/**
 * Per user of the org (optionally one department), for a period:
 * - contactsAssigned: contacts first assigned to the user in the period (created with them as assignee, or
 *   reassigned to them; a contact handed back to the same user later does not count again);
 * - messagesReplied: messages the user sent to contacts (automated and campaign sends are nobody's);
 * - averageResponseTime: mean seconds of the responses the user gave (turns.ts), `responses` of them;
 * - conversionRate: of those contacts, the share whose conversion is credited to the user (they became
 *   customers while assigned to them, in the period or later);
 * - revenueGenerated: the dealValue of contacts that became customers in the period while assigned to them.
 * Active users are always listed; deactivated ones when they have numbers in the period. teamTotal adds up
 * the listed users.
 */

const DEPARTMENT_MAX = 200;

export async function teamPerformance(deps: AnalyticsDeps, ctx: OrgContext, req: { dateFrom?: string; dateTo?: string; departmentId?: string }) {
  requireCan(ctx, 'analytics:view');
  const { orgId } = ctx;
  const period = resolvePeriod(req);
  const department = (req.departmentId ?? '').trim();
  if (department.length > DEPARTMENT_MAX) throw invalid('departmentId', `must be at most ${DEPARTMENT_MAX} characters`);

  const [members, activity, revenue] = await Promise.all([
    deps.team.members(ctx, department || undefined),
    userActivity(deps.pool, orgId, period),
    revenueByUser(deps.pool, orgId, period),
  ]);
  const activityOf = new Map(activity.map((a) => [a.userId, a]));
  const revenueOf = new Map(revenue.map((r) => [r.userId, r.revenue]));

  const rows = members.map((u) => {
    const a = activityOf.get(u.id);
    const revenueGenerated = cents(revenueOf.get(u.id) ?? 0);
    return {
      shown: u.status === 'active' || !!(a && (a.replies || a.responses || a.assigned)) || !!revenueOf.get(u.id),
      converted: a?.converted ?? 0,
      out: {
        userId: u.id,
        name: u.fullName,
        contactsAssigned: a?.assigned ?? 0,
        messagesReplied: a?.replies ?? 0,
        averageResponseTime: a && a.responses > 0 ? seconds(a.responseMs / a.responses) : undefined,
        conversionRate: percent(a?.converted ?? 0, a?.assigned ?? 0),
        revenueGenerated,
        responses: a?.responses ?? 0,
      },
    };
  });
  const listed = rows.filter((r) => r.shown).sort((x, y) => x.out.name.localeCompare(y.out.name) || (x.out.userId < y.out.userId ? -1 : 1));
  const sum = (f: (r: (typeof listed)[number]) => number) => listed.reduce((t, r) => t + f(r), 0);
  const assigned = sum((r) => r.out.contactsAssigned);
  return {
    period: periodOut(period),
    team: listed.map((r) => r.out),
    teamTotal: {
      contactsAssigned: assigned,
      messagesReplied: sum((r) => r.out.messagesReplied),
      conversionRate: percent(
        sum((r) => r.converted),
        assigned,
      ),
      revenueGenerated: cents(sum((r) => r.out.revenueGenerated)),
    },
  };
}
