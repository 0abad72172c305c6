import { createHash } from 'node:crypto';
import type { Queryable } from '@crm/db';
import { enqueueEvent, type EventType, type NewEvent } from '@crm/events';
import type { Friend, InboundMessage, ReactionNotice, RecallNotice, SeenReceipt } from '../drivers';

/**
 * The events this service produces, through the outbox (same transaction as the change); only chatnet.inbound is
 * published straight to the broker while it confirms (news-publisher.ts). Each names the trace it continues
 * (`traceparent`: the call that caused it, undefined for the network's news, a timer's or a scan's work): the service
 * runs without an active context (main.ts).
 */
export const EVENTS = {
  inbound: 'chatnet.inbound',
  seen: 'chatnet.seen',
  recalled: 'chatnet.recalled',
  reaction: 'chatnet.reaction',
  qr: 'chatnet_account.qr',
  connected: 'chatnet_account.connected',
  disconnected: 'chatnet_account.disconnected',
  friends: 'chatnet_account.friends',
  friendRequestAccepted: 'friend_request.accepted',
} as const satisfies Record<string, EventType>;

/**
 * A UUID derived from the account and the network's message id: the network may hand the same message
 * over twice (reconnects, takeovers), and the outbox ignores an id it already holds (consumers, one they processed).
 */
export function inboundEventId(accountId: string, chatnetMessageId: string): string {
  return derivedEventId(EVENTS.inbound, accountId, chatnetMessageId);
}

/** A name-based UUID (version 5 layout) of the parts, so the same news from the network gets the same event id. */
function derivedEventId(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\0')).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** An inbound message as an event; handed to the NewsPublisher, published with the others that arrive with it. */
export function inboundEvent(orgId: string, accountId: string, m: InboundMessage): NewEvent {
  return {
    id: inboundEventId(accountId, m.chatnetMessageId),
    type: EVENTS.inbound,
    orgId,
    // News from the network: a trace of its own, unless the sandbox's control API pushed it (that call's).
    traceparent: m.traceparent,
    data: {
      accountId,
      chatnetMessageId: m.chatnetMessageId,
      threadId: m.threadId,
      threadType: m.threadType,
      fromUid: m.fromUid,
      fromName: m.fromName,
      fromAvatar: m.fromAvatar,
      content: m.content,
      contentType: m.contentType,
      sentAt: m.sentAt.toISOString(),
      ...(m.threadType === 'group' && m.groupName ? { groupName: m.groupName } : {}),
      // Messaging keeps it: marking the message read on the network needs it back.
      ...(m.cliMsgId ? { cliMsgId: m.cliMsgId } : {}),
      // Typed by the account itself on another device: outbound in messaging, never a message received.
      ...(m.fromSelf ? { fromSelf: true } : {}),
      // A reply: the network id of the message it quotes (messaging links it to the stored one).
      ...(m.quoteChatnetMessageId ? { quoteChatnetMessageId: m.quoteChatnetMessageId } : {}),
      // Stored in messaging already: the event names the files, it never carries their bytes.
      ...(m.attachments?.length
        ? { attachments: m.attachments.map((a) => ({ id: a.id, fileName: a.fileName, mimeType: a.mimeType, size: a.size })) }
        : {}),
    },
  };
}

/**
 * A read receipt. Its id derives from what was read and by whom: the network repeating a receipt (or the
 * sandbox control asked twice) enters the outbox once; a new reader or a newer message is a new event.
 * Handed to the NewsPublisher (to the outbox), in order with the messages.
 */
export function seenEvent(orgId: string, accountId: string, r: SeenReceipt): NewEvent {
  const ids = [...new Set(r.chatnetMessageIds)];
  return {
    id: derivedEventId(EVENTS.seen, accountId, r.threadType, r.threadId, r.seenByUid ?? '', [...ids].sort().join(',')),
    type: EVENTS.seen,
    orgId,
    traceparent: r.traceparent,
    data: {
      accountId,
      threadId: r.threadId,
      threadType: r.threadType,
      chatnetMessageIds: ids,
      seenByUid: r.seenByUid ?? null,
      seenAt: r.seenAt.toISOString(),
    },
  };
}

/** A recall from the network; its id derives from the message, so the network repeating it is one event. */
export function recalledEvent(orgId: string, accountId: string, r: RecallNotice): NewEvent {
  return {
    id: derivedEventId(EVENTS.recalled, accountId, r.threadType, r.threadId, r.chatnetMessageId),
    type: EVENTS.recalled,
    orgId,
    traceparent: r.traceparent,
    data: {
      accountId,
      threadId: r.threadId,
      threadType: r.threadType,
      chatnetMessageId: r.chatnetMessageId,
      fromUid: r.fromUid,
      recalledAt: r.recalledAt.toISOString(),
    },
  };
}

/**
 * A reaction from the network. Its id derives from the message, the member, the emoji and the time: the same news
 * repeated is one event, a member changing their mind (and changing back) is each time a new one.
 */
export function reactionEvent(orgId: string, accountId: string, r: ReactionNotice): NewEvent {
  return {
    id: derivedEventId(EVENTS.reaction, accountId, r.threadType, r.threadId, r.chatnetMessageId, r.fromUid, r.emoji, r.at.toISOString()),
    type: EVENTS.reaction,
    orgId,
    traceparent: r.traceparent,
    data: {
      accountId,
      threadId: r.threadId,
      threadType: r.threadType,
      chatnetMessageId: r.chatnetMessageId,
      fromUid: r.fromUid,
      emoji: r.emoji,
      at: r.at.toISOString(),
    },
  };
}

/** A QR code of a login, in the trace of the Login call that started it (or showed the current code again). */
export function qrEvent(db: Queryable, orgId: string, accountId: string, qr: string, expiresAt: Date, traceparent: string | undefined) {
  return enqueueEvent(db, { type: EVENTS.qr, orgId, data: { accountId, qr, expiresAt: expiresAt.toISOString() }, traceparent });
}

/** A session came up: in the trace of the Login or Reconnect call that brought it up, none for a scan's takeover. */
export function connectedEvent(
  db: Queryable,
  orgId: string,
  accountId: string,
  chatnetUid: string,
  displayName: string,
  traceparent: string | undefined,
) {
  return enqueueEvent(db, { type: EVENTS.connected, orgId, data: { accountId, chatnetUid, displayName }, traceparent });
}

export function disconnectedEvent(db: Queryable, orgId: string, accountId: string, reason: string, traceparent: string | undefined) {
  return enqueueEvent(db, { type: EVENTS.disconnected, orgId, data: { accountId, reason }, traceparent });
}

export function friendsEvent(db: Queryable, orgId: string, accountId: string, friends: Friend[], traceparent: string | undefined) {
  return enqueueEvent(db, {
    type: EVENTS.friends,
    orgId,
    data: { accountId, friends: friends.map((f) => ({ chatnetUid: f.chatnetUid, displayName: f.displayName })) },
    traceparent,
  });
}
