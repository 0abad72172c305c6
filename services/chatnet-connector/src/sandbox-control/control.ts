import { AppError, invalid, requireCan, requireUser, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import {
  type ChatnetProfile,
  type Friend,
  type InboundMessage,
  networkMessageId,
  networkUid,
  type ReactionNotice,
  type RecallNotice,
  SandboxNetwork,
  type SeenReceipt,
  type ThreadType,
} from '../drivers';
import { friendsEvent } from '../events';
import { pushedFilesOf, storeFiles } from './inbound-files';
import { notLive } from '../pool';
import { lookupDigits } from '../lookup';
import { emojiOf } from '../messages';
import { accounts, loadAccount } from '../accounts';
import { acceptedOffline, findFriendRequest as findRequest, toFriendRequest } from '../friend-requests';

/**
 * The sandbox network's control API (ARCHITECTURE.md "Chat network"): complete a QR scan, deliver an
 * inbound message, read what the account sent (a read receipt), drop a connection, set the friend list.
 * Exists only with CHATNET_DRIVER=sandbox outside production and needs `sandbox:control` (owner, admin). Pushes to a live
 * connection run on the instance holding it, which hands them to its network: its own, or the standalone network
 * process (CHATNET_SANDBOX_URL) its sessions are connected to.
 */
function sandboxOf(deps: Deps, ctx: OrgContext): SandboxNetwork {
  if (!deps.sandbox)
    throw new AppError('not_found', 'Sandbox control is off (it needs CHATNET_DRIVER=sandbox and NODE_ENV other than production)', {
      code: 'not_found',
    });
  requireUser(ctx);
  requireCan(ctx, 'sandbox:control');
  return deps.sandbox.network;
}

const noPendingLogin = () =>
  new AppError('failed_precondition', 'No QR login is pending for this account; start one with POST /api/v1/chatnet-accounts/:id/login', {
    code: 'no_pending_login',
  });

const ACTIONS = ['scan', 'inbound', 'seen', 'drop', 'friends', 'recall', 'react', 'friend_accepted'] as const;
type Action = (typeof ACTIONS)[number];

/** The action a forwarded sandbox call names, checked (it arrives as a string from another instance). */
export function sandboxAction(action: string): Action {
  if (!(ACTIONS as readonly string[]).includes(action)) throw invalid('action', `must be one of ${ACTIONS.join(', ')}`);
  return action as Action;
}

/**
 * The part that must run where the connection (or pending login) lives. What the push makes the connection record (its
 * events, their log lines) continues `traceparent`, the control call's (or the peer call's that forwarded it): news
 * pushed by a call names it (drivers/driver.ts, Pushed), since the connector has no active context (main.ts).
 */
export async function runLocal(
  deps: Deps,
  orgId: string,
  accountId: string,
  action: Action,
  payload: any,
  traceparent: string | undefined,
): Promise<unknown> {
  const live = deps.sandbox?.live;
  if (!live) throw new AppError('not_found', 'Sandbox control is off', { code: 'not_found' });
  switch (action) {
    case 'scan': {
      const done = deps.sessions.pendingLogin(accountId);
      if (!done || !(await live.scan(accountId, payload as ChatnetProfile))) throw noPendingLogin();
      await done;
      return {};
    }
    case 'inbound': {
      deps.sessions.liveSession(accountId, orgId);
      const m = payload as Omit<InboundMessage, 'sentAt'> & { sentAt: string };
      if (!(await live.deliver(accountId, { ...m, sentAt: new Date(m.sentAt), traceparent }))) throw notLive();
      return {};
    }
    case 'seen': {
      deps.sessions.liveSession(accountId, orgId);
      const r = payload as Omit<SeenReceipt, 'seenAt'> & { seenAt: string };
      if (!(await live.seen(accountId, { ...r, seenAt: new Date(r.seenAt), traceparent }))) throw notLive();
      return {};
    }
    case 'recall': {
      deps.sessions.liveSession(accountId, orgId);
      const r = payload as Omit<RecallNotice, 'recalledAt'> & { recalledAt: string };
      if (!(await live.recalled(accountId, { ...r, recalledAt: new Date(r.recalledAt), traceparent }))) throw notLive();
      return {};
    }
    case 'react': {
      deps.sessions.liveSession(accountId, orgId);
      const r = payload as Omit<ReactionNotice, 'at'> & { at: string };
      if (!(await live.reacted(accountId, { ...r, at: new Date(r.at), traceparent }))) throw notLive();
      return {};
    }
    case 'drop': {
      deps.sessions.liveSession(accountId, orgId);
      if (!(await live.drop(accountId, { reason: payload.reason, sessionExpired: payload.expireSession, traceparent }))) throw notLive();
      await deps.sessions.settled(accountId);
      return {};
    }
    case 'friends':
      deps.sessions.liveSession(accountId, orgId);
      return { count: await deps.sessions.syncFriends(accountId, traceparent) };
    case 'friend_accepted':
      deps.sessions.liveSession(accountId, orgId);
      if (!(await live.friendAccepted(accountId, String(payload.chatnetUid), traceparent))) throw notLive();
      return {};
  }
}

function onHolder(deps: Deps, ctx: OrgContext, accountId: string, action: Action, payload: unknown, whenNobody: () => AppError) {
  const { orgId, traceparent } = ctx;
  return deps.peers
    .onHolder(
      accountId,
      () => runLocal(deps, orgId, accountId, action, payload, traceparent),
      async (peer) =>
        JSON.parse((await peer.PeerSandbox({ accountId, action, payloadJson: JSON.stringify(payload) }, { orgId, traceparent })).resultJson || '{}'),
    )
    .catch((err: AppError) => {
      throw err.code === 'account_not_live' ? whenNobody() : err;
    });
}

const text = (field: string, value: string | undefined, max: number, required = false): string => {
  const v = (value ?? '').trim();
  if (required && !v) throw invalid(field, 'is required');
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
};

export async function scan(
  deps: Deps,
  ctx: OrgContext,
  req: { id: string; chatnetUid?: string; displayName?: string; phone?: string; avatarUrl?: string },
) {
  sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, req.id);
  const uid = text('chatnetUid', req.chatnetUid, 64) || networkUid();
  const profile: ChatnetProfile = {
    uid,
    displayName: text('displayName', req.displayName, 100) || `Sandbox user ${uid.slice(-4)}`,
    phone: text('phone', req.phone, 40),
    avatarUrl: text('avatarUrl', req.avatarUrl, 2000),
  };
  await onHolder(deps, ctx, row.id, 'scan', profile, noPendingLogin);
  return accounts.get(deps, ctx, row.id);
}

