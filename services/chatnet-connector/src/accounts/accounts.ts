import { randomUUID } from 'node:crypto';
import { iso, isoOrUndefined, withTransaction } from '@crm/db';
import { AppError, can, invalid, notFound, requireCan, requireUser, OrgContext } from '@crm/grpc-kit';
import { connectorRules as rules, isUuid, optionalOneOf, requireText } from '@crm/validation';
import { aad, type AccountRow, accountRows as repo } from '../account-store';
import { recordAudit } from '@crm/events';
import type { Deps } from '../deps';
import { disconnectedEvent, qrEvent } from '../events';
import type { Owner } from '../owners';
import type { LiveInfo } from '../pool';
import { checkProxyHost } from './proxy-url';

export const accountNotFound = () => notFound('Chat-network account');

/** A malformed id is a 404 like an unknown one (and like another org's). */
export async function loadAccount(deps: Deps, orgId: string, id: string): Promise<AccountRow> {
  if (!isUuid(id)) throw accountNotFound();
  const row = await repo.getAccount(deps.pool, orgId, id);
  if (!row) throw accountNotFound();
  return row;
}

/** An account is managed by its owner or by whoever may edit the org's settings (admin, owner). */
function assertMayManage(ctx: OrgContext, row: AccountRow): void {
  if (row.owner_user_id && row.owner_user_id === ctx.userId) return;
  requireCan(ctx, 'settings:edit');
}

export interface LiveStatus {
  state: LiveInfo['state'];
  connectedAt?: string;
  lastHeartbeat?: string;
}

/**
 * What the pool publishes in Redis, read as the client sees it: `connected` only while the instance that
 * wrote it still holds the lease; otherwise `disconnected`, keeping the last heartbeat as "last seen".
 */
export function liveStatusOf(holder: string | null, info: Partial<LiveInfo>): LiveStatus {
  const lastHeartbeat = info.lastHeartbeat || undefined;
  if (holder && info.instance === holder && (info.state === 'connected' || info.state === 'connecting' || info.state === 'qr_pending')) {
    return { state: info.state, connectedAt: info.state === 'connected' ? info.connectedAt || undefined : undefined, lastHeartbeat };
  }
  return { state: 'disconnected', lastHeartbeat };
}

function toAccount(row: AccountRow, live: LiveStatus, owner: Owner | null) {
  return {
    id: row.id,
    chatnetUid: row.chatnet_uid ?? undefined,
    displayName: row.display_name,
    avatarUrl: row.avatar_url,
    phone: row.phone,
    status: row.status,
    liveStatus: live,
    ownerUserId: row.owner_user_id ?? undefined,
    owner,
    hasProxy: row.proxy_enc !== null,
    lastConnectedAt: isoOrUndefined(row.last_connected_at),
    createdAt: iso(row.created_at),
  };
}

async function present(deps: Deps, ctx: OrgContext, rows: AccountRow[]) {
  const [live, owners] = await Promise.all([
    deps.leases.liveInfo(rows.map((r) => r.id)),
    deps.owners.lookup(
      ctx,
      rows.map((r) => r.owner_user_id),
    ),
  ]);
  return rows.map((r, i) => toAccount(r, liveStatusOf(live[i].holder, live[i].info), r.owner_user_id ? (owners.get(r.owner_user_id) ?? null) : null));
}

export async function list(deps: Deps, ctx: OrgContext, req: { status?: string; assignedTo?: string; search?: string }) {
  const { orgId } = requireUser(ctx);
  optionalOneOf(req.status, rules.ACCOUNT_STATUSES, 'status');
  if (req.assignedTo && !isUuid(req.assignedTo)) throw invalid('assignedTo', 'must be a user id');
  const rows = await repo.listAccounts(deps.pool, orgId, {
    status: req.status,
    ownerUserId: req.assignedTo,
    search: req.search?.trim() || undefined,
  });
  return { data: await present(deps, ctx, rows) };
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  const row = await loadAccount(deps, orgId, id);
  return (await present(deps, ctx, [row]))[0];
}

