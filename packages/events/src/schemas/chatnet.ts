import { z } from 'zod';
import { Id, Instant, ThreadType } from './common';
import { defineEvent } from './define';

/** The chat-network connector's events: raw network traffic (internal) and the accounts' connection state. */

export const chatnetInbound = defineEvent({
  type: 'chatnet.inbound',
  version: 1,
  producers: ['chatnet-connector'],
  description: 'Internal: a raw message from the network (messaging stores it and publishes message.received or message.sent).',
  data: z.object({
    accountId: Id,
    chatnetMessageId: z.string(),
    threadId: z.string(),
    threadType: ThreadType,
    fromUid: z.string(),
    fromName: z.string(),
    fromAvatar: z.string(),
    content: z.string(),
    contentType: z.string(),
    sentAt: Instant,
    groupName: z.string().optional(),
    cliMsgId: z.string().optional(),
    /** Typed by the account itself on another device. */
    fromSelf: z.literal(true).optional(),
    /** The network id of the message of the same thread this one quotes (replies to). */
    quoteChatnetMessageId: z.string().optional(),
    /** Stored in messaging already: the event names the files, never their bytes. */
    attachments: z.array(z.object({ id: Id, fileName: z.string(), mimeType: z.string(), size: z.number() })).optional(),
  }),
});

export const chatnetSeen = defineEvent({
  type: 'chatnet.seen',
  version: 1,
  producers: ['chatnet-connector'],
  description: 'Internal: a read receipt from the network.',
  data: z.object({
    accountId: Id,
    threadId: z.string(),
    threadType: ThreadType,
    chatnetMessageIds: z.array(z.string()),
    seenByUid: z.string().nullable(),
    seenAt: Instant,
  }),
});

export const chatnetRecalled = defineEvent({
  type: 'chatnet.recalled',
  version: 1,
  producers: ['chatnet-connector'],
  description: 'Internal: the network says a message was recalled by its sender (messaging marks it recalled and publishes message.recalled).',
  data: z.object({
    accountId: Id,
    threadId: z.string(),
    threadType: ThreadType,
    chatnetMessageId: z.string(),
    fromUid: z.string(),
    recalledAt: Instant,
  }),
});

export const chatnetReaction = defineEvent({
  type: 'chatnet.reaction',
  version: 1,
  producers: ['chatnet-connector'],
  description: 'Internal: a member of a thread reacted to a message, or took the reaction back (emoji empty); messaging publishes message.reaction.',
  data: z.object({
    accountId: Id,
    threadId: z.string(),
    threadType: ThreadType,
    chatnetMessageId: z.string(),
    fromUid: z.string(),
    emoji: z.string(),
    at: Instant,
  }),
});

export const accountQr = defineEvent({
  type: 'chatnet_account.qr',
  version: 1,
  producers: ['chatnet-connector'],
  description: 'Internal (a login credential, never sent to a webhook): the QR code to scan to log an account in.',
  data: z.object({ accountId: Id, qr: z.string(), expiresAt: Instant }),
});

export const accountConnected = defineEvent({
  type: 'chatnet_account.connected',
  version: 1,
  producers: ['chatnet-connector'],
  description: 'A chat-network account is connected and live; data: accountId, chatnetUid, displayName.',
  data: z.object({ accountId: Id, chatnetUid: z.string(), displayName: z.string() }),
  webhook: 'same',
});

export const accountDisconnected = defineEvent({
  type: 'chatnet_account.disconnected',
  version: 1,
  producers: ['chatnet-connector'],
  description: 'A chat-network account lost its connection; data: accountId, reason.',
  data: z.object({ accountId: Id, reason: z.string() }),
  webhook: 'same',
});

export const accountFriends = defineEvent({
  type: 'chatnet_account.friends',
  version: 1,
  producers: ['chatnet-connector'],
  description: 'Internal: an account’s friend list as the network gave it (crm keeps it on the contacts).',
  data: z.object({ accountId: Id, friends: z.array(z.object({ chatnetUid: z.string(), displayName: z.string() })) }),
});

export const friendRequestAccepted = defineEvent({
  type: 'friend_request.accepted',
  version: 1,
  producers: ['chatnet-connector'],
  description:
    'A network user accepted a friend request a chat-network account sent (issue #26): messages to them no longer need friendship; data: id (the request), chatnetAccountId, chatnetUid, acceptedAt.',
  data: z.object({ id: Id, chatnetAccountId: Id, chatnetUid: z.string(), acceptedAt: Instant }),
  webhook: 'same',
});

export const chatnetEvents = [
  chatnetInbound,
  chatnetSeen,
  chatnetRecalled,
  chatnetReaction,
  accountQr,
  accountConnected,
  accountDisconnected,
  accountFriends,
  friendRequestAccepted,
];