export async function inbound(
  deps: Deps,
  ctx: OrgContext,
  req: {
    id: string;
    fromUid: string;
    fromName: string;
    content: string;
    threadType: string;
    threadId: string;
    fromAvatar: string;
    contentType: string;
    chatnetMessageId: string;
    groupName?: string;
    attachments?: Array<{ fileName?: string; mimeType?: string; contentBase64?: string }>;
    quoteChatnetMessageId?: string;
  },
) {
  sandboxOf(deps, ctx);
  // The hot path of the sandbox (benchmarks push hundreds of messages a second): when this instance holds
  // the account live for the caller's org, the account exists, is connected and is the org's, so neither
  // the database row nor the lease in Redis is read; the push goes straight to the local connection, like
  // the network pushing to the client it is connected to. Otherwise the full path below.
  const held = deps.sessions.isLive(req.id, ctx.orgId);
  let row = held ? undefined : await loadAccount(deps, ctx.orgId, req.id);
  const fromUid = text('fromUid', req.fromUid, 64, true);
  const pushed = pushedFilesOf(req.attachments ?? [], deps.config.ATTACHMENT_MAX_BYTES);
  const content = req.content ?? '';
  if (!content.trim() && pushed.length === 0) throw invalid('content', 'is required');
  if (content.length > 20_000) throw invalid('content', 'must be at most 20000 characters');
  const threadType = (req.threadType || 'user') as ThreadType;
  if (threadType !== 'user' && threadType !== 'group') throw invalid('threadType', 'must be user or group');
  const threadId = text('threadId', req.threadId, 64) || (threadType === 'user' ? fromUid : '');
  if (!threadId) throw invalid('threadId', 'is required for group threads');
  // Only a group has a name of its own; a user thread is named after its contact.
  const groupName = text('groupName', req.groupName, 200);
  if (groupName && threadType !== 'group') throw invalid('groupName', 'is only allowed with threadType group');
  // Before any file is stored: a push refused anyway must not leave files behind.
  if (row && row.status !== 'connected') throw notLive('it is not connected');
  // A reply quotes a message of its own thread that the network knows (one the contact or the account sent).
  const quoteChatnetMessageId = text('quoteChatnetMessageId', req.quoteChatnetMessageId, 64);
  if (quoteChatnetMessageId) {
    const quoted = await deps.sandbox!.network.messageOf(req.id, '', quoteChatnetMessageId);
    if (!quoted || quoted.threadId !== threadId || quoted.threadType !== threadType)
      throw invalid('quoteChatnetMessageId', 'must be a message of this thread');
  }
  const message = {
    chatnetMessageId: text('chatnetMessageId', req.chatnetMessageId, 64) || networkMessageId(),
    // The sender's own id of the message, as the real network gives one with every message.
    cliMsgId: networkMessageId(),
    threadId,
    threadType,
    fromUid,
    fromName: text('fromName', req.fromName, 200) || fromUid,
    fromAvatar: text('fromAvatar', req.fromAvatar, 2000),
    content,
    contentType: text('contentType', req.contentType, 50) || 'text',
    sentAt: new Date().toISOString(),
    ...(groupName ? { groupName } : {}),
    ...(quoteChatnetMessageId ? { quoteChatnetMessageId } : {}),
    // The network hands files to the client, which stores them before it announces the message: only their ids
    // travel on (to the holder, into the held store, in the event), never the bytes.
    ...(pushed.length ? { attachments: await storeFiles(deps, ctx.orgId, pushed, ctx.requestId) } : {}),
  };
  // Where the message belongs, for a recall, a reaction or a quote that names it later.
  await deps.sandbox!.network.recordInbound(req.id, message.chatnetMessageId, { threadId, threadType, fromUid });
  if (!row) {
    try {
      await runLocal(deps, ctx.orgId, req.id, 'inbound', message, ctx.traceparent);
      return { accountId: req.id, chatnetMessageId: message.chatnetMessageId, cliMsgId: message.cliMsgId, threadId, sentAt: message.sentAt };
    } catch (err) {
      // Handed to another instance since the check: take the full path.
      if ((err as AppError).code !== 'account_not_live') throw err;
      row = await loadAccount(deps, ctx.orgId, req.id);
    }
  }
  if (row.status !== 'connected') throw notLive('it is not connected');
  try {
    await onHolder(deps, ctx, row.id, 'inbound', message, () => notLive());
  } catch (err) {
    if ((err as AppError).code !== 'account_not_live') throw err;
    // Connected, but its connection is down for a moment (moving to another instance, or being taken over
    // after a crash): the network keeps the message for the next connection, as a real one would.
    await deps.sandbox!.live.hold(row.id, { ...message, sentAt: new Date(message.sentAt), traceparent: ctx.traceparent });
  }
  return { accountId: row.id, chatnetMessageId: message.chatnetMessageId, cliMsgId: message.cliMsgId, threadId, sentAt: message.sentAt };
}

