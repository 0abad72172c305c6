import { createHash } from 'node:crypto';
import type { Queryable } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Friend, InboundMessage } from '../drivers/driver';

/** The events this service produces, always through the outbox (same transaction as the change). */
export const EVENTS = {
  inbound: 'chatnet.inbound',
  qr: 'chatnet_account.qr',
  connected: 'chatnet_account.connected',
  disconnected: 'chatnet_account.disconnected',
  friends: 'chatnet_account.friends',
} as const;

/**
 * A UUID derived from the account and the network's message id: the network may hand the same message
 * over twice (reconnects, takeovers), and the outbox ignores an id it already holds.
 */
export function inboundEventId(accountId: string, chatnetMessageId: string): string {
  const h = createHash('sha256').update(`chatnet.inbound\0${accountId}\0${chatnetMessageId}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export function inboundEvent(db: Queryable, orgId: string, accountId: string, m: InboundMessage) {
  return enqueueEvent(db, {
    id: inboundEventId(accountId, m.chatnetMessageId),
    type: EVENTS.inbound,
    orgId,
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
    },
  });
}

export function qrEvent(db: Queryable, orgId: string, accountId: string, qr: string, expiresAt: Date) {
  return enqueueEvent(db, { type: EVENTS.qr, orgId, data: { accountId, qr, expiresAt: expiresAt.toISOString() } });
}

export function connectedEvent(db: Queryable, orgId: string, accountId: string, chatnetUid: string, displayName: string) {
  return enqueueEvent(db, { type: EVENTS.connected, orgId, data: { accountId, chatnetUid, displayName } });
}

export function disconnectedEvent(db: Queryable, orgId: string, accountId: string, reason: string) {
  return enqueueEvent(db, { type: EVENTS.disconnected, orgId, data: { accountId, reason } });
}

export function friendsEvent(db: Queryable, orgId: string, accountId: string, friends: Friend[]) {
  return enqueueEvent(db, {
    type: EVENTS.friends,
    orgId,
    data: { accountId, friends: friends.map((f) => ({ chatnetUid: f.chatnetUid, displayName: f.displayName })) },
  });
}
