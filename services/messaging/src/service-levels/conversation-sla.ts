import { isEventOf, type EventEnvelope } from '@crm/events';
import type { PoolClient } from '@crm/db';
import type { Deps } from '../deps';
import { hoursFor } from './business-hours';
import { applySlaNews, slaDueTimes, type SlaAnchors, type SlaNews } from './sla-clock';
import * as repo from './sla-clock.repo';
import { ALWAYS_OPEN, type BusinessHours } from './schedule';

/** Statuses in which no clock runs. */
const ENDED = ['closed', 'archived'];

/** Messages our side sends without a person (out-of-hours, auto-close, CSAT questions) answer nobody. */
const NOT_A_REPLY = ['auto'];

/** No window running. */
export const noDue = { firstResponseDueAt: null, nextResponseDueAt: null, resolutionDueAt: null, dueAt: null, warnAt: null };

/** What an event of this service says to a conversation's SLA clock; undefined: nothing. */
export function slaNewsOf(event: EventEnvelope): { conversationId: string; accountId: string; news: SlaNews } | undefined {
  if (isEventOf(event, 'message.received')) {
    const d = event.data;
    return { conversationId: d.conversationId, accountId: d.chatnetAccountId, news: { kind: 'inbound', at: new Date(d.sentAt) } };
  }
  if (isEventOf(event, 'message.sent')) {
    const d = event.data;
    if (NOT_A_REPLY.includes(d.source)) return undefined;
    return { conversationId: d.conversationId, accountId: d.chatnetAccountId, news: { kind: 'reply', at: new Date(d.sentAt) } };
  }
  if (isEventOf(event, 'conversation.status_changed')) {
    const d = event.data;
    const wasEnded = ENDED.includes(d.previousStatus);
    const isEnded = ENDED.includes(d.status);
    if (isEnded && !wasEnded)
      return { conversationId: d.conversationId, accountId: d.chatnetAccountId, news: { kind: 'closed', at: new Date(event.occurredAt) } };
    if (wasEnded && !isEnded)
      return { conversationId: d.conversationId, accountId: d.chatnetAccountId, news: { kind: 'reopened', at: new Date(event.occurredAt) } };
  }
  return undefined;
}

/** The conversation the event is about: its news must be applied in order. */
export function slaEventKey(event: EventEnvelope): string {
  const data = event.data as { conversationId?: unknown };
  return typeof data.conversationId === 'string' ? data.conversationId : '';
}

/** The events of a batch that say something to a clock, with the conversation each is about. */
function newsOfBatch(events: EventEnvelope[]) {
  return events.flatMap((event) => {
    const about = slaNewsOf(event);
    return about ? [{ event, orgId: event.orgId, accountId: about.accountId, conversationId: about.conversationId }] : [];
  });
}

/**
 * A batch of the SLA consumer's events, in order, in its transaction: one statement first finds the conversations the
 * bookkeeping concerns (their account follows a policy, or they still hold a clock), and only their events are
 * applied; the others cost nothing more (policyAndClock's query per event was one of every message's statements).
 * `toApply`: that answer already asked before the transaction (slaEventsToApply), not asked again.
 */
export async function applySlaEvents(deps: Deps, db: PoolClient, events: EventEnvelope[], toApply?: Set<string>): Promise<void> {
  const news = newsOfBatch(events);
  const concerned = toApply ? concernedOf(news, toApply) : await repo.concernedBySla(db, news);
  // Applying an event enqueues, calls and logs nothing: no trace to pass on.
  for (const [i, { event }] of news.entries()) if (concerned.has(i)) await applySlaEvent(deps, db, event);
}

/** The indices in `news` of the events named in `toApply`. */
function concernedOf(news: ReturnType<typeof newsOfBatch>, toApply: Set<string>): Set<number> {
  return new Set(news.flatMap(({ event }, i) => (toApply.has(event.id) ? [i] : [])));
}

/**
 * The same question asked before the batch's transaction (the bookkeeping queue's SLA share, QueueShare.prepare): the
 * ids of the events applySlaEvents would apply. The others write nothing, so they are neither claimed nor applied
 * (QueueShare.idle), and a batch of messages on accounts with no policy opens no transaction for the clocks (most
 * accounts have none). The concerned ones are applied with this answer (applySlaEvents' `toApply`), not asked again.
 */
export async function slaEventsToApply(deps: Deps, events: EventEnvelope[]): Promise<Set<string>> {
  const news = newsOfBatch(events);
  const concerned = await repo.concernedBySla(deps.pool, news);
  return new Set(news.flatMap(({ event }, i) => (concerned.has(i) ? [event.id] : [])));
}

/**
 * messaging's own message.received, message.sent and conversation.status_changed → the conversation's SLA clock
 * (issue #29 item 2), in the consumer's transaction: the anchors move with the news (times are the messages' own,
 * so a consumer running behind still counts from when the contact wrote) and the due times are computed again. An
 * account without a policy costs one query per event; a conversation whose account lost its policy is cleared.
 */