/**
 * The agent types a message on the phone (the account's own device): the network hands it to the account's
 * connection as the account's own message, which messaging stores as outbound. A `chatnetMessageId` the CRM sent
 * already (its echo) is stored once.
 */
export async function self(
  deps: Deps,
  ctx: OrgContext,
  req: { id: string; threadId: string; threadType: string; content: string; contentType: string; chatnetMessageId: string },
) {
  sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, req.id);
  const threadType = (req.threadType || 'user') as ThreadType;
  if (threadType !== 'user' && threadType !== 'group') throw invalid('threadType', 'must be user or group');
  const threadId = text('threadId', req.threadId, 64, true);
  const content = req.content ?? '';
  if (!content.trim()) throw invalid('content', 'is required');
  if (content.length > 20_000) throw invalid('content', 'must be at most 20000 characters');
  if (row.status !== 'connected' || !row.chatnet_uid) throw notLive('it is not connected');
  const message = {
    chatnetMessageId: text('chatnetMessageId', req.chatnetMessageId, 64) || networkMessageId(),
    cliMsgId: networkMessageId(),
    threadId,
    threadType,
    fromUid: row.chatnet_uid,
    fromName: row.display_name,
    fromAvatar: row.avatar_url,
    content,
    contentType: text('contentType', req.contentType, 50) || 'text',
    sentAt: new Date().toISOString(),
    fromSelf: true as const,
  };
  try {
    await onHolder(deps, ctx, row.id, 'inbound', message, () => notLive());
  } catch (err) {
    if ((err as AppError).code !== 'account_not_live') throw err;
    // As for a contact's message: kept for the account's next connection.
    await deps.sandbox!.live.hold(row.id, { ...message, sentAt: new Date(message.sentAt), traceparent: ctx.traceparent });
  }
  return { accountId: row.id, chatnetMessageId: message.chatnetMessageId, cliMsgId: message.cliMsgId, threadId, sentAt: message.sentAt };
}

