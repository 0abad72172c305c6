import { z } from 'zod';
import type { connector } from '@crm/proto-types';
import { connectorRules as rules, messagingRules } from '@crm/validation';
import { nulls, proto, reply } from '../docs/proto-schema';
import { byRule } from '../http/by-rule';
import { s } from '../http/validate';

// The display name, the proxy URL's form and the status filter follow @crm/validation connectorRules, which the
// connector applies too; where the proxy's host may be is the connector's to answer.
const proxyUrl = byRule(z.string({ error: 'must be a string or null' }), rules.proxyUrl);

export const NewAccount = z.object({
  displayName: s.requiredText(rules.DISPLAY_NAME_MAX),
  proxyUrl: proxyUrl.nullable().optional(),
  ownerUserId: z.string().uuid('must be a user id').optional(),
});

export const ProxyBody = z.object({
  // null or "" clears the proxy; the key itself is required so a typo never clears it by accident.
  proxyUrl: proxyUrl.nullable(),
});

export const ListQuery = z.object({
  status: s.optionalQueryEnum(rules.ACCOUNT_STATUSES),
  assignedTo: z.string().uuid('must be a user id').optional(),
  search: z.string().max(rules.ACCOUNT_SEARCH_MAX, `must be at most ${rules.ACCOUNT_SEARCH_MAX} characters`).optional(),
});

// Auto-assignment (messaging owns it): duplicates and whether each id is an active user of the org are messaging's call.
export const Assignment = z.object({
  mode: s.enumOf(['manual', 'round_robin'] as const),
  userIds: z
    .array(z.string({ error: 'must be a user id' }).trim().uuid('must be a user id'), {
      error: (issue) => (issue.input === undefined ? 'is required (an array of user ids, may be empty)' : 'must be an array of user ids'),
    })
    .max(100, 'must list at most 100 users'),
  maxOpenPerUser: z
    .number({ error: 'must be a whole number from 1 to 10000, or null' })
    .int('must be a whole number from 1 to 10000, or null')
    .min(1, 'must be a whole number from 1 to 10000, or null')
    .max(10_000, 'must be a whole number from 1 to 10000, or null')
    .nullable()
    .optional(),
  // Assignment that repairs itself (issue #29 item 5); messaging checks that the timeout and its action come together.
  onlyOnline: z.boolean({ error: 'must be true or false' }).optional(),
  replyTimeoutMinutes: z
    .number({ error: 'must be a whole number from 1 to 10080, or null' })
    .int('must be a whole number from 1 to 10080, or null')
    .min(1, 'must be a whole number from 1 to 10080, or null')
    .max(10_080, 'must be a whole number from 1 to 10080, or null')
    .nullable()
    .optional(),
  onTimeout: s
    .enumOf(['reassign', 'unassign', 'notify_leads'] as const)
    .nullable()
    .optional(),
  drainBacklog: z.boolean({ error: 'must be true or false' }).optional(),
});

export const DeleteQuery = z.object({
  purge: z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).optional(),
});

export const Scan = z.object({
  chatnetUid: s.text(64).optional(),
  displayName: s.text(rules.DISPLAY_NAME_MAX).optional(),
  phone: s.text(40).optional(),
  avatarUrl: s.httpUrl({ allowEmpty: true }).optional(),
});

