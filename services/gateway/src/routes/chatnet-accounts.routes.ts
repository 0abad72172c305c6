import express, { Router } from 'express';
import { z } from 'zod';
import { connectorRules as rules, messagingRules } from '@crm/validation';
import { chatnetSandboxEnabled } from '../config';
import { accountOut, accountStatusOut, assignmentOut, foundUserOut, friendRequestOut, seenByAgentOut, sentOut } from './chatnet-accounts.out';
import type { RouteDeps, ServiceRoutes } from './deps';
import { byRule } from '../http/by-rule';
import { badRequest } from '../http/errors';
import { ctxOf } from '../http/principal';
import { rejectUnsafeText } from '../http/text-guard';
import { body, pageParams, pathParam, query, s } from '../http/validate';

/** The sandbox push that parses its own (larger) body. */
const SANDBOX_INBOUND = /^\/sandbox\/accounts\/[^/]+\/inbound\/?$/;

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

/**
 * Chat-network accounts (internal API) and the sandbox network's control routes. The sandbox routes need
 * an owner's or admin's bearer token, and exist only with CHATNET_DRIVER=sandbox outside production (else
 * they are not mounted: 404; the connector refuses the calls too).
 */
export function chatnetAccountRoutes({ clients, auth, config }: RouteDeps): ServiceRoutes {
  const connector = () => clients['chatnet-connector'];
  const messaging = () => clients.messaging;

  const internal = Router();
  internal.get('/chatnet-accounts', async (req, res) => {
    const q = query(req, ListQuery);
    const out = await connector().ListAccounts(q, ctxOf(req, res));
    res.json(out.data.map(accountOut));
  });
  internal.post('/chatnet-accounts', async (req, res) => {
    const b = body(req, NewAccount);
    const out = await connector().CreateAccount(
      { displayName: b.displayName, proxyUrl: b.proxyUrl || undefined, ownerUserId: b.ownerUserId },
      ctxOf(req, res),
    );
    res.status(201).json(out);
  });
  internal.get('/chatnet-accounts/:id', async (req, res) => {
    res.json(accountOut(await connector().GetAccount({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.post('/chatnet-accounts/:id/login', async (req, res) => {
    const out = await connector().Login({ id: req.params.id }, ctxOf(req, res));
    res.json({ message: out.message });
  });
  internal.post('/chatnet-accounts/:id/reconnect', async (req, res) => {
    const out = await connector().Reconnect({ id: req.params.id }, ctxOf(req, res));
    res.json({ message: out.message });
  });
  internal.get('/chatnet-accounts/:id/status', async (req, res) => {
    res.json(accountStatusOut(await connector().GetStatus({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/chatnet-accounts/:id/proxy', async (req, res) => {
    if (req.body === undefined || typeof req.body !== 'object' || !('proxyUrl' in req.body)) {
      throw badRequest([{ field: 'proxyUrl', message: 'is required (null or "" clears the proxy)' }]);
    }
    const b = body(req, ProxyBody);
    res.json(await connector().SetProxy({ id: req.params.id, proxyUrl: b.proxyUrl ?? '' }, ctxOf(req, res)));
  });
  // Who gets the account's new conversations: stored by messaging, which asks the connector whether the account is the org's.
  internal.get('/chatnet-accounts/:id/assignment', async (req, res) => {
    res.json(assignmentOut(await messaging().GetAccountAssignment({ chatnetAccountId: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/chatnet-accounts/:id/assignment', async (req, res) => {
    const b = body(req, Assignment);
    const out = await messaging().SetAccountAssignment(
      {
        chatnetAccountId: req.params.id,
        mode: b.mode,
        userIds: b.userIds,
        maxOpenPerUser: b.maxOpenPerUser ?? undefined,
        onlyOnline: b.onlyOnline === true,
        replyTimeoutMinutes: b.replyTimeoutMinutes ?? undefined,
        onTimeout: b.onTimeout ?? undefined,
        drainBacklog: b.drainBacklog === true,
      },
      ctxOf(req, res),
    );
    res.json(assignmentOut(out));
  });
  // Outreach (issue #26): who a number is on the network, and friend requests to people who take messages only from friends.
  internal.post('/chatnet-accounts/:id/lookup', async (req, res) => {
    const b = body(req, Lookup);
    res.json(foundUserOut(await connector().FindUser({ accountId: req.params.id, phone: b.phone }, ctxOf(req, res))));
  });
  internal.post('/chatnet-accounts/:id/friend-requests', async (req, res) => {
    const b = body(req, NewFriendRequest);
    const out = await connector().SendFriendRequest(
      { accountId: req.params.id, phone: b.phone, chatnetUid: b.chatnetUid, message: b.message },
      ctxOf(req, res),
    );
    res.status(202).json(friendRequestOut(out));
  });
  internal.get('/chatnet-accounts/:id/friend-requests', async (req, res) => {
    const q = query(req, FriendRequestQuery);
    const out = await connector().ListFriendRequests({ accountId: req.params.id, status: q.status, ...pageParams(req, 20, 100) }, ctxOf(req, res));
    res.json({ data: out.data.map(friendRequestOut), pagination: out.pagination });
  });
  internal.delete('/chatnet-accounts/:id', async (req, res) => {
    const q = query(req, DeleteQuery);
    await connector().DeleteAccount({ id: req.params.id, purge: q.purge === 'true' || q.purge === '1' }, ctxOf(req, res));
    res.status(204).end();
  });

  const root = Router();
  root.use('/sandbox', auth.bearer);
  root.post('/sandbox/accounts/:id/scan', async (req, res) => {
    res.json(accountOut(await connector().SandboxScan({ id: req.params.id, ...body(req, Scan) }, ctxOf(req, res))));
  });
  // Its own parser, after the bearer check above: files make these bodies larger than any other JSON body.
  root.post('/sandbox/accounts/:id/inbound', express.json({ limit: config.SANDBOX_BODY_LIMIT }), rejectUnsafeText, async (req, res) => {
    res.json(await connector().SandboxInbound({ id: pathParam(req, 'id'), ...body(req, Inbound) }, ctxOf(req, res)));
  });
  root.post('/sandbox/accounts/:id/self', async (req, res) => {
    res.json(await connector().SandboxSelf({ id: req.params.id, ...body(req, Self) }, ctxOf(req, res)));
  });
  root.post('/sandbox/accounts/:id/seen', async (req, res) => {
    res.json(await connector().SandboxSeen({ id: req.params.id, ...body(req, Seen) }, ctxOf(req, res)));
  });
  root.post('/sandbox/accounts/:id/recall', async (req, res) => {
    res.json(await connector().SandboxRecall({ id: req.params.id, ...body(req, Recall) }, ctxOf(req, res)));
  });
  root.post('/sandbox/accounts/:id/react', async (req, res) => {
    res.json(await connector().SandboxReact({ id: req.params.id, ...body(req, React) }, ctxOf(req, res)));
  });
  root.post('/sandbox/accounts/:id/drop', async (req, res) => {
    const out = await connector().SandboxDrop({ id: req.params.id, ...body(req, Drop) }, ctxOf(req, res));
    res.json({ message: out.message });
  });
  root.post('/sandbox/accounts/:id/friends', async (req, res) => {
    res.json(await connector().SandboxSetFriends({ id: req.params.id, ...body(req, Friends) }, ctxOf(req, res)));
  });
  // The network's user directory: which numbers a phone lookup (crm's hasChatnet check) finds.
  root.post('/sandbox/network/phones', async (req, res) => {
    res.json(await connector().SandboxSetPhones(body(req, Phones), ctxOf(req, res)));
  });
  // The user accepts the account's friend request.
  root.post('/sandbox/accounts/:id/friend-requests/:chatnetUid/accept', async (req, res) => {
    res.json(
      friendRequestOut(await connector().SandboxAcceptFriendRequest({ id: req.params.id, chatnetUid: req.params.chatnetUid }, ctxOf(req, res))),
    );
  });
  root.get('/sandbox/accounts/:id/sent', async (req, res) => {
    const out = await connector().SandboxSentMessages({ id: req.params.id }, ctxOf(req, res));
    res.json({ data: out.data.map(sentOut) });
  });
  root.get('/sandbox/accounts/:id/seen-by-agent', async (req, res) => {
    const out = await connector().SandboxSeenByAgent({ id: req.params.id }, ctxOf(req, res));
    res.json({ data: out.data.map(seenByAgentOut) });
  });

  const enabled = chatnetSandboxEnabled(config);
  return {
    internal,
    root: enabled ? root : undefined,
    parsesOwnBody: enabled ? (req) => req.method === 'POST' && SANDBOX_INBOUND.test(req.path) : undefined,
  };
}
