import express, { type RequestHandler, Router } from 'express';
import { z } from 'zod';
import { chatnetSandboxEnabled } from '../config';
import { MessageBody, page } from './common.schemas';
import { badRequest } from '../http/errors';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { rejectUnsafeText } from '../http/text-guard';
import { accountOut, accountStatusOut, assignmentOut, foundUserOut, friendRequestOut, seenByAgentOut, sentOut } from './chatnet-accounts.out';
import {
  Account,
  AccountAssignment,
  AccountStatus,
  Assignment,
  CreatedAccount,
  DeleteQuery,
  Drop,
  FoundUser,
  FriendRequest,
  FriendRequestQuery,
  Friends,
  Inbound,
  ListQuery,
  Lookup,
  NewAccount,
  NewFriendRequest,
  Phones,
  ProxyBody,
  ProxyResult,
  React,
  Recall,
  SandboxFriendsResult,
  SandboxInboundResult,
  SandboxPhonesResult,
  SandboxReactResult,
  SandboxRecallResult,
  SandboxSeenResult,
  SandboxSelfResult,
  Scan,
  SeenByAgentList,
  Seen,
  Self,
  SentMessage,
} from './chatnet-accounts.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';

/** The sandbox push that parses its own (larger) body. */
const SANDBOX_INBOUND = /^\/sandbox\/accounts\/[^/]+\/inbound\/?$/;

const connector = (deps: RouteDeps) => deps.clients['chatnet-connector'];
const messaging = (deps: RouteDeps) => deps.clients.messaging;

/** The proxy's key is required, so a typo never clears it by accident: checked before the body's own rules. */
const proxyKeyRequired: RequestHandler = (req, _res, next) => {
  if (req.body === undefined || typeof req.body !== 'object' || !('proxyUrl' in req.body)) {
    throw badRequest([{ field: 'proxyUrl', message: 'is required (null or "" clears the proxy)' }]);
  }
  next();
};

/**
 * Chat-network accounts (connector; auto-assignment stored by messaging), internal API. Served and documented from
 * these declarations.
 */
export const chatnetAccountArea = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Chat-network accounts' });

