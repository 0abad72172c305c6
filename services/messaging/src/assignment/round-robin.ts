import { type PoolClient, withTransaction } from '@crm/db';
import { enqueueEvent, type AssignmentReason } from '@crm/events';
import { AppError, CallContext, notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as assignments from './assignments.repo';
import { convs, type ConversationRow, EVENTS } from '../conversations';
import { isUuid } from '@crm/validation';
import { notOnline as usersNotOnline } from './repair/availability.repo';

type Forward = Partial<CallContext>;

/**
 * Identity's answers for every listed user, asked before the rotation row is locked so the lock is held only for
 * local work (answers are cached briefly). Undefined = identity could not say.
 */
async function activity(deps: Deps, ctx: Forward, userIds: string[]): Promise<Map<string, boolean | undefined>> {
  const answers = await Promise.all(userIds.map((id) => deps.remote.userActive(ctx, id)));
  return new Map(userIds.map((id, i) => [id, answers[i]]));
}

/**
 * Identity's answers about a round_robin account's users into the cache (kept briefly), so a new conversation's
 * rotation inside a consumer's transaction finds them there rather than waiting on identity (issue #28 item 4).
 * `traceparent`: the trace of the inbound messages it is asked for, if they share one.
 */
export async function warmRotation(deps: Deps, orgId: string, accountId: string, origin?: string, traceparent?: string): Promise<void> {
  const peek = await assignments.find(deps.pool, orgId, accountId);
  // identity is asked under the stamp of the inbound message (origin), else the org's grant (clients.ts vouched).
  if (peek?.mode === 'round_robin' && peek.user_ids.length > 0) await activity(deps, { orgId, origin, traceparent }, peek.user_ids);
}

/**
 * Choose and record the assignee of an unassigned conversation by its account's rotation, inside `db`'s transaction:
 * the returning contact's previous assignee while eligible, else the next listed user from the cursor who is active and
 * under the cap. The account's row is locked (`FOR UPDATE`) while choosing and moving the cursor, so several instances
 * take strict turns and the cursor survives restarts. Returns the user assigned, or null (nobody eligible).
 * `requireMode` limits it to round_robin accounts (new conversations); the automation action uses the list whatever the mode.
 * Identity is asked, and `conversation.assigned` enqueued, in the trace of `ctx.traceparent` (a handler's ctx, an
 * inbound event's; none for a timer's work).
 */
export async function assignByRotation(
  deps: Deps,
  db: PoolClient,
  ctx: Forward,
  conv: ConversationRow,
  opts: { requireMode: boolean; identityDown: 'skip' | 'throw'; exclude?: string[]; reason?: AssignmentReason },
): Promise<string | null> {
  const orgId = conv.org_id;
  const accountId = conv.chatnet_account_id;
  const peek = await assignments.find(db, orgId, accountId);
  if (!peek || peek.user_ids.length === 0 || (opts.requireMode && peek.mode !== 'round_robin')) return null;
  const known = await activity(deps, ctx, peek.user_ids);

  const cfg = await assignments.find(db, orgId, accountId, true);
  if (!cfg || cfg.user_ids.length === 0 || (opts.requireMode && cfg.mode !== 'round_robin')) return null;
  // The list may have changed between the peek and the lock: ask for the newcomers (rare; cached answers otherwise).
  const missing = cfg.user_ids.filter((id) => !known.has(id));
  if (missing.length > 0) for (const [id, a] of await activity(deps, ctx, missing)) known.set(id, a);
  if (opts.identityDown === 'throw' && cfg.user_ids.some((id) => known.get(id) === undefined)) {
    throw new AppError('unavailable', 'The identity service is unavailable; try again shortly');
  }
  // Counted under the lock: another instance's assignment committed before we got the lock is included.
  const open = await assignments.openCounts(db, orgId, cfg.user_ids);
  const excluded = new Set(opts.exclude ?? []);
  // onlyOnline: users identity last said were away or offline are skipped (repair/availability.repo.ts).
  const away = cfg.only_online ? await usersNotOnline(db, orgId, cfg.user_ids) : new Set<string>();
  const eligible = (id: string) =>
    !excluded.has(id) && !away.has(id) && known.get(id) === true && (cfg.max_open_per_user === null || (open.get(id) ?? 0) < cfg.max_open_per_user);

  let chosen: string | null = null;
  const previous = await assignments.previousAssignee(db, orgId, conv);
  if (previous && cfg.user_ids.includes(previous) && eligible(previous)) {
    // A returning contact keeps its person; the turn is not used up.
    chosen = previous;
  } else {
    const n = cfg.user_ids.length;
    for (let k = 0; k < n; k++) {
      const index = (cfg.next_index + k) % n;
      if (!eligible(cfg.user_ids[index])) continue;
      chosen = cfg.user_ids[index];
      await assignments.setCursor(db, orgId, accountId, (index + 1) % n);
      break;
    }
  }
  if (!chosen) return null;
  await convs.setOwner(db, orgId, conv.id, chosen, conv.team_id);
  await enqueueEvent(db, {
    type: EVENTS.conversationAssigned,
    orgId,
    data: {
      conversationId: conv.id,
      contactId: conv.contact_id,
      chatnetAccountId: conv.chatnet_account_id,
      assigneeId: chosen,
      teamId: conv.team_id,
      previousAssigneeId: conv.assignee_id,
      assignedBy: null,
      reason: opts.reason ?? 'round_robin',
    },
    traceparent: ctx.traceparent,
  });
  return chosen;
}

/**
 * A conversation just created by an inbound message, on a round_robin account: assigned in the same transaction.
 * An identity outage leaves it unassigned (storing the customer's message matters more than choosing its owner).
 * `traceparent`: the inbound event's (eventTraceparent).
 */
export async function autoAssignNew(
  deps: Deps,
  db: PoolClient,
  requestId: string,
  conv: ConversationRow,
  traceparent: string | undefined,
): Promise<void> {
  const ctx = { orgId: conv.org_id, requestId, traceparent };
  const assigneeId = await assignByRotation(deps, db, ctx, conv, { requireMode: true, identityDown: 'skip' });
  if (assigneeId) deps.log.debug({ conversationId: conv.id, assigneeId, ...traceFields(ctx) }, 'conversation auto-assigned');
}

/**
 * AssignRoundRobin (automation's assign_round_robin): the conversation by its account's rotation. One that already
 * has an assignee is left alone, so a run repeating the action after a crash does not take a second turn.
 */
export async function assignRoundRobin(deps: Deps, ctx: OrgContext, req: { conversationId?: string }) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  const id = req.conversationId ?? '';
  if (!isUuid(id)) throw notFound('Conversation');
  const before = await convs.findById(deps.pool, orgId, id);
  if (!before) throw notFound('Conversation');
  if (!before.assignee_id) {
    // Identity's answers into the cache now, so the conversation's row lock below is not held across remote calls.
    const peek = await assignments.find(deps.pool, orgId, before.chatnet_account_id);
    if (peek) await activity(deps, ctx, peek.user_ids);
  }
  const assigned = await withTransaction(deps.pool, async (db) => {
    const conv = await convs.findById(db, orgId, id, true);
    if (!conv) throw notFound('Conversation');
    if (conv.assignee_id) return false;
    return (await assignByRotation(deps, db, ctx, conv, { requireMode: false, identityDown: 'throw' })) !== null;
  });
  return { conversation: convs.toConversation((await convs.findById(deps.pool, orgId, id))!), assigned };
}