/** Standard base64 with its padding (what the connector decodes; anything else is refused here first). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const InboundFile = z.object({
  fileName: s.requiredText(255),
  mimeType: s.requiredText(255),
  contentBase64: z
    .string({ error: 'is required (the file’s bytes, base64)' })
    .min(1, 'is required (the file’s bytes, base64)')
    .regex(BASE64, 'must be standard base64')
    .describe('the file’s bytes, standard base64; decoded at most the attachment size limit (25 MB by default)'),
});

export const Inbound = z
  .object({
    fromUid: s.requiredText(64),
    fromName: s.text(200).default(''),
    fromAvatar: s.httpUrl({ allowEmpty: true }).default(''),
    // May be empty when the message carries files.
    content: z.string({ error: 'must be a string' }).max(20_000, 'must be at most 20000 characters').default(''),
    contentType: s.text(50).default(''),
    threadType: s.enumOf(['user', 'group'] as const).default('user'),
    threadId: s.text(64).default(''),
    chatnetMessageId: s.text(64).default(''),
    // Messaging names the group's conversation after it (and renames it when it changes).
    groupName: s.text(200).optional().describe('the group’s name as the network shows it; only with threadType group'),
    quoteChatnetMessageId: s.text(64).default('').describe('a reply: the network id of the message of the same thread it quotes'),
    attachments: z
      .array(InboundFile, { error: 'must be an array of {fileName, mimeType, contentBase64}' })
      .max(10, 'must have at most 10 files')
      .default([])
      .describe('files the contact sends, stored like uploads (the content must match mimeType)'),
  })
  .refine((b) => !b.groupName || b.threadType === 'group', { path: ['groupName'], message: 'is only allowed with threadType group' })
  .refine((b) => b.content.trim() !== '' || b.attachments.length > 0, {
    path: ['content'],
    message: 'is required (unless the message carries attachments)',
  });

/** A message the agent types on the phone: the account's own, in a thread (sandbox). */
export const Self = z.object({
  threadId: s.requiredText(64),
  threadType: s.enumOf(['user', 'group'] as const).default('user'),
  // Kept as typed (not trimmed), as a contact's message.
  content: z
    .string({ error: 'is required' })
    .max(20_000, 'must be at most 20000 characters')
    .refine((v) => v.trim() !== '', 'is required'),
  contentType: s.text(50).default(''),
  chatnetMessageId: s.text(64).default('').describe('the network’s id; a message the CRM sent, to echo it back'),
});

export const Seen = z.object({
  threadId: s.requiredText(64),
  threadType: s.enumOf(['user', 'group'] as const).default('user'),
  // Absent or empty: everything the account sent to the thread so far, as when the recipient opens the chat.
  chatnetMessageIds: z
    .array(s.requiredText(64), { error: 'must be an array of chat-network message ids' })
    .max(200, 'must have at most 200 entries')
    .default([]),
  seenByUid: s.text(64).optional(),
});

/** The contact recalls a message they sent to the account (sandbox). */
export const Recall = z.object({ chatnetMessageId: s.requiredText(64) });

/** A member of the thread reacts to a message (sandbox); an empty emoji takes their reaction back. */
export const React = z.object({
  chatnetMessageId: s.requiredText(64),
  fromUid: s.requiredText(64),
  emoji: z
    .string({ error: 'is required ("" takes the reaction back)' })
    .trim()
    .max(messagingRules.REACTION_EMOJI_MAX, messagingRules.REACTION_EMOJI_TOO_LONG)
    .refine((v) => !/\s/.test(v), messagingRules.REACTION_EMOJI_MESSAGE),
});

export const Drop = z.object({
  reason: s.text(200).default(''),
  expireSession: z.boolean({ error: 'must be a boolean' }).default(false),
});

export const Friends = z.object({
  friends: z
    .array(z.object({ chatnetUid: s.requiredText(64), displayName: s.text(200).default('') }), {
      error: 'must be an array of {chatnetUid, displayName}',
    })
    .max(5000, 'must have at most 5000 entries'),
});

export const Phones = z.object({
  phones: z
    .array(
      z.object({
        phone: s.requiredText(40).describe('the number as crm stores it (E.164, e.g. +84901234567); matched on its digits'),
        chatnetUid: s.text(64).optional().describe('the network user under this number; generated when absent'),
        displayName: s.text(200).optional(),
        acceptsStrangers: z
          .boolean({ error: 'must be true or false' })
          .default(true)
          .describe('false: the user takes messages only from friends (a message from another account fails as friend_required)'),
      }),
      { error: 'must be an array of {phone, chatnetUid?, displayName?, acceptsStrangers?}' },
    )
    .min(1, 'is required (at least one number)')
    .max(500, 'must have at most 500 entries'),
});

/** A phone number in any spelling the network reads (Vietnamese: 0912…, +84912…, 84 912 …). */
const phone = z
  .string({ error: 'must be a phone number' })
  .trim()
  .min(1, 'is required')
  .max(40, 'must be at most 40 characters')
  .regex(/^\+?[0-9 ().-]+$/, 'must be a phone number (digits, spaces, + - . ( ) only)');

