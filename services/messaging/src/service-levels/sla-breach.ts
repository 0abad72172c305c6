import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop, withTransaction, type PoolClient } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import { convs, EVENTS } from '../conversations';
import { assignByRotation } from '../assignment';
import type { SlaTarget } from './sla-clock';
import * as repo from './sla-clock.repo';

/** A breach whose transaction failed is tried again after this long (not at once: the loop would spin on it). */
const RETRY_MS = 5_000;

const TARGETS: Array<[SlaTarget, 'sla_first_response_due_at' | 'sla_next_response_due_at' | 'sla_resolution_due_at']> = [
  ['first_response', 'sla_first_response_due_at'],
  ['next_response', 'sla_next_response_due_at'],
  ['resolution', 'sla_resolution_due_at'],
];

/**
 * The SLA breach timer (ARCHITECTURE.md, Timers): each instance sleeps until the nearest `sla_due_at`
 * (`nextDueInMs`), woken early by a NOTIFY on messaging_sla_due when the clock consumer sets an earlier one. A due
 * conversation is locked FOR UPDATE SKIP LOCKED and checked again under the lock, so each window is breached once
 * across instances; the breach, its `conversation.sla_breached` (outbox) and, with `onBreach.reassign`, the
 * rotation's next agent are one transaction.
 */
export class SlaBreachTimer {
  private readonly loop: ClaimLoop<{ id: string; org_id: string }>;

  constructor(private readonly deps: Deps) {
    this.loop = new ClaimLoop({
      name: 'sla breaches',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.SLA_CHANNEL,
      concurrency: 4,
      claim: (free) => repo.dueIds(deps.pool, free),
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      work: (r) => this.breach(r.id),
      describe: (r) => ({ conversationId: r.id, orgId: r.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async breach(id: string): Promise<void> {
    try {
      await withTransaction(this.deps.pool, (db) => breachDue(this.deps, db, id));
    } catch (err) {
      await repo.retryLater(this.deps.pool, id, RETRY_MS).catch(() => undefined);
      throw err;
    }
  }
}

/** The windows of a locked, due conversation that are past due and not breached yet: breached now. */
async function breachDue(deps: Deps, db: PoolClient, id: string): Promise<void> {
  const row = await repo.lockDue(db, id);
  if (!row) return;
  // The later of the database's time and ours: never before the due time that made the row due.
  const now = new Date(Math.max(Date.now(), row.now.getTime()));
  const missed = TARGETS.filter(([target, col]) => row[col] && row[col]!.getTime() <= now.getTime() && !row.sla_breached.includes(target));
  const policy = row.sla_policy_id ? await repo.policy(db, row.org_id, row.sla_policy_id) : undefined;
  if (!policy || missed.length === 0) {
    // Nothing left to breach (the policy went away meanwhile): the row waits for its next window, if any.
    await repo.moveDue(db, row.id, policy ? dueAfter(row, row.sla_breached).dueAt : null);
    return;
  }
  const breached = [...row.sla_breached, ...missed.map(([t]) => t)];
  await repo.markBreached(db, row.id, breached, now, dueAfter(row, breached));
  for (const [target, col] of missed) {
    const dueAt = row[col]!;
    await repo.recordOutcome(db, { orgId: row.org_id, conversationId: row.id, policyId: policy.id, target, dueAt, outcome: 'breached', at: now });
    await enqueueEvent(db, {
      type: EVENTS.conversationSlaBreached,
      orgId: row.org_id,
      data: {
        conversationId: row.id,
        contactId: row.contact_id,
        chatnetAccountId: row.chatnet_account_id,
        assigneeId: row.assignee_id,
        policyId: policy.id,
        target,
        dueAt: dueAt.toISOString(),
        breachedAt: now.toISOString(),
        notify: policy.notify.filter((n): n is 'assignee' | 'team_leads' => n === 'assignee' || n === 'team_leads'),
      },
      // A timer's work: a trace of its own.
      traceparent: undefined,
    });
  }
  deps.log.info({ conversationId: id, targets: missed.map(([t]) => t), policyId: policy.id }, 'sla breached');
  if (!policy.reassign) return;
  const conv = await convs.findById(db, row.org_id, row.id);
  if (!conv) return;
  const assignee = await assignByRotation(deps, db, { orgId: row.org_id }, conv, {
    requireMode: false,
    identityDown: 'skip',
    exclude: conv.assignee_id ? [conv.assignee_id] : [],
    reason: 'sla_breach',
  });
  deps.log.debug(
    { conversationId: id, assigneeId: assignee },
    assignee ? 'sla breach: reassigned' : 'sla breach: nobody eligible, the conversation stays',
  );
}

/**
 * The timer's next due time once `breached` are: the nearest due time the row holds that is not breached (they were
 * computed when their windows began). The warning time no longer matters: the status is breached until a new cycle.
 */
function dueAfter(row: repo.SlaClockRow, breached: string[]): { dueAt: Date | null; warnAt: Date | null } {
  const pending = TARGETS.filter(([target, col]) => row[col] && !breached.includes(target)).map(([, col]) => row[col]!);
  return { dueAt: pending.reduce<Date | null>((min, d) => (!min || d.getTime() < min.getTime() ? d : min), null), warnAt: null };
}
