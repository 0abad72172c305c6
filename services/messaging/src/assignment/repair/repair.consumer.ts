import type { PoolClient } from '@crm/db';
import { eventTraceparent, isEventOf, type EventEnvelope, type ParsedEvent } from '@crm/events';
import { isUuid } from '@crm/validation';
import type { Deps } from '../../deps';
import { EVENTS } from '../../conversations';
import * as availability from './availability.repo';
import { drainBacklog, releaseUser } from './hand-out';
import * as repair from './repair.repo';
import * as timers from './reply-timeouts.repo';

/**
 * What the repairs listen to: messaging's own message.received / message.sent / conversation.status_changed (reply
 * timers start and end, a closed conversation frees capacity), and identity's user events (availability, deactivation).
 * Reading its own events keeps the inbound path as it was: no extra statement in the inbound transaction.
 */
export const REPAIR_BINDINGS = [
  EVENTS.messageReceived,
  EVENTS.messageSent,
  EVENTS.conversationStatusChanged,
  EVENTS.userAvailabilityChanged,
  EVENTS.userDeactivated,
];

const DONE = new Set(['closed', 'archived']);

/** One lane per conversation or user: a user's announcements, and a thread's messages, are applied in order. */
export function repairKey(event: EventEnvelope): string {
  if (isEventOf(event, 'user.availability_changed', 'user.deactivated')) return `user|${event.orgId}|${event.data.userId}`;
  if (isEventOf(event, 'message.received', 'message.sent', 'conversation.status_changed')) return `conv|${event.data.conversationId}`;
  return '';
}

/**
 * A batch in one transaction. The reply timers of all its messages take two statements: per conversation, the first
 * inbound message after our last reply in the batch starts a timer (kept if one runs), and a reply or a close clears
 * the timer it answers. User events and closes are then applied one by one, in order. `work`: the timed
 * conversations already asked before the transaction (repairWork), not asked again.
 */
export async function applyRepairBatch(deps: Deps, db: PoolClient, events: EventEnvelope[], work?: RepairWork): Promise<void> {
  const firstUnanswered = new Map<string, Date>();
  const answered = new Map<string, Date>();
  for (const event of events) {
    const at = new Date(event.occurredAt);
    if (isEventOf(event, 'message.received')) {
      if (!firstUnanswered.has(event.data.conversationId)) firstUnanswered.set(event.data.conversationId, at);
    } else if (isEventOf(event, 'message.sent')) {
      // An automatic message (the out-of-hours reply, the CSAT question, auto-close's) answers nobody.
      if (event.data.source === 'auto') continue;
      firstUnanswered.delete(event.data.conversationId);
      answered.set(event.data.conversationId, at);
    } else if (isEventOf(event, 'conversation.status_changed') && DONE.has(event.data.status)) {
      firstUnanswered.delete(event.data.conversationId);
      // A closed conversation waits on nobody: its timer goes whenever it started.
      answered.set(event.data.conversationId, new Date(8.64e15));
    }
  }
  await timers.clearMany(
    db,
    [...answered].map(([conversationId, at]) => ({ conversationId, at })),
  );
  // Asked before the transaction (repairWork) when the share prepared the batch.
  const timed = work ? work.timed.filter((c) => firstUnanswered.has(c.id)) : await repair.timedConversations(db, [...firstUnanswered.keys()]);
  const minuteMs = deps.config.SERVICE_LEVEL_MINUTE_MS;
  await timers.startMany(
    db,
    timed.map((c) => {
      const inboundAt = firstUnanswered.get(c.id)!;
      return {
        conversationId: c.id,
        orgId: c.org_id,
        assigneeId: c.assignee_id,
        inboundAt,
        dueAt: new Date(inboundAt.getTime() + c.minutes * minuteMs),
      };
    }),
  );
  for (const event of events) await applyOne(deps, db, event);
}

/** What a batch's reply timers need, asked before its transaction (repairWork). */
export interface RepairWork {
  /** Its messages' conversations that are assigned, open and on an account with a reply timeout (timedConversations). */
  timed: Awaited<ReturnType<typeof repair.timedConversations>>;
  /** The message.received events whose conversation is not among them: nothing to repair. */
  skipped: Set<string>;
}

/**
 * The bookkeeping queue's repair share, before the batch's transaction (QueueShare.prepare): which of the batch's
 * messages wait on a reply timer. A message received into a conversation that is not assigned, open and on an account
 * with a reply timeout starts no timer and does nothing else here: it is neither claimed nor applied (QueueShare.idle),
 * so a batch of messages nobody waits on (the usual case) opens no transaction for the repairs. applyRepairBatch
 * takes the answer for the others.
 */
export async function repairWork(deps: Deps, events: EventEnvelope[]): Promise<RepairWork> {
  const received = events.filter((e): e is ParsedEvent<'message.received'> => isEventOf(e, 'message.received'));
  const timed = await repair.timedConversations(deps.pool, [...new Set(received.map((e) => e.data.conversationId))]);
  const waiting = new Set(timed.map((c) => c.id));
  return { timed, skipped: new Set(received.filter((e) => !waiting.has(e.data.conversationId)).map((e) => e.id)) };
}

/** One event's repair, in its own trace (eventTraceparent: explicit, the service runs without an active context, main.ts). */
async function applyOne(deps: Deps, db: PoolClient, event: EventEnvelope): Promise<void> {
  const orgId = event.orgId;
  if (!isUuid(orgId)) return;
  const traceparent = eventTraceparent(event);
  if (isEventOf(event, 'conversation.status_changed')) {
    const d = event.data;
    if (DONE.has(d.status) && !DONE.has(d.previousStatus) && isUuid(d.assigneeId)) await drainBacklog(deps, db, orgId, d.assigneeId, traceparent);
  } else if (isEventOf(event, 'user.deactivated')) {
    await releaseUser(deps, db, orgId, event.data.userId, 'user_deactivated', traceparent);
  } else if (isEventOf(event, 'user.availability_changed')) {
    const { userId, status } = event.data;
    const changed = await availability.record(db, orgId, userId, status, new Date(event.occurredAt));
    // An older announcement than the one applied: what it says is already out of date.
    if (!changed) return;
    // Unknown before counts as online (availability.repo.ts).
    const before = changed.before ?? 'online';
    if (status === 'offline' && before !== 'offline') await releaseUser(deps, db, orgId, userId, 'user_offline', traceparent);
    if (status === 'online' && (changed.before === undefined || before !== 'online')) await drainBacklog(deps, db, orgId, userId, traceparent);
  }
}