/** The QR code shown now by a login of the account (cached in Redis by the instance running it), or nothing. */
export async function pendingQr(deps: Deps, ctx: OrgContext, id: string): Promise<{ qr?: string; expiresAt?: string }> {
  const { orgId } = requireUser(ctx);
  await loadAccount(deps, orgId, id);
  const current = await deps.sessions.currentQr(id);
  return current ? { qr: current.qr, expiresAt: current.expiresAt } : {};
}

/**
 * POST /chatnet-accounts: admins and owners (settings:edit): each account is a live session on the network and a QR
 * login, so an agent cannot add any number of them. An org holds at most CHATNET_ACCOUNTS_MAX_PER_ORG (409 above).
 */
export async function create(deps: Deps, ctx: OrgContext, req: { displayName: string; proxyUrl?: string; ownerUserId?: string }) {
  const { orgId, userId } = requireUser(ctx);
  requireCan(ctx, 'settings:edit');
  const displayName = requireText(req.displayName, 'displayName', rules.DISPLAY_NAME_MAX);
  let ownerUserId = userId;
  if (req.ownerUserId && req.ownerUserId !== userId) {
    if (!can(ctx.role, 'settings:edit'))
      throw new AppError('permission_denied', 'Only an admin can create an account for another user', { code: 'forbidden' });
    if (!isUuid(req.ownerUserId)) throw invalid('ownerUserId', 'must be a user id');
    const exists = await deps.owners.exists(ctx, req.ownerUserId);
    if (exists === undefined) throw new AppError('unavailable', 'Users cannot be checked right now; try again', { code: 'identity_unavailable' });
    if (!exists) throw invalid('ownerUserId', 'no such user in this organization');
    ownerUserId = req.ownerUserId;
  }
  const id = randomUUID();
  const proxy = rules.proxyUrl(req.proxyUrl ?? '') || null;
  if (proxy) await checkProxyHost(deps.guard, deps.log, proxy, ctx);
  const max = deps.config.CHATNET_ACCOUNTS_MAX_PER_ORG;
  const row = await withTransaction(deps.pool, (tx) =>
    repo.insertAccount(tx, { id, orgId, displayName, ownerUserId, proxyEnc: proxy ? deps.box.encrypt(proxy, aad(orgId, id)) : null }, max),
  );
  if (!row) {
    throw new AppError('already_exists', `This organization already has ${max} chat-network accounts, the most it may hold; delete one first`, {
      code: 'account_limit_reached',
    });
  }
  return { id: row.id, displayName: row.display_name, status: row.status, createdAt: iso(row.created_at) };
}

export async function login(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  const row = await loadAccount(deps, orgId, id);
  assertMayManage(ctx, row);
  for (let attempt = 0; attempt < 2; attempt++) {
    // What the login records later (its QR codes, the connected event) stays in this call's trace (login-flow.ts).
    if (await deps.sessions.startLogin(row, ctx.traceparent)) {
      return { ok: true, message: `QR login started; the code is sent to room account:${id} and refreshed when it expires` };
    }
    const [{ holder, info }] = await deps.leases.liveInfo([id]);
    if (!holder) continue; // freed between our attempt and the look: try once more
    const live = liveStatusOf(holder, info);
    if (live.state === 'connected') {
      throw new AppError('failed_precondition', 'The account is already connected', { code: 'already_connected' });
    }
    if (live.state === 'qr_pending') {
      const current = await deps.sessions.currentQr(id);
      if (current) await qrEvent(deps.pool, orgId, id, current.qr, new Date(current.expiresAt), ctx.traceparent);
      return { ok: true, message: `A QR login is already in progress; the current code was sent to room account:${id} again` };
    }
    throw new AppError('failed_precondition', 'The account is reconnecting; try again in a moment', { code: 'reconnect_in_progress' });
  }
  throw new AppError('failed_precondition', 'The account is busy; try again in a moment', { code: 'account_busy' });
}

