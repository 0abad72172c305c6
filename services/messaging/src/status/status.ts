import { directDatabaseUrl } from '@crm/config';
import { invalid, notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import { ClaimLoop, Queryable, withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import { convs, ConversationRow, ConversationStatus, CONVERSATION_STATUSES, EVENTS } from '../conversations';
import { isUuid, messagingRules as rules, optionalOneOf } from '@crm/validation';
import { viewerOf } from '../visibility';
import { askCsatOnClose } from '../csat';

/** What the status event says; `changedBy` is null when the system changed it (wake-up, the contact wrote). */
export function statusChangedData(
  conv: Pick<ConversationRow, 'id' | 'contact_id' | 'chatnet_account_id' | 'assignee_id'>,
  status: ConversationStatus,
  previousStatus: string,
  snoozedUntil: Date | null,
  changedBy: string | null,
) {
  return {
    conversationId: conv.id,
    contactId: conv.contact_id,
    // Who may see it (the gateway routes the socket event by them, as for message events).
    chatnetAccountId: conv.chatnet_account_id,
    assigneeId: conv.assignee_id,
    status,
    previousStatus,
    snoozedUntil: snoozedUntil ? snoozedUntil.toISOString() : null,
    changedBy,
  };
}

/**
 * Change the status of a conversation locked by the caller's transaction and announce it in the same
 * transaction. Nothing changes (and nothing is announced) when the status, and for snoozed the wake-up time,
 * is already what was asked. Every route that changes a status (archive, close, reopen, PUT status) comes here.
 * `traceparent`: the trace the announcement continues (the handler's ctx.traceparent; none for a timer's work).
 */
export async function applyStatus(
  db: Queryable,
  conv: ConversationRow,
  status: ConversationStatus,
  snoozedUntil: Date | null,
  changedBy: string | null,
  traceparent: string | undefined,
): Promise<boolean> {
  const until = status === 'snoozed' ? snoozedUntil : null;
  if (conv.status === status && (conv.snoozed_until?.getTime() ?? null) === (until?.getTime() ?? null)) return false;
  await convs.setStatus(db, conv.org_id, conv.id, status, until);
  // A new wake-up time: instances sleeping past it re-arm (delivered at commit).
  if (until) await db.query(`SELECT pg_notify('${SNOOZE_CHANNEL}', '')`);
  await enqueueEvent(db, {
    type: EVENTS.conversationStatusChanged,
    orgId: conv.org_id,
    data: statusChangedData(conv, status, conv.status, until, changedBy),
    traceparent,
  });
  // Closed: the contact is asked how it went (when the org asks), in this transaction.
  if (status === 'closed') await askCsatOnClose(db, conv);
  return true;
}

/** The wake-up time of a snooze: an ISO 8601 timestamp (years 1-9999) later than now. */
export function parseSnoozedUntil(value: string | undefined, status: ConversationStatus): Date | null {
  const given = value !== undefined && value !== '';
  if (status !== 'snoozed') {
    if (given) throw invalid('snoozedUntil', rules.SNOOZE_ONLY_WHEN_SNOOZED);
    return null;
  }
  if (!given) throw invalid('snoozedUntil', rules.SNOOZE_REQUIRED);
  const at = new Date(value);
  // The gateway checks the format; callers reaching this service directly get the same answer.
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(at.getTime()) || at.getUTCFullYear() > 9999) {
    throw invalid('snoozedUntil', rules.SNOOZE_TIMESTAMP_MESSAGE);
  }
  if (at.getTime() <= Date.now()) throw invalid('snoozedUntil', 'must be in the future');
  return at;
}

/** PUT /conversations/:id/status: any status; snoozed needs a future `snoozedUntil`, other statuses refuse one. */
export async function setStatus(deps: Deps, ctx: OrgContext, req: { id: string; status: string; snoozedUntil?: string }) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  const status = optionalOneOf(req.status, CONVERSATION_STATUSES, 'status');
  if (!status) throw invalid('status', 'is required');
  const snoozedUntil = parseSnoozedUntil(req.snoozedUntil, status);
  const changed = await withTransaction(deps.pool, async (db) => {
    const conv = isUuid(req.id) ? await convs.findById(db, orgId, req.id, true, viewerOf(ctx)) : undefined;
    if (!conv) throw notFound('Conversation');
    return applyStatus(db, conv, status, snoozedUntil, ctx.userId || null, ctx.traceparent);
  });
  deps.log.debug({ conversationId: req.id, status, changed, ...traceFields(ctx) }, 'conversation status set');
  return convs.toConversation((await convs.findById(deps.pool, orgId, req.id))!);
}

/** Batch size of one wake-up statement; the job repeats while a batch comes back full. */
const WAKE_BATCH = 500;

/** A snooze written or moved NOTIFYs here in its transaction, so every instance re-arms its wake-up for it. */
export const SNOOZE_CHANNEL = 'messaging_snooze_due';

/** Wake up to WAKE_BATCH due snoozed conversations in one transaction, each announced once whichever instance woke it. */
async function wakeBatch(deps: Pick<Deps, 'pool'>): Promise<number> {
  return withTransaction(deps.pool, async (db) => {
    const rows = await convs.wakeDue(db, WAKE_BATCH);
    for (const r of rows) {
      await enqueueEvent(db, {
        type: EVENTS.conversationStatusChanged,
        orgId: r.org_id,
        data: statusChangedData(r, 'active', 'snoozed', null, null),
        // A timer's work: a trace of its own.
        traceparent: undefined,
      });
    }
    return rows.length;
  });
}

/** Wake every snoozed conversation that is due (several callers at once never wake one twice). */
export async function wakeSnoozed(deps: Pick<Deps, 'pool'>): Promise<number> {
  let woken = 0;
  for (;;) {
    const batch = await wakeBatch(deps);
    woken += batch;
    if (batch < WAKE_BATCH) return woken;
  }
}

/**
 * Snooze wake-ups on the timer facility (ARCHITECTURE.md, Timers): each instance sleeps until the nearest
 * snoozedUntil (`nextDueInMs`), woken early by a NOTIFY on SNOOZE_CHANNEL when a snooze is set, and wakes the due
 * ones with SKIP LOCKED, so a conversation wakes within moments of its time, once, on whichever instance is first.
 * The wake-up is done in the claim itself (one UPDATE … RETURNING per batch); there are no items to work on.
 */
export async function startSnoozeWaker(deps: Deps): Promise<{ stop(): Promise<void> }> {
  const loop = new ClaimLoop<never>({
    name: 'snooze wake-ups',
    databaseUrl: directDatabaseUrl(deps.config),
    channel: SNOOZE_CHANNEL,
    concurrency: 1,
    claim: async () => {
      const woken = await wakeBatch(deps);
      if (woken > 0) deps.log.debug({ woken }, 'snoozed conversations woken');
      return { items: [], again: woken === WAKE_BATCH, left: false };
    },
    nextDueInMs: () => convs.nextSnoozeDueInMs(deps.pool),
    work: async () => undefined,
    log: deps.log,
  });
  await loop.start();
  return { stop: () => loop.stop() };
}
