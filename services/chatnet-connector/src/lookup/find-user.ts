import { AppError, invalid, OrgContext, requirePermission, traceFields } from '@crm/grpc-kit';
import type { connector } from '@crm/proto-types';
import type { Deps } from '../deps';
import { networkPhoneDigits, type UserQuery } from '../drivers';
import { connectedAccountIds } from '../account-store';
import { loadAccount } from '../accounts';
import { lookupDigits } from './phone-lookup';

export type FoundUser = connector.FoundUser__Output;

/** A network's answer about a person changes rarely: kept a day, found or not (issue #26). */
const CACHE_TTL_S = 24 * 3600;
const UID_MAX = 64;

/** Lookups are open to everyone who may write to conversations; other services' calls carry no role. */
export function authorizeOutreach(ctx: OrgContext): void {
  if (ctx.role) requirePermission(ctx.role, 'conversations:write');
}

/** Exactly one of phone and chatnetUid, checked: the query to put to the network. */
export function userQueryOf(req: { phone?: string | null; chatnetUid?: string | null }): UserQuery {
  const phone = (req.phone ?? '').trim();
  const uid = (req.chatnetUid ?? '').trim();
  if (phone && uid) throw invalid('phone', 'give either phone or chatnetUid, not both');
  if (uid) {
    if (uid.length > UID_MAX) throw invalid('chatnetUid', `must be at most ${UID_MAX} characters`);
    return { uid };
  }
  if (!phone) throw invalid('phone', 'is required (or chatnetUid)');
  lookupDigits(phone);
  return { phone: networkPhoneDigits(phone) };
}

export const accountNotConnected = () =>
  new AppError('already_exists', 'The chat-network account is not connected; log it in (or reconnect it) first', { code: 'account_not_connected' });

/** Ask through the live session this instance holds (the holder's half of FindUser; `call`: the call served). */
export async function findHere(
  deps: Deps,
  orgId: string,
  accountId: string,
  query: UserQuery,
  call: { traceparent?: string } = {},
): Promise<FoundUser> {
  const session = deps.sessions.liveSession(accountId, orgId);
  let user;
  try {
    user = await session.findUser(query);
  } catch (err) {
    deps.log.warn({ err, accountId, ...traceFields(call) }, 'user lookup: the network did not answer');
    throw new AppError('unavailable', 'The chat network did not answer the lookup; try again later', { code: 'lookup_failed' });
  }
  return user
    ? { found: true, chatnetUid: user.uid, displayName: user.displayName, avatarUrl: user.avatarUrl ?? '', accountId }
    : { found: false, accountId };
}

/**
 * Count one network lookup against the account's budget for this minute: incremented first, then compared, so two
 * instances (or two calls at once) never both take the last one. RESOURCE_EXHAUSTED with the seconds left of the
 * minute above LOOKUP_PER_ACCOUNT_PER_MINUTE.
 */
async function pace(deps: Deps, accountId: string): Promise<void> {
  const now = Date.now();
  const minute = Math.floor(now / 60_000);
  const key = `${deps.config.REDIS_PREFIX}chatnet:lookup-rate:${accountId}:${minute}`;
  const [count] = (await deps.redis.multi().incr(key).expire(key, 120).exec()) as unknown as [number];
  if (Number(count) > deps.config.LOOKUP_PER_ACCOUNT_PER_MINUTE) {
    const retryAfter = Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000));
    throw new AppError(
      'rate_limited',
      `This account may look up at most ${deps.config.LOOKUP_PER_ACCOUNT_PER_MINUTE} people a minute on the network; try again later`,
      {
        code: 'lookup_rate_limited',
        retryAfter,
      },
    );
  }
}

/** Another service's call without an account: the org's connected account used most recently, if any. */
async function defaultAccountId(deps: Deps, ctx: OrgContext): Promise<string> {
  if (ctx.userId) throw invalid('chatnetAccountId', 'is required');
  const [id] = await connectedAccountIds(deps.pool, ctx.orgId, 1);
  if (!id) throw new AppError('failed_precondition', 'No chat-network account of the organization is connected', { code: 'no_connected_account' });
  return id;
}

function cacheKey(deps: Deps, accountId: string, query: UserQuery): string {
  const what = 'phone' in query ? `p:${query.phone}` : `u:${query.uid}`;
  return `${deps.config.REDIS_PREFIX}chatnet:lookup:${accountId}:${what}`;
}

/**
 * FindUser: who a phone number (any Vietnamese spelling) or uid is on the network, asked through one connected
 * account of the caller's org. A cached answer is served without asking the network or counting against the
 * pace; a fresh one is paced per account, asked on the instance holding the session, and kept a day.
 */
export async function findUser(
  deps: Deps,
  ctx: OrgContext,
  req: { accountId: string; phone?: string | null; chatnetUid?: string | null },
): Promise<FoundUser> {
  authorizeOutreach(ctx);
  const { orgId } = ctx;
  const query = userQueryOf(req);
  const row = await loadAccount(deps, orgId, req.accountId || (await defaultAccountId(deps, ctx)));
  if (row.status !== 'connected') throw accountNotConnected();
  const key = cacheKey(deps, row.id, query);
  const cached = await deps.redis.get(key);
  if (cached) return JSON.parse(cached) as FoundUser;
  await pace(deps, row.id);
  let found: FoundUser;
  try {
    found = await deps.peers.onHolder(
      row.id,
      () => findHere(deps, orgId, row.id, query, ctx),
      (peer) =>
        peer.PeerFindUser(
          { accountId: row.id, phone: 'phone' in query ? query.phone : '', chatnetUid: 'uid' in query ? query.uid : '' },
          { orgId, requestId: ctx.requestId, traceparent: ctx.traceparent },
        ),
    );
  } catch (err) {
    // Connected on paper, but its connection is down for a moment (moving between instances).
    if ((err as AppError).code === 'account_not_live') throw accountNotConnected();
    throw err;
  }
  const answer: FoundUser = found.found
    ? { found: true, chatnetUid: found.chatnetUid, displayName: found.displayName ?? '', avatarUrl: found.avatarUrl ?? '', accountId: row.id }
    : { found: false, accountId: row.id };
  await deps.redis.set(key, JSON.stringify(answer), { EX: CACHE_TTL_S });
  return answer;
}