chatnetAccountArea.route('GET /chatnet-accounts', {
  summary: 'The organization’s chat-network accounts with their live state',
  query: ListQuery,
  response: z.array(Account),
  handler: async ({ query, ctx, deps }) => (await connector(deps).ListAccounts(query, ctx)).data.map(accountOut),
});
chatnetAccountArea.route('POST /chatnet-accounts', {
  summary: 'Add an account (then POST …/login for its QR code)',
  body: NewAccount,
  status: 201,
  response: CreatedAccount,
  handler: async ({ body: b, ctx, deps }) =>
    connector(deps).CreateAccount({ displayName: b.displayName, proxyUrl: b.proxyUrl || undefined, ownerUserId: b.ownerUserId }, ctx),
});
chatnetAccountArea.route('GET /chatnet-accounts/:id', {
  summary: 'One account with its live state',
  response: Account,
  handler: async ({ param, ctx, deps }) => accountOut(await connector(deps).GetAccount({ id: param('id') }, ctx)),
});
chatnetAccountArea.route('POST /chatnet-accounts/:id/login', {
  summary: 'Start a QR login; the QR code arrives over socket.io (`qr`)',
  description: 'The code goes to room `account:<id>`; a socket that joins the room after this call gets the code being shown at once.',
  response: MessageBody,
  errors: [422],
  handler: async ({ param, ctx, deps }) => ({ message: (await connector(deps).Login({ id: param('id') }, ctx)).message }),
});
chatnetAccountArea.route('POST /chatnet-accounts/:id/reconnect', {
  summary: 'Reconnect with the stored session',
  response: MessageBody,
  errors: [422],
  handler: async ({ param, ctx, deps }) => ({ message: (await connector(deps).Reconnect({ id: param('id') }, ctx)).message }),
});
chatnetAccountArea.route('GET /chatnet-accounts/:id/status', {
  summary: 'The account’s live state',
  response: AccountStatus,
  handler: async ({ param, ctx, deps }) => accountStatusOut(await connector(deps).GetStatus({ id: param('id') }, ctx)),
});
chatnetAccountArea.route('PUT /chatnet-accounts/:id/proxy', {
  summary: 'Set or clear (null or "") the account’s proxy',
  middleware: () => [proxyKeyRequired],
  body: ProxyBody,
  response: ProxyResult,
  handler: async ({ param, body: b, ctx, deps }) => connector(deps).SetProxy({ id: param('id'), proxyUrl: b.proxyUrl ?? '' }, ctx),
});
// Who gets the account's new conversations: stored by messaging, which asks the connector whether the account is the org's.
chatnetAccountArea.route('GET /chatnet-accounts/:id/assignment', {
  summary: 'Who gets the account’s new conversations',
  response: AccountAssignment,
  handler: async ({ param, ctx, deps }) => assignmentOut(await messaging(deps).GetAccountAssignment({ chatnetAccountId: param('id') }, ctx)),
});
chatnetAccountArea.route('PUT /chatnet-accounts/:id/assignment', {
  summary: 'Set auto-assignment: manual or round robin over the listed users (team leads and up)',
  description:
    'Assignment that repairs itself: `onlyOnline` (round robin skips users not online; a user going offline releases their open conversations of the account), `replyTimeoutMinutes` with `onTimeout` (`reassign` to the next eligible user, `unassign`, or `notify_leads`) when the assignee leaves an inbound message unanswered that long (both or neither: 400 naming the missing one), `drainBacklog` (a user who gets capacity back takes the oldest unassigned conversation). Every automatic move publishes `conversation.assigned` with `assignedBy: null` and its `reason`.',
  body: Assignment,
  response: AccountAssignment,
  handler: async ({ param, body: b, ctx, deps }) => {
    const out = await messaging(deps).SetAccountAssignment(
      {
        chatnetAccountId: param('id'),
        mode: b.mode,
        userIds: b.userIds,
        maxOpenPerUser: b.maxOpenPerUser ?? undefined,
        onlyOnline: b.onlyOnline === true,
        replyTimeoutMinutes: b.replyTimeoutMinutes ?? undefined,
        onTimeout: b.onTimeout ?? undefined,
        drainBacklog: b.drainBacklog === true,
      },
      ctx,
    );
    return assignmentOut(out);
  },
});
// Outreach (issue #26): who a number is on the network, and friend requests to people who take messages only from friends.
chatnetAccountArea.route('POST /chatnet-accounts/:id/lookup', {
  summary: 'Who a phone number is on the chat network, asked through this account',
  description:
    'Vietnamese spellings are one number (`0912345678`, `+84912345678`, `84 912 345 678`). The account must be connected (409 `account_not_connected`). ' +
    'Lookups are paced per account as the network paces them: at most `LOOKUP_PER_ACCOUNT_PER_MINUTE` (default 30) a minute reach the network, above it 429 with Retry-After; ' +
    'answers (found or not) are cached for a day and a cached answer costs nothing.',
  body: Lookup,
  response: FoundUser,
  errors: [409, 503],
  handler: async ({ param, body: b, ctx, deps }) => foundUserOut(await connector(deps).FindUser({ accountId: param('id'), phone: b.phone }, ctx)),
});
chatnetAccountArea.route('POST /chatnet-accounts/:id/friend-requests', {
  summary: 'Ask a network user (by phone or uid) to become the account’s friend',
  description:
    'For users who take messages only from friends (`friend_required`). 202 once the network took it (status `sent`); it turns `accepted` when the user accepts ' +
    '(event `friend_request.accepted`). 422 `not_on_network` when nobody uses the number; lookups are paced as for …/lookup.',
  body: NewFriendRequest,
  status: 202,
  response: FriendRequest,
  errors: [409, 422, 503],
  handler: async ({ param, body: b, ctx, deps }) =>
    friendRequestOut(
      await connector(deps).SendFriendRequest({ accountId: param('id'), phone: b.phone, chatnetUid: b.chatnetUid, message: b.message }, ctx),
    ),
});
chatnetAccountArea.route('GET /chatnet-accounts/:id/friend-requests', {
  summary: 'The account’s friend requests, newest first (`status=sent|accepted`)',
  query: FriendRequestQuery,
  paging: { limit: 20, max: 100 },
  response: page(FriendRequest),
  handler: async ({ param, query, page, ctx, deps }) => {
    const out = await connector(deps).ListFriendRequests({ accountId: param('id'), status: query.status, ...page }, ctx);
    return { data: out.data.map(friendRequestOut), pagination: out.pagination! };
  },
});
chatnetAccountArea.route('DELETE /chatnet-accounts/:id', {
  summary: 'Delete an account (`purge=true` also deletes its conversations)',
  query: DeleteQuery,
  status: 204,
  response: null,
  handler: async ({ param, query: q, ctx, deps }) => {
    await connector(deps).DeleteAccount({ id: param('id'), purge: q.purge === 'true' || q.purge === '1' }, ctx);
  },
});

/**
 * The sandbox chat network's control routes: only with CHATNET_DRIVER=sandbox outside production (else they are not
 * mounted: 404; the connector refuses the calls too); an owner's or admin's bearer token.
 */
export const chatnetSandboxArea = routeArea({ prefix: '/sandbox', auth: 'bearer', tag: 'Sandbox chat network', sandbox: 'chatnet' });