/** At most this many message ids in one receipt (the sandbox keeps the last 200 sends of an account anyway). */
const SEEN_MAX_IDS = 200;

/**
 * The recipient reads messages the account sent to a thread: the network sends the account a read receipt.
 * Without ids it is like opening the chat: every message the account sent to that thread so far.
 */
export async function seen(
  deps: Deps,
  ctx: OrgContext,
  req: { id: string; threadId: string; threadType: string; chatnetMessageIds?: string[]; seenByUid?: string },
) {
  const net = sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, req.id);
  const threadType = (req.threadType || 'user') as ThreadType;
  if (threadType !== 'user' && threadType !== 'group') throw invalid('threadType', 'must be user or group');
  const threadId = text('threadId', req.threadId, 64, true);
  const given = req.chatnetMessageIds ?? [];
  if (given.length > SEEN_MAX_IDS) throw invalid('chatnetMessageIds', `must have at most ${SEEN_MAX_IDS} entries`);
  const named = [...new Set(given.map((id, i) => text(`chatnetMessageIds.${i}`, id, 64, true)))];
  // A user thread is read by its other party; a group receipt names the member when the caller does.
  const seenByUid = text('seenByUid', req.seenByUid, 64) || (threadType === 'user' ? threadId : '');
  if (row.status !== 'connected') throw notLive('it is not connected');
  const chatnetMessageIds = named.length
    ? named
    : (await net.sentBy(row.id)).filter((m) => m.threadId === threadId && m.threadType === threadType).map((m) => m.chatnetMessageId);
  if (chatnetMessageIds.length === 0) {
    throw new AppError('failed_precondition', 'The account has sent nothing to this thread, so there is nothing to read', { code: 'nothing_sent' });
  }
  const seenAt = new Date().toISOString();
  const receipt = { threadId, threadType, chatnetMessageIds, ...(seenByUid ? { seenByUid } : {}), seenAt };
  await onHolder(deps, ctx, row.id, 'seen', receipt, () => notLive());
  return { accountId: row.id, threadId, threadType, chatnetMessageIds, seenByUid, seenAt };
}

