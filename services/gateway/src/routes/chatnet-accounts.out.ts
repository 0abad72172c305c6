import type { z } from 'zod';
import type { connector, messaging } from '@crm/proto-types';
import { orNull } from '../http/shape';
import type {
  Account as AccountOut,
  AccountAssignment as AssignmentOut,
  AccountStatus as AccountStatusOut,
  FoundUser,
  FriendRequest,
  LiveStatus as LiveStatusOut,
  SentMessage as SentMessageOut,
} from './chatnet-accounts.schemas';

type Account = connector.Account__Output;
type LiveStatus = connector.LiveStatus__Output;
type AccountStatus = connector.AccountStatus__Output;
type AccountAssignment = messaging.AccountAssignment__Output;
type SeenByAgent = connector.SeenByAgent__Output;
type SentMessage = connector.SentMessage__Output;

/** The pool's live state; an account the pool does not hold (no liveStatus) is disconnected. */
export function liveStatusOut(l: LiveStatus | null | undefined): z.input<typeof LiveStatusOut> {
  return { state: l?.state ?? 'disconnected', connectedAt: l?.connectedAt ?? null, lastHeartbeat: l?.lastHeartbeat ?? null };
}

/** A chat-network account: optional proto fields arrive absent and unset strings empty; the API shows both as null. */
export function accountOut(a: Account): z.input<typeof AccountOut> {
  return {
    id: a.id,
    chatnetUid: a.chatnetUid ?? null,
    displayName: a.displayName,
    avatarUrl: orNull(a.avatarUrl),
    phone: orNull(a.phone),
    status: a.status,
    liveStatus: liveStatusOut(a.liveStatus),
    ownerUserId: a.ownerUserId ?? null,
    owner: a.owner ? { id: a.owner.id, fullName: a.owner.fullName, email: a.owner.email } : null,
    hasProxy: a.hasProxy,
    lastConnectedAt: a.lastConnectedAt ?? null,
    createdAt: a.createdAt,
  };
}

export function accountStatusOut(s: AccountStatus): z.input<typeof AccountStatusOut> {
  return { accountId: s.accountId, liveStatus: liveStatusOut(s.liveStatus) };
}

/** Auto-assignment (messaging's): the optional cap and reply timeout arrive absent from gRPC when there is none. */
export function assignmentOut(a: AccountAssignment): z.input<typeof AssignmentOut> {
  return {
    chatnetAccountId: a.chatnetAccountId,
    mode: a.mode,
    userIds: a.userIds,
    maxOpenPerUser: a.maxOpenPerUser ?? null,
    onlyOnline: a.onlyOnline,
    replyTimeoutMinutes: a.replyTimeoutMinutes ?? null,
    onTimeout: a.onTimeout ?? null,
    drainBacklog: a.drainBacklog,
  };
}

/** What the account sent to the sandbox network: the message it quoted and when it was recalled, null when none. */
export function sentOut(m: SentMessage): z.input<typeof SentMessageOut> {
  return {
    chatnetMessageId: m.chatnetMessageId,
    threadId: m.threadId,
    threadType: m.threadType,
    content: m.content,
    contentType: m.contentType,
    sentAt: m.sentAt,
    attachments: m.attachments.map((a) => ({ fileName: a.fileName, mimeType: a.mimeType, size: a.size, sha256: a.sha256 })),
    quote: m.quote ? { chatnetMessageId: m.quote.chatnetMessageId } : null,
    recalledAt: m.recalledAt ?? null,
  };
}

/** What the account told the sandbox network it read. */
export function seenByAgentOut(r: SeenByAgent) {
  return {
    threadId: r.threadId,
    threadType: r.threadType,
    messages: r.messages.map((m) => ({ chatnetMessageId: m.chatnetMessageId, cliMsgId: m.cliMsgId, fromUid: m.fromUid, sentAt: m.sentAt })),
    at: r.at,
  };
}

/** A lookup's answer: the user's id, name and avatar when found; all null when nobody uses the number. */
export function foundUserOut(u: connector.FoundUser__Output): z.input<typeof FoundUser> {
  if (!u.found) return { found: false, chatnetUid: null, displayName: null, avatarUrl: null };
  return { found: true, chatnetUid: u.chatnetUid ?? null, displayName: orNull(u.displayName ?? ''), avatarUrl: orNull(u.avatarUrl ?? '') };
}

/** A friend request the account sent; acceptedAt null while it is only sent. */
export function friendRequestOut(r: connector.FriendRequest__Output): z.input<typeof FriendRequest> {
  return {
    id: r.id,
    chatnetAccountId: r.accountId,
    chatnetUid: r.chatnetUid,
    status: r.status as z.input<typeof FriendRequest>['status'],
    message: r.message,
    createdAt: r.createdAt,
    acceptedAt: r.acceptedAt ?? null,
  };
}