export const Lookup = z.object({ phone });

export const NewFriendRequest = z
  .object({
    phone: phone.optional(),
    chatnetUid: s.requiredText(64).optional(),
    message: s.requiredText(150).describe('what the user reads with the request'),
  })
  .refine((b) => (b.phone === undefined) !== (b.chatnetUid === undefined), { path: ['phone'], message: 'give exactly one of phone and chatnetUid' });

export const FriendRequestQuery = z.object({ status: s.optionalQueryEnum(['sent', 'accepted'] as const) });

// ------------------------------------------------------------------------------------------- responses

/** A service's answer forwarded untouched: documented from its proto, typed as the generated client gives it. */
const forwarded = <T>(schema: z.ZodType) => schema as unknown as z.ZodType<T>;

const CONNECTOR = 'connector/v1/connector.proto';
/** Live state from the session pool (liveStatusOut); unset times as null. */
export const LiveStatus = nulls(proto(CONNECTOR, 'connector.v1.LiveStatus'), ['connectedAt', 'lastHeartbeat']);
/** accountOut: optional values as null (checked live by tests/gateway/openapi-contract.test.ts). */
export const Account = nulls(proto(CONNECTOR, 'connector.v1.Account'), ['chatnetUid', 'avatarUrl', 'phone', 'ownerUserId', 'lastConnectedAt']).extend(
  {
    liveStatus: LiveStatus,
  },
);
/** accountStatusOut. */
export const AccountStatus = z.object({ accountId: z.string(), liveStatus: LiveStatus });
/** assignmentOut: the optional cap and reply timeout null when none. */
export const AccountAssignment = nulls(reply('messaging', 'GetAccountAssignment'), ['maxOpenPerUser', 'replyTimeoutMinutes', 'onTimeout']);
export const CreatedAccount = forwarded<connector.CreatedAccount__Output>(reply('chatnet-connector', 'CreateAccount'));
export const ProxyResult = forwarded<connector.ProxyResult__Output>(reply('chatnet-connector', 'SetProxy'));
/** foundUserOut: all null when nobody uses the number. */
export const FoundUser = z.object({
  found: z.boolean(),
  chatnetUid: z.string().nullable(),
  displayName: z.string().nullable(),
  avatarUrl: z.string().nullable(),
});
/** friendRequestOut: acceptedAt null while it is only sent. */
export const FriendRequest = z.object({
  id: z.string(),
  chatnetAccountId: z.string(),
  chatnetUid: z.string(),
  status: z.enum(['sent', 'accepted']),
  message: z.string(),
  createdAt: z.string(),
  acceptedAt: z.string().nullable(),
});

export const SandboxInboundResult = forwarded<connector.SandboxInboundResult__Output>(reply('chatnet-connector', 'SandboxInbound'));
export const SandboxSelfResult = forwarded<connector.SandboxInboundResult__Output>(reply('chatnet-connector', 'SandboxSelf'));
export const SandboxSeenResult = forwarded<connector.SandboxSeenResult__Output>(reply('chatnet-connector', 'SandboxSeen'));
export const SandboxFriendsResult = forwarded<connector.SandboxFriendsResult__Output>(reply('chatnet-connector', 'SandboxSetFriends'));
export const SandboxPhonesResult = forwarded<connector.SandboxPhonesResult__Output>(reply('chatnet-connector', 'SandboxSetPhones'));
export const SandboxRecallResult = forwarded<connector.SandboxRecallResult__Output>(reply('chatnet-connector', 'SandboxRecall'));
export const SandboxReactResult = forwarded<connector.SandboxReactResult__Output>(reply('chatnet-connector', 'SandboxReact'));
/** seenByAgentOut items, in `{data}`. */
export const SeenByAgentList = z.object({ data: reply('chatnet-connector', 'SandboxSeenByAgent').shape.data });
/** sentOut: the quoted message null for none, recalledAt null until the account recalled it. */
export const SentMessage = nulls(proto(CONNECTOR, 'connector.v1.SentMessage'), ['recalledAt']);