export async function drop(deps: Deps, ctx: OrgContext, req: { id: string; reason: string; expireSession: boolean }) {
  sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, req.id);
  const reason = text('reason', req.reason, 200) || 'connection_dropped';
  await onHolder(deps, ctx, row.id, 'drop', { reason, expireSession: !!req.expireSession }, () => notLive());
  return {
    ok: true,
    message: req.expireSession
      ? 'Connection dropped and its session invalidated; a new QR login is needed'
      : 'Connection dropped; the pool reconnects from the stored session data',
  };
}

export async function setFriends(deps: Deps, ctx: OrgContext, req: { id: string; friends: Friend[] }) {
  const net = sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, req.id);
  if (!row.chatnet_uid) {
    throw new AppError('failed_precondition', 'The account has never connected, so it has no chat-network user yet', { code: 'never_connected' });
  }
  if ((req.friends ?? []).length > 5000) throw invalid('friends', 'must have at most 5000 entries');
  const friends = (req.friends ?? []).map((f, i) => ({
    chatnetUid: text(`friends.${i}.chatnetUid`, f.chatnetUid, 64, true),
    displayName: text(`friends.${i}.displayName`, f.displayName, 200),
  }));
  await net.setFriends(row.chatnet_uid, friends);
  let delivered = true;
  try {
    await onHolder(deps, ctx, row.id, 'friends', {}, () => notLive());
  } catch (err) {
    if ((err as AppError).code !== 'account_not_live') throw err;
    // Nobody holds it live: the list is announced now from here, and again at its next connection.
    delivered = false;
    await friendsEvent(deps.pool, ctx.orgId, row.id, friends, ctx.traceparent);
  }
  return { accountId: row.id, friends, delivered };
}

export async function sentMessages(deps: Deps, ctx: OrgContext, id: string) {
  const net = sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, id);
  return { data: await net.sentBy(row.id) };
}

/** A message of the account's threads the network knows, for a recall or a reaction (400 naming the id when unknown). */
async function knownMessage(net: SandboxNetwork, row: { id: string; chatnet_uid: string | null }, chatnetMessageId: string | undefined) {
  const id = text('chatnetMessageId', chatnetMessageId, 64, true);
  const known = await net.messageOf(row.id, row.chatnet_uid ?? '', id);
  if (!known) throw invalid('chatnetMessageId', 'is not a message of this account’s threads');
  return { id, known };
}

/**
 * The contact recalls a message they sent to the account: the network tells the account's live connection, which
 * announces it (chatnet.recalled). Only a message a contact sent; the account's own are recalled through the CRM.
 */
export async function recall(deps: Deps, ctx: OrgContext, req: { id: string; chatnetMessageId?: string }) {
  const net = sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, req.id);
  const { id, known } = await knownMessage(net, row, req.chatnetMessageId);
  if (!known.inbound) throw invalid('chatnetMessageId', 'is a message the account sent; a contact recalls only their own');
  if (row.status !== 'connected') throw notLive('it is not connected');
  const recalledAt = new Date().toISOString();
  const notice = { threadId: known.threadId, threadType: known.threadType, chatnetMessageId: id, fromUid: known.fromUid, recalledAt };
  await onHolder(deps, ctx, row.id, 'recall', notice, () => notLive());
  return { accountId: row.id, chatnetMessageId: id, threadId: known.threadId, threadType: known.threadType, recalledAt };
}