chatnetSandboxArea.route('POST /accounts/:id/scan', {
  summary: 'Scan the pending QR code: the account connects as the given identity',
  body: Scan,
  response: Account,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) => accountOut(await connector(deps).SandboxScan({ id: param('id'), ...body }, ctx)),
});
chatnetSandboxArea.route('POST /accounts/:id/inbound', {
  summary: 'A customer’s message arrives on the account',
  // Its own parser, after the bearer check: files make these bodies larger than any other JSON body.
  middleware: (deps) => [express.json({ limit: deps.config.SANDBOX_BODY_LIMIT }), rejectUnsafeText],
  body: Inbound,
  response: SandboxInboundResult,
  errors: [413, 422],
  handler: async ({ param, body, ctx, deps }) => connector(deps).SandboxInbound({ id: param('id'), ...body }, ctx),
});
chatnetSandboxArea.route('POST /accounts/:id/self', {
  summary: 'The agent types a message on the phone: it shows in the conversation as outbound (an echo of a CRM send is stored once)',
  body: Self,
  response: SandboxSelfResult,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) => connector(deps).SandboxSelf({ id: param('id'), ...body }, ctx),
});
chatnetSandboxArea.route('POST /accounts/:id/seen', {
  summary: 'The customer reads messages the account sent',
  body: Seen,
  response: SandboxSeenResult,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) => connector(deps).SandboxSeen({ id: param('id'), ...body }, ctx),
});
chatnetSandboxArea.route('POST /accounts/:id/drop', {
  summary: 'The network drops the connection (optionally expiring the session)',
  body: Drop,
  response: MessageBody,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) => ({ message: (await connector(deps).SandboxDrop({ id: param('id'), ...body }, ctx)).message }),
});
chatnetSandboxArea.route('POST /accounts/:id/friends', {
  summary: 'Replace the account’s friend list',
  body: Friends,
  response: SandboxFriendsResult,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) => connector(deps).SandboxSetFriends({ id: param('id'), ...body }, ctx),
});
// The network's user directory: which numbers a phone lookup (crm's hasChatnet check) finds.
chatnetSandboxArea.route('POST /network/phones', {
  summary: 'Register phone numbers as users of the network',
  description:
    'The network’s user directory, shared by every account: lookups (crm’s hasChatnet check, …/lookup, starting a conversation) find these numbers and no others. ' +
    '`acceptsStrangers: false` makes a user take messages only from friends.',
  body: Phones,
  response: SandboxPhonesResult,
  handler: async ({ body, ctx, deps }) => connector(deps).SandboxSetPhones(body, ctx),
});
// The user accepts the account's friend request.
chatnetSandboxArea.route('POST /accounts/:id/friend-requests/:chatnetUid/accept', {
  summary: 'The user accepts the account’s pending friend request',
  description:
    'The request turns `accepted` (`friend_request.accepted`), the user joins the account’s friends (and the contact’s friends in crm), and messages to them no longer fail with `friend_required`.',
  response: FriendRequest,
  handler: async ({ param, ctx, deps }) =>
    friendRequestOut(await connector(deps).SandboxAcceptFriendRequest({ id: param('id'), chatnetUid: param('chatnetUid') }, ctx)),
});
chatnetSandboxArea.route('GET /accounts/:id/seen-by-agent', {
  summary: 'What the account told the network it read (an agent marked a conversation read), newest first',
  response: SeenByAgentList,
  handler: async ({ param, ctx, deps }) => ({ data: (await connector(deps).SandboxSeenByAgent({ id: param('id') }, ctx)).data.map(seenByAgentOut) }),
});
chatnetSandboxArea.route('GET /accounts/:id/sent', {
  summary: 'What the account sent to the network, newest first (with the message each quoted and when it was recalled)',
  response: z.object({ data: z.array(SentMessage) }),
  handler: async ({ param, ctx, deps }) => ({ data: (await connector(deps).SandboxSentMessages({ id: param('id') }, ctx)).data.map(sentOut) }),
});
chatnetSandboxArea.route('POST /accounts/:id/recall', {
  summary: 'The contact recalls a message they sent to the account',
  description:
    'The stored message becomes `status: "recalled"` with `recalledAt` (`message.recalled`); agents then see its content as null. 400 when the id is not a message a contact sent to the account.',
  body: Recall,
  response: SandboxRecallResult,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) => connector(deps).SandboxRecall({ id: param('id'), ...body }, ctx),
});
chatnetSandboxArea.route('POST /accounts/:id/react', {
  summary: 'A member of the thread reacts to a message (an empty emoji takes their reaction back)',
  description: 'The message’s reactions show it as `by: "contact"` with the member’s uid as userId (`message.reaction`).',
  body: React,
  response: SandboxReactResult,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) => connector(deps).SandboxReact({ id: param('id'), ...body }, ctx),
});

/** The area's operations, in the document's order. */
export const chatnetOps = [...chatnetAccountArea.ops, ...chatnetSandboxArea.ops];

/**
 * Chat-network accounts (internal API) and the sandbox network's control routes at the root, behind the bearer for
 * everything under /sandbox (the social network's sandbox routes check it only when this has not).
 */
export function chatnetAccountRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  const root = Router();
  root.use('/sandbox', deps.auth.bearer, chatnetSandboxArea.router(deps, contract));
  const enabled = chatnetSandboxEnabled(deps.config);
  return {
    internal: chatnetAccountArea.router(deps, contract),
    root: enabled ? root : undefined,
    parsesOwnBody: enabled ? (req) => req.method === 'POST' && SANDBOX_INBOUND.test(req.path) : undefined,
  };
}
