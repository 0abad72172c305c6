import type { PoolClient } from '@crm/db';
import { enqueueEvents, type AssignmentReason } from '@crm/events';
import { traceFields } from '@crm/grpc-kit';
import type { Deps } from '../../deps';
import * as assignments from '../assignments.repo';
import { EVENTS } from '../../conversations';
import * as availability from './availability.repo';
import * as repo from './repair.repo';

/**
 * Announce moves made by the system: conversation.assigned with assignedBy null and why, in one statement, in the
 * trace of the event that caused them (`traceparent`).
 */
async function announce(
  db: PoolClient,
  moves: Array<{ conv: repo.MovableConversation; assigneeId: string | null }>,
  reason: AssignmentReason,
  traceparent: string | undefined,
): Promise<void> {
  await enqueueEvents(
    db,
    moves.map(({ conv, assigneeId }) => ({
      type: EVENTS.conversationAssigned,
      orgId: conv.org_id,
      data: {
        conversationId: conv.id,
        contactId: conv.contact_id,
        chatnetAccountId: conv.chatnet_account_id,
        assigneeId,
        teamId: conv.team_id,
        previousAssigneeId: conv.assignee_id,
        assignedBy: null,
        reason,
      },
      traceparent,
    })),
  );
}

/** Identity's word on which users are active (cached briefly by RemoteClients); undefined answers count as not. */
async function activeAmong(deps: Deps, orgId: string, userIds: string[], traceparent: string | undefined): Promise<Set<string>> {
  const answers = await Promise.all(userIds.map((id) => deps.remote.userActive({ orgId, traceparent }, id)));
  return new Set(userIds.filter((_, i) => answers[i] === true));
}

/**
 * One account's share of a user's released conversations, to the account's mode in one go: round robin → the rotation
 * over the listed users (the released user excluded; active, online when onlyOnline, under the cap), the cursor
 * moved once at the end; manual (or nobody eligible) → unassigned. The account's row is locked as the rotation locks
 * it, so new conversations and these take strict turns across instances. A returning contact's previous assignee is
 * not looked for here: the person it is being taken from is usually that very person.
 */
async function releaseAccount(
  deps: Deps,
  db: PoolClient,
  orgId: string,
  accountId: string,
  convs: repo.MovableConversation[],
  userId: string,
  reason: AssignmentReason,
  traceparent: string | undefined,
) {
  const cfg = await assignments.find(db, orgId, accountId, true);
  const moves: Array<{ conv: repo.MovableConversation; assigneeId: string | null }> = [];
  if (!cfg || cfg.mode !== 'round_robin' || cfg.user_ids.length === 0) {
    for (const conv of convs) moves.push({ conv, assigneeId: null });
  } else {
    const active = await activeAmong(deps, orgId, cfg.user_ids, traceparent);
    const away = cfg.only_online ? await availability.notOnline(db, orgId, cfg.user_ids) : new Set<string>();
    const open = await assignments.openCounts(db, orgId, cfg.user_ids);
    const eligible = (id: string) =>
      id !== userId && active.has(id) && !away.has(id) && (cfg.max_open_per_user === null || (open.get(id) ?? 0) < cfg.max_open_per_user);
    const n = cfg.user_ids.length;
    let cursor = cfg.next_index % n;
    for (const conv of convs) {
      let chosen: string | null = null;
      for (let k = 0; k < n; k++) {
        const index = (cursor + k) % n;
        if (!eligible(cfg.user_ids[index])) continue;
        chosen = cfg.user_ids[index];
        cursor = (index + 1) % n;
        open.set(chosen, (open.get(chosen) ?? 0) + 1);
        break;
      }
      moves.push({ conv, assigneeId: chosen });
    }
    if (cursor !== cfg.next_index % n) await assignments.setCursor(db, orgId, accountId, cursor);
  }
  await repo.moveMany(
    db,
    orgId,
    moves.map((m) => ({ id: m.conv.id, assigneeId: m.assigneeId })),
  );
  await announce(db, moves, reason, traceparent);
  return moves.length;
}

/**
 * A user deactivated (all their open conversations) or gone offline (those of onlyOnline accounts): released to each
 * account's mode. A few statements per account whatever the number of conversations. `traceparent`: the trace of the
 * event that says so (eventTraceparent), which the calls, events and log lines continue.
 */
export async function releaseUser(
  deps: Deps,
  db: PoolClient,
  orgId: string,
  userId: string,
  reason: 'user_deactivated' | 'user_offline',
  traceparent: string | undefined,
): Promise<number> {
  const convs = await repo.openOf(db, orgId, userId, reason === 'user_offline');
  const byAccount = new Map<string, repo.MovableConversation[]>();
  for (const c of convs) byAccount.set(c.chatnet_account_id, [...(byAccount.get(c.chatnet_account_id) ?? []), c]);
  let moved = 0;
  for (const [accountId, list] of byAccount) moved += await releaseAccount(deps, db, orgId, accountId, list, userId, reason, traceparent);
  if (moved > 0) deps.log.info({ orgId, userId, reason, moved, ...traceFields({ traceparent }) }, 'conversations released');
  return moved;
}

/**
 * A user got capacity back (one of their conversations closed, they came online): the oldest unassigned conversations
 * of the accounts that list them with drainBacklog go to them, as far as each account's cap allows. Without a cap,
 * one conversation per occasion (a person without a cap still gets work one at a time, not the whole backlog).
 * Skipped when the user is not active, or not online for an onlyOnline account. `traceparent`: as for releaseUser.
 */
export async function drainBacklog(deps: Deps, db: PoolClient, orgId: string, userId: string, traceparent: string | undefined): Promise<number> {
  const accounts = await repo.drainingAccounts(db, orgId, userId);
  if (accounts.length === 0) return 0;
  if (!(await activeAmong(deps, orgId, [userId], traceparent)).has(userId)) return 0;
  const online = await availability.isOnline(db, orgId, userId);
  const usable = accounts.filter((a) => online || !a.only_online);
  let open = (await assignments.openCounts(db, orgId, [userId])).get(userId) ?? 0;
  const room = (cap: number | null, taken: number) => (cap === null ? 1 - taken : cap - open);
  const most = Math.max(0, ...usable.map((a) => room(a.max_open_per_user, 0)));
  if (most === 0) return 0;
  const capOf = new Map(usable.map((a) => [a.chatnet_account_id, a.max_open_per_user]));
  const candidates = await repo.backlog(db, orgId, [...capOf.keys()], most);
  const moves: Array<{ conv: repo.MovableConversation; assigneeId: string | null }> = [];
  for (const conv of candidates) {
    if (room(capOf.get(conv.chatnet_account_id) ?? null, moves.length) <= 0) continue;
    moves.push({ conv, assigneeId: userId });
    open++;
  }
  await repo.moveMany(
    db,
    orgId,
    moves.map((m) => ({ id: m.conv.id, assigneeId: userId })),
  );
  await announce(db, moves, 'backlog', traceparent);
  if (moves.length > 0) deps.log.info({ orgId, userId, taken: moves.length, ...traceFields({ traceparent }) }, 'backlog handed out');
  return moves.length;
}