export async function reconnect(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  const row = await loadAccount(deps, orgId, id);
  assertMayManage(ctx, row);
  if (!row.session_enc) {
    throw new AppError('failed_precondition', 'The account has no stored session; log in with a QR code', { code: 'no_session' });
  }
  if (await deps.leases.acquire(id, 'connecting')) {
    await deps.leases.clearBackoff(id);
    await deps.sessions.restore(id, orgId, ctx.traceparent);
    return { ok: true, message: 'Reconnected from the stored session data' };
  }
  const [{ holder, info }] = await deps.leases.liveInfo([id]);
  const live = liveStatusOf(holder, info);
  if (live.state === 'connected') return { ok: true, message: 'The account is already connected' };
  if (live.state === 'qr_pending')
    throw new AppError('failed_precondition', 'A QR login is in progress for this account', { code: 'login_in_progress' });
  throw new AppError('failed_precondition', 'The account is already reconnecting; try again in a moment', { code: 'reconnect_in_progress' });
}

export async function status(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  await loadAccount(deps, orgId, id);
  const [{ holder, info }] = await deps.leases.liveInfo([id]);
  return { accountId: id, liveStatus: liveStatusOf(holder, info) };
}

export async function setProxy(deps: Deps, ctx: OrgContext, req: { id: string; proxyUrl: string }) {
  const { orgId } = requireUser(ctx);
  const row = await loadAccount(deps, orgId, req.id);
  assertMayManage(ctx, row);
  const proxy = rules.proxyUrl(req.proxyUrl ?? '') || null;
  if (proxy) await checkProxyHost(deps.guard, deps.log, proxy, ctx);
  if (!(await repo.setProxy(deps.pool, orgId, row.id, proxy ? deps.box.encrypt(proxy, aad(orgId, row.id)) : null))) throw accountNotFound();
  // A live session dialled through the old proxy: close it and connect again through the new one.
  const restarted = await deps.peers
    .onHolder(
      row.id,
      () => deps.sessions.release(row.id, true, ctx.traceparent),
      async (peer) => (await peer.PeerRelease({ accountId: row.id, restart: true }, { traceparent: ctx.traceparent })).ok,
    )
    .catch(() => false);
  const what = proxy ? 'Proxy set' : 'Proxy cleared';
  return {
    message: restarted ? `${what}; the live connection is being re-established with it` : `${what}; it applies from the next connection`,
    hasProxy: proxy !== null,
  };
}

export async function remove(deps: Deps, ctx: OrgContext, req: { id: string; purge: boolean }) {
  const { orgId } = requireUser(ctx);
  const row = await loadAccount(deps, orgId, req.id);
  assertMayManage(ctx, row);
  await withTransaction(deps.pool, async (tx) => {
    if (!(await repo.softDelete(tx, orgId, row.id, req.purge))) throw accountNotFound();
    if (row.status === 'connected') await disconnectedEvent(tx, orgId, row.id, 'deleted', ctx.traceparent);
    await recordAudit(tx, ctx, {
      action: 'chatnet_account.deleted',
      resourceType: 'chatnet_account',
      resourceId: row.id,
      details: { displayName: row.display_name, chatnetUid: row.chatnet_uid, status: row.status, purged: req.purge },
    });
  });
  // The holder also lets go at its next scan (the row no longer wants a session); this makes it immediate.
  await deps.peers
    .onHolder(
      row.id,
      () => deps.sessions.release(row.id, false, ctx.traceparent),
      // The holder answers `ok` with what its release returned, as the local branch does.
      async (peer) => (await peer.PeerRelease({ accountId: row.id, restart: false }, { traceparent: ctx.traceparent })).ok,
    )
    .catch(() => undefined);
  return {};
}
