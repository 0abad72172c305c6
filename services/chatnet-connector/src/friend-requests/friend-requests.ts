import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, traceFields, OrgContext } from '@crm/grpc-kit';
import { Pool, Queryable, withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { connector } from '@crm/proto-types';
import type { Deps } from '../deps';
import * as repo from './friend-requests.repo';
import type { FriendRequestRow, FriendRequestStatus } from './friend-requests.repo';
import { EVENTS } from '../events';
import { loadAccount } from '../accounts';
import { accountNotConnected, authorizeOutreach, findUser } from '../lookup';

const MESSAGE_MAX = 150;
const STATUSES: readonly FriendRequestStatus[] = ['sent', 'accepted'];

export function toFriendRequest(r: FriendRequestRow): connector.FriendRequest {
  return {
    id: r.id,
    accountId: r.account_id,
    chatnetUid: r.chatnet_uid,
    status: r.status,
    message: r.message,
    createdAt: r.created_at.toISOString(),
    ...(r.accepted_at ? { acceptedAt: r.accepted_at.toISOString() } : {}),
  };
}

/** The network half: ask on the instance holding the session (`call`: the call served, for the line logged). */
export async function sendHere(
  deps: Deps,
  orgId: string,
  accountId: string,
  uid: string,
  message: string,
  call: { traceparent?: string } = {},
): Promise<void> {
  const session = deps.sessions.liveSession(accountId, orgId);
  try {
    await session.sendFriendRequest(uid, message);
  } catch (err) {
    deps.log.warn({ err, accountId, ...traceFields(call) }, 'friend request: the network refused it');
    throw new AppError('unavailable', 'The chat network did not take the friend request; try again later', { code: 'friend_request_failed' });
  }
}

/**
 * SendFriendRequest: the user (by phone, looked up like FindUser, or uid) gets the account's request and message.
 * Recorded as `sent` once the network took it; asking the same user again refreshes the one request.
 */
export async function send(
  deps: Deps,
  ctx: OrgContext,
  req: { accountId: string; phone?: string | null; chatnetUid?: string | null; message?: string },
) {
  authorizeOutreach(ctx);
  const { orgId } = ctx;
  const message = (req.message ?? '').trim();
  if (!message) throw invalid('message', 'is required');
  if (message.length > MESSAGE_MAX) throw invalid('message', `must be at most ${MESSAGE_MAX} characters`);
  const row = await loadAccount(deps, orgId, req.accountId);
  if (row.status !== 'connected') throw accountNotConnected();
  const user = await findUser(deps, ctx, { accountId: row.id, phone: req.phone, chatnetUid: req.chatnetUid });
  if (!user.found || !user.chatnetUid) {
    const field = (req.chatnetUid ?? '').trim() ? 'chatnetUid' : 'phone';
    throw new AppError('failed_precondition', 'Nobody uses this on the chat network', {
      code: 'not_on_network',
      details: [{ field, message: 'is not on the chat network' }],
    });
  }
  const uid = user.chatnetUid;
  try {
    await deps.peers.onHolder(
      row.id,
      () => sendHere(deps, orgId, row.id, uid, message, ctx),
      async (peer) => {
        await peer.PeerSendFriendRequest(
          { accountId: row.id, chatnetUid: uid, message },
          { orgId, requestId: ctx.requestId, traceparent: ctx.traceparent },
        );
      },
    );
  } catch (err) {
    if ((err as AppError).code === 'account_not_live') throw accountNotConnected();
    throw err;
  }
  return toFriendRequest(await repo.upsertSent(deps.pool, { id: randomUUID(), orgId, accountId: row.id, chatnetUid: uid, message }));
}

export async function list(deps: Deps, ctx: OrgContext, req: { accountId: string; status?: string | null; page?: number; limit?: number }) {
  authorizeOutreach(ctx);
  const { orgId } = ctx;
  const status = req.status ? (req.status as FriendRequestStatus) : undefined;
  if (status && !STATUSES.includes(status)) throw invalid('status', `must be one of ${STATUSES.join(', ')}`);
  const row = await loadAccount(deps, orgId, req.accountId);
  const limit = Math.min(100, Math.max(1, req.limit || 20));
  const page = Math.max(1, req.page || 1);
  const { rows, total } = await repo.list(deps.pool, orgId, row.id, status, page, limit);
  return { data: rows.map(toFriendRequest), pagination: { total, page, limit, pages: Math.ceil(total / limit) } };
}

/**
 * The user accepted: the request turns accepted and `friend_request.accepted` is announced, in one transaction.
 * A new friend the CRM never asked (the account accepted their request on the phone) is no request of ours: nothing
 * is recorded (undefined); one already accepted is returned as it is, announced once. `traceparent`: the trace the
 * event continues (the sandbox control call that accepted it; none for the network's news).
 */
export async function recordAccepted(
  pool: Pool,
  orgId: string,
  accountId: string,
  uid: string,
  traceparent: string | undefined,
): Promise<FriendRequestRow | undefined> {
  return withTransaction(pool, async (db) => {
    const row = await repo.markAccepted(db, orgId, accountId, uid);
    if (!row) return repo.find(db, orgId, accountId, uid);
    await acceptedEvent(db, orgId, row, traceparent);
    return row;
  });
}

function acceptedEvent(db: Queryable, orgId: string, row: FriendRequestRow, traceparent: string | undefined) {
  return enqueueEvent(db, {
    type: EVENTS.friendRequestAccepted,
    orgId,
    data: { id: row.id, chatnetAccountId: row.account_id, chatnetUid: row.chatnet_uid, acceptedAt: (row.accepted_at ?? new Date()).toISOString() },
    traceparent,
  });
}

/** The sandbox's accept, when no live session took it (recorded from the control call instead, in its trace). */
export async function acceptedOffline(deps: Deps, orgId: string, accountId: string, uid: string, traceparent: string | undefined) {
  const row = await recordAccepted(deps.pool, orgId, accountId, uid, traceparent);
  if (!row) throw notFound('Friend request');
  return row;
}
