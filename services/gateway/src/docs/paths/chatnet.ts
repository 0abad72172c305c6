import { z } from 'zod';
import {
  Assignment,
  DeleteQuery,
  Drop,
  FriendRequestQuery,
  Friends,
  Inbound,
  ListQuery,
  Lookup,
  NewAccount,
  NewFriendRequest,
  Phones,
  ProxyBody,
  React,
  Recall,
  Scan,
  Seen,
  Self,
} from '../../routes/chatnet-accounts.routes';
import { nulls, proto, reply } from '../proto-schema';
import { area } from '../registry';
import { MessageBody, page } from '../schemas/common';

const CONNECTOR = 'connector/v1/connector.proto';
/** Live state from the session pool; unset times as null (chatnet-accounts.routes liveStatus). */
const LiveStatus = nulls(proto(CONNECTOR, 'connector.v1.LiveStatus'), ['connectedAt', 'lastHeartbeat']);
/** chatnet-accounts.routes `account`: optional values as null (checked live by tests/gateway/openapi-contract.test.ts). */
const Account = nulls(proto(CONNECTOR, 'connector.v1.Account'), ['chatnetUid', 'avatarUrl', 'phone', 'ownerUserId', 'lastConnectedAt']).extend({
  liveStatus: LiveStatus,
});
const AccountAssignment = nulls(reply('messaging', 'GetAccountAssignment'), ['maxOpenPerUser', 'replyTimeoutMinutes', 'onTimeout']);

/** Chat-network accounts (connector; auto-assignment stored by messaging), internal API. */
const accounts = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Chat-network accounts' });
accounts.op('GET /chatnet-accounts', {
  summary: 'The organization’s chat-network accounts with their live state',
  query: ListQuery,
  responses: { 200: z.array(Account) },
});
accounts.op('POST /chatnet-accounts', {
  summary: 'Add an account (then POST …/login for its QR code)',
  body: NewAccount,
  responses: { 201: reply('chatnet-connector', 'CreateAccount') },
});
accounts.op('GET /chatnet-accounts/:id', { summary: 'One account with its live state', responses: { 200: Account } });
accounts.op('POST /chatnet-accounts/:id/login', {
  summary: 'Start a QR login; the QR code arrives over socket.io (`qr`)',
  description: 'The code goes to room `account:<id>`; a socket that joins the room after this call gets the code being shown at once.',
  responses: { 200: MessageBody },
  errors: [422],
});
accounts.op('POST /chatnet-accounts/:id/reconnect', { summary: 'Reconnect with the stored session', responses: { 200: MessageBody }, errors: [422] });
accounts.op('GET /chatnet-accounts/:id/status', {
  summary: 'The account’s live state',
  responses: { 200: z.object({ accountId: z.string(), liveStatus: LiveStatus }) },
});
accounts.op('PUT /chatnet-accounts/:id/proxy', {
  summary: 'Set or clear (null or "") the account’s proxy',
  body: ProxyBody,
  responses: { 200: reply('chatnet-connector', 'SetProxy') },
});
accounts.op('GET /chatnet-accounts/:id/assignment', { summary: 'Who gets the account’s new conversations', responses: { 200: AccountAssignment } });
accounts.op('PUT /chatnet-accounts/:id/assignment', {
  summary: 'Set auto-assignment: manual or round robin over the listed users (team leads and up)',
  description:
    'Assignment that repairs itself: `onlyOnline` (round robin skips users not online; a user going offline releases their open conversations of the account), `replyTimeoutMinutes` with `onTimeout` (`reassign` to the next eligible user, `unassign`, or `notify_leads`) when the assignee leaves an inbound message unanswered that long (both or neither: 400 naming the missing one), `drainBacklog` (a user who gets capacity back takes the oldest unassigned conversation). Every automatic move publishes `conversation.assigned` with `assignedBy: null` and its `reason`.',
  body: Assignment,
  responses: { 200: AccountAssignment },
});
const FoundUser = z.object({
  found: z.boolean(),
  chatnetUid: z.string().nullable(),
  displayName: z.string().nullable(),
  avatarUrl: z.string().nullable(),
});
const FriendRequest = z.object({
  id: z.string(),
  chatnetAccountId: z.string(),
  chatnetUid: z.string(),
  status: z.enum(['sent', 'accepted']),
  message: z.string(),
  createdAt: z.string(),
  acceptedAt: z.string().nullable(),
});
accounts.op('POST /chatnet-accounts/:id/lookup', {
  summary: 'Who a phone number is on the chat network, asked through this account',
  description:
    'Vietnamese spellings are one number (`0912345678`, `+84912345678`, `84 912 345 678`). The account must be connected (409 `account_not_connected`). ' +
    'Lookups are paced per account as the network paces them: at most `LOOKUP_PER_ACCOUNT_PER_MINUTE` (default 30) a minute reach the network, above it 429 with Retry-After; ' +
    'answers (found or not) are cached for a day and a cached answer costs nothing.',
  body: Lookup,
  responses: { 200: FoundUser },
  errors: [409, 503],
});
accounts.op('POST /chatnet-accounts/:id/friend-requests', {
  summary: 'Ask a network user (by phone or uid) to become the account’s friend',
  description:
    'For users who take messages only from friends (`friend_required`). 202 once the network took it (status `sent`); it turns `accepted` when the user accepts ' +
    '(event `friend_request.accepted`). 422 `not_on_network` when nobody uses the number; lookups are paced as for …/lookup.',
  body: NewFriendRequest,
  responses: { 202: FriendRequest },
  errors: [409, 422, 503],
});
accounts.op('GET /chatnet-accounts/:id/friend-requests', {
  summary: 'The account’s friend requests, newest first (`status=sent|accepted`)',
  query: FriendRequestQuery,
  paging: { limit: 20, max: 100 },
  responses: { 200: page(FriendRequest) },
});
accounts.op('DELETE /chatnet-accounts/:id', {
  summary: 'Delete an account (`purge=true` also deletes its conversations)',
  query: DeleteQuery,
  responses: { 204: null },
});