/** A member of the thread reacts to a message of it (an empty emoji takes their reaction back). */
export async function react(deps: Deps, ctx: OrgContext, req: { id: string; chatnetMessageId?: string; fromUid?: string; emoji?: string }) {
  const net = sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, req.id);
  const { id, known } = await knownMessage(net, row, req.chatnetMessageId);
  const fromUid = text('fromUid', req.fromUid, 64, true);
  const emoji = emojiOf(req.emoji);
  if (row.status !== 'connected') throw notLive('it is not connected');
  const at = new Date().toISOString();
  const notice = { threadId: known.threadId, threadType: known.threadType, chatnetMessageId: id, fromUid, emoji, at };
  await onHolder(deps, ctx, row.id, 'react', notice, () => notLive());
  return { accountId: row.id, chatnetMessageId: id, threadId: known.threadId, threadType: known.threadType, fromUid, emoji, at };
}

/** Numbers registered per call (the directory itself has no limit, as a network's has none). */
const PHONES_MAX = 500;

/**
 * Register phone numbers in the network's user directory: a phone lookup (LookupPhone) from any account
 * then finds that user. The directory is the network's, not an org's, like the friend lists.
 */
export async function setPhones(
  deps: Deps,
  ctx: OrgContext,
  req: { phones?: Array<{ phone?: string; chatnetUid?: string; displayName?: string; acceptsStrangers?: boolean | null }> },
) {
  const net = sandboxOf(deps, ctx);
  const list = req.phones ?? [];
  if (list.length === 0) throw invalid('phones', 'is required (at least one number)');
  if (list.length > PHONES_MAX) throw invalid('phones', `must have at most ${PHONES_MAX} entries`);
  const phones = list.map((p, i) => {
    const phone = text(`phones.${i}.phone`, p.phone, 40, true);
    try {
      lookupDigits(phone);
    } catch {
      throw invalid(`phones.${i}.phone`, 'must be a phone number of 5 to 15 digits');
    }
    const chatnetUid = text(`phones.${i}.chatnetUid`, p.chatnetUid, 64) || networkUid();
    const displayName = text(`phones.${i}.displayName`, p.displayName, 200) || `Sandbox user ${chatnetUid.slice(-4)}`;
    return { phone, chatnetUid, displayName, acceptsStrangers: p.acceptsStrangers !== false };
  });
  await net.registerPhones(
    phones.map((p) => ({ phone: p.phone, uid: p.chatnetUid, displayName: p.displayName, acceptsStrangers: p.acceptsStrangers })),
  );
  return { phones };
}

/**
 * The network user accepts the account's pending friend request: on the network they become friends; the account's
 * live connection hears of it (the request turns accepted, friend_request.accepted, the friend list is synced), or,
 * with nobody holding it live, the acceptance is recorded from here and the list announced.
 */
export async function acceptFriendRequest(deps: Deps, ctx: OrgContext, req: { id: string; chatnetUid: string }) {
  const net = sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, req.id);
  const uid = text('chatnetUid', req.chatnetUid, 64, true);
  const pending = await findRequest(deps.pool, ctx.orgId, row.id, uid);
  if (!row.chatnet_uid || !pending || pending.status !== 'sent' || !(await net.acceptFriend(row.chatnet_uid, uid))) {
    throw new AppError('not_found', 'No friend request of this account to that user is pending', { code: 'not_found' });
  }
  try {
    await onHolder(deps, ctx, row.id, 'friend_accepted', { chatnetUid: uid }, () => notLive());
  } catch (err) {
    if ((err as AppError).code !== 'account_not_live') throw err;
    await acceptedOffline(deps, ctx.orgId, row.id, uid, ctx.traceparent);
    await friendsEvent(deps.pool, ctx.orgId, row.id, await net.friendsOf(row.chatnet_uid), ctx.traceparent);
  }
  return toFriendRequest((await findRequest(deps.pool, ctx.orgId, row.id, uid))!);
}

/** What the account told the network it read, newest first (the agent marked conversations read in the CRM). */
export async function seenByAgent(deps: Deps, ctx: OrgContext, id: string) {
  const net = sandboxOf(deps, ctx);
  const row = await loadAccount(deps, ctx.orgId, id);
  return { data: await net.seenByAgent(row.id) };
}
