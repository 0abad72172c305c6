import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop, withTransaction, type PoolClient } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../../deps';
import * as assignments from '../assignments.repo';
import { convs, type ConversationRow, EVENTS } from '../../conversations';
import { assignByRotation } from '../round-robin';
import * as timers from './reply-timeouts.repo';

/** Waiting on the assignee: snoozed, closed and archived conversations are not. */
const WAITING = new Set(['active', 'pending']);

/**
 * The reply-timeout timer (ARCHITECTURE.md, Timers): each instance sleeps until the nearest due timer
 * (`nextDueInMs`), woken early by a NOTIFY on messaging_reply_timeout_due when one is written; due timers are
 * claimed with FOR UPDATE SKIP LOCKED under a lease, so one instance fires each, and one whose instance died is
 * claimed again when its lease ends. Firing re-reads the conversation under its row lock and acts only while it is
 * still the same assignee's, still unanswered (unreplied_count > 0) and still waiting, so a reply, a close or a
 * hand-over that happened after the timer was set (whatever order the events were consumed in) cancels it.
 */
export class ReplyTimer {
  private readonly loop: ClaimLoop<timers.ReplyTimeoutRow>;

  constructor(private readonly deps: Deps) {
    this.loop = new ClaimLoop({
      name: 'reply timeouts',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: timers.REPLY_TIMEOUT_CHANNEL,
      concurrency: 4,
      // Firing is a few local statements (and identity's cached answers for a rotation): a minute is plenty.
      claim: (free) => timers.claimDue(deps.pool, free, 60_000),
      nextDueInMs: () => timers.nextDueInMs(deps.pool),
      work: (r) => withTransaction(deps.pool, (db) => this.fire(db, r)),
      describe: (r) => ({ conversationId: r.conversation_id, orgId: r.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async fire(db: PoolClient, claimed: timers.ReplyTimeoutRow): Promise<void> {
    const { deps } = this;
    // Restarted for another assignee since the claim (a new window), or already gone: nothing to do now.
    if (!(await timers.lockClaimed(db, claimed))) return;
    const orgId = claimed.org_id;
    const conv = await convs.findById(db, orgId, claimed.conversation_id, true);
    const cfg = conv ? await assignments.find(db, orgId, conv.chatnet_account_id) : undefined;
    if (
      !conv ||
      !cfg?.on_timeout ||
      !cfg.reply_timeout_minutes ||
      conv.assignee_id !== claimed.assignee_id ||
      conv.unreplied_count === 0 ||
      !WAITING.has(conv.status)
    ) {
      await timers.remove(db, conv?.id ?? claimed.conversation_id);
      return;
    }
    deps.log.info({ conversationId: conv.id, assigneeId: conv.assignee_id, onTimeout: cfg.on_timeout }, 'reply timeout');
    if (cfg.on_timeout === 'reassign') {
      const next = await assignByRotation(deps, db, { orgId }, conv, {
        requireMode: false,
        identityDown: 'skip',
        exclude: [claimed.assignee_id],
        reason: 'reply_timeout',
      });
      // The next person gets a window of their own; nobody else eligible: it stays where it is, the timer ends.
      if (next) await timers.restart(db, conv.id, next, cfg.reply_timeout_minutes * deps.config.SERVICE_LEVEL_MINUTE_MS);
      else await timers.remove(db, conv.id);
      return;
    }
    if (cfg.on_timeout === 'unassign') await unassign(db, conv);
    else await notifyLeads(db, conv, claimed, cfg.reply_timeout_minutes);
    await timers.remove(db, conv.id);
  }
}

/** onTimeout unassign: back to the unassigned queue, announced as the system's move. */
async function unassign(db: PoolClient, conv: ConversationRow): Promise<void> {
  await convs.setOwner(db, conv.org_id, conv.id, null, conv.team_id);
  await enqueueEvent(db, {
    type: EVENTS.conversationAssigned,
    orgId: conv.org_id,
    data: {
      conversationId: conv.id,
      contactId: conv.contact_id,
      chatnetAccountId: conv.chatnet_account_id,
      assigneeId: null,
      teamId: conv.team_id,
      previousAssigneeId: conv.assignee_id,
      assignedBy: null,
      reason: 'reply_timeout',
    },
    // A timer's work: a trace of its own.
    traceparent: undefined,
  });
}

/** onTimeout notify_leads: the conversation stays; automation tells the org's team leads (conversation.reply_overdue). */
async function notifyLeads(db: PoolClient, conv: ConversationRow, timer: timers.ReplyTimeoutRow, minutes: number): Promise<void> {
  await enqueueEvent(db, {
    type: EVENTS.conversationReplyOverdue,
    orgId: conv.org_id,
    data: {
      conversationId: conv.id,
      contactId: conv.contact_id,
      chatnetAccountId: conv.chatnet_account_id,
      assigneeId: conv.assignee_id,
      contactName: conv.contact_name,
      waitingSince: timer.inbound_at.toISOString(),
      dueAt: timer.due_at.toISOString(),
      replyTimeoutMinutes: minutes,
    },
    // A timer's work: a trace of its own.
    traceparent: undefined,
  });
}