export async function applySlaEvent(deps: Deps, db: PoolClient, event: EventEnvelope): Promise<void> {
  const about = slaNewsOf(event);
  if (!about) return;
  const { policy, hasClock } = await repo.policyAndClock(db, event.orgId, about.accountId, about.conversationId);
  // No policy: the conversation's row is locked only when it still has a clock to clear (it rarely does).
  if (!policy && !hasClock) return;
  const row = await repo.lockClock(db, event.orgId, about.conversationId);
  if (!row || (!policy && !row.sla_policy_id)) return;
  // A message into a conversation that stays closed (the contact answering the CSAT question: it does not reopen)
  // opens no cycle; an ordinary message reopens the conversation in the transaction that stores it.
  if (about.news.kind === 'inbound' && ENDED.includes(row.status)) return;
  if (!policy) {
    await repo.writeClock(db, row, null, { openedAt: null, waitingSince: null, replied: false, breached: [] }, noDue, { newCycle: true });
    return;
  }
  const { anchors, newCycle } = applySlaNews(repo.anchorsOf(row), about.news);
  await recordEnded(db, row, anchors, about.news);
  await writeComputed(deps, db, row, policy, anchors, newCycle);
}

/**
 * The windows the news ended, for the report: a reply ends the response window it answers, closing ends the
 * resolution window (met when in time; one past due whose breach the timer had not raised yet counts as breached).
 * A response window stopped by closing ended neither way.
 */
async function recordEnded(db: PoolClient, row: repo.SlaClockRow, after: SlaAnchors, news: SlaNews): Promise<void> {
  if (!row.sla_policy_id) return;
  const ended: Array<[string, Date | null]> =
    news.kind === 'reply' && row.sla_waiting_since && !after.waitingSince
      ? [
          ['first_response', row.sla_first_response_due_at],
          ['next_response', row.sla_next_response_due_at],
        ]
      : news.kind === 'closed'
        ? [['resolution', row.sla_resolution_due_at]]
        : [];
  for (const [target, dueAt] of ended) {
    if (!dueAt || row.sla_breached.includes(target)) continue;
    const outcome = news.at.getTime() <= dueAt.getTime() ? 'met' : 'breached';
    await repo.recordOutcome(db, { orgId: row.org_id, conversationId: row.id, policyId: row.sla_policy_id, target, dueAt, outcome, at: news.at });
  }
}

/** The hours a policy counts in: the account's business hours when businessHoursOnly, else the clock's. */
async function hoursOf(deps: Deps, policy: repo.SlaPolicyClock, orgId: string, accountId: string): Promise<BusinessHours> {
  return policy.businessHoursOnly ? (await hoursFor(deps, orgId, accountId)).hours : ALWAYS_OPEN;
}

async function writeComputed(
  deps: Deps,
  db: PoolClient,
  row: repo.SlaClockRow,
  policy: repo.SlaPolicyClock,
  anchors: SlaAnchors,
  newCycle: boolean,
  hours?: BusinessHours,
) {
  const counted = hours ?? (await hoursOf(deps, policy, row.org_id, row.chatnet_account_id));
  await repo.writeClock(db, row, policy.id, anchors, slaDueTimes(policy, counted, deps.config.SERVICE_LEVEL_MINUTE_MS, anchors), { newCycle });
}

/**
 * A policy attached to accounts, changed, or detached (null) applies to their open conversations from now on: a
 * conversation that had the clock keeps its anchors and gets the new windows; one that had none starts a cycle now
 * (waiting now when its contact's last message is unanswered; else as answered, so the contact's next message starts
 * a next-response window); detaching clears the clock. Closed conversations start when they next open. Business hours changed later do not move due times already set.
 */
export async function reapplySla(
  deps: Deps,
  db: PoolClient,
  orgId: string,
  by: { accountIds: string[] } | { policyId: string },
  policyId: string | null,
) {
  const rows = await repo.lockOpenClocks(db, orgId, by);
  if (rows.length === 0) return;
  const policy = policyId ? await repo.policy(db, orgId, policyId) : undefined;
  const waiting = policy
    ? await repo.waitingNow(
        db,
        rows.filter((r) => !r.sla_policy_id).map((r) => r.id),
      )
    : new Set<string>();
  const now = new Date();
  const hoursByAccount = new Map<string, BusinessHours>();
  for (const row of rows) {
    if (!policy) {
      await repo.writeClock(db, row, null, { openedAt: null, waitingSince: null, replied: false, breached: [] }, noDue, { newCycle: true });
      continue;
    }
    // A closed one with a clock (a policy replaced) keeps its stopped clock under the new policy. One that had none
    // starts a cycle now: waiting when its contact's last message is unanswered, else as answered.
    const anchors: SlaAnchors = row.sla_policy_id
      ? repo.anchorsOf(row)
      : { openedAt: now, waitingSince: waiting.has(row.id) ? now : null, replied: !waiting.has(row.id), breached: [] };
    if (!hoursByAccount.has(row.chatnet_account_id))
      hoursByAccount.set(row.chatnet_account_id, await hoursOf(deps, policy, orgId, row.chatnet_account_id));
    await writeComputed(deps, db, row, policy, anchors, !row.sla_policy_id, hoursByAccount.get(row.chatnet_account_id));
  }
}