/** The sandbox chat network's control routes: only with CHATNET_DRIVER=sandbox outside production; owners and admins. */
const sandbox = area({ prefix: '/sandbox', auth: 'bearer', tag: 'Sandbox chat network', sandbox: 'chatnet' });
sandbox.op('POST /accounts/:id/scan', {
  summary: 'Scan the pending QR code: the account connects as the given identity',
  body: Scan,
  responses: { 200: Account },
  errors: [422],
});
sandbox.op('POST /accounts/:id/inbound', {
  summary: 'A customer’s message arrives on the account',
  body: Inbound,
  responses: { 200: reply('chatnet-connector', 'SandboxInbound') },
  errors: [413, 422],
});
sandbox.op('POST /accounts/:id/self', {
  summary: 'The agent types a message on the phone: it shows in the conversation as outbound (an echo of a CRM send is stored once)',
  body: Self,
  responses: { 200: reply('chatnet-connector', 'SandboxSelf') },
  errors: [422],
});
sandbox.op('POST /accounts/:id/seen', {
  summary: 'The customer reads messages the account sent',
  body: Seen,
  responses: { 200: reply('chatnet-connector', 'SandboxSeen') },
  errors: [422],
});
sandbox.op('POST /accounts/:id/drop', {
  summary: 'The network drops the connection (optionally expiring the session)',
  body: Drop,
  responses: { 200: MessageBody },
  errors: [422],
});
sandbox.op('POST /accounts/:id/friends', {
  summary: 'Replace the account’s friend list',
  body: Friends,
  responses: { 200: reply('chatnet-connector', 'SandboxSetFriends') },
  errors: [422],
});
sandbox.op('POST /network/phones', {
  summary: 'Register phone numbers as users of the network',
  description:
    'The network’s user directory, shared by every account: lookups (crm’s hasChatnet check, …/lookup, starting a conversation) find these numbers and no others. ' +
    '`acceptsStrangers: false` makes a user take messages only from friends.',
  body: Phones,
  responses: { 200: reply('chatnet-connector', 'SandboxSetPhones') },
});
sandbox.op('POST /accounts/:id/friend-requests/:chatnetUid/accept', {
  summary: 'The user accepts the account’s pending friend request',
  description:
    'The request turns `accepted` (`friend_request.accepted`), the user joins the account’s friends (and the contact’s friends in crm), and messages to them no longer fail with `friend_required`.',
  responses: { 200: FriendRequest },
});
sandbox.op('GET /accounts/:id/seen-by-agent', {
  summary: 'What the account told the network it read (an agent marked a conversation read), newest first',
  responses: { 200: z.object({ data: reply('chatnet-connector', 'SandboxSeenByAgent').shape.data }) },
});
/** chatnet-accounts.out sentOut: the quoted message null for none, recalledAt null until the account recalled it. */
const SentMessage = nulls(proto(CONNECTOR, 'connector.v1.SentMessage'), ['recalledAt']);
sandbox.op('GET /accounts/:id/sent', {
  summary: 'What the account sent to the network, newest first (with the message each quoted and when it was recalled)',
  responses: { 200: z.object({ data: z.array(SentMessage) }) },
});
sandbox.op('POST /accounts/:id/recall', {
  summary: 'The contact recalls a message they sent to the account',
  description:
    'The stored message becomes `status: "recalled"` with `recalledAt` (`message.recalled`); agents then see its content as null. 400 when the id is not a message a contact sent to the account.',
  body: Recall,
  responses: { 200: reply('chatnet-connector', 'SandboxRecall') },
  errors: [422],
});
sandbox.op('POST /accounts/:id/react', {
  summary: 'A member of the thread reacts to a message (an empty emoji takes their reaction back)',
  description: 'The message’s reactions show it as `by: "contact"` with the member’s uid as userId (`message.reaction`).',
  body: React,
  responses: { 200: reply('chatnet-connector', 'SandboxReact') },
  errors: [422],
});

export const chatnetOps = [...accounts.ops, ...sandbox.ops];
