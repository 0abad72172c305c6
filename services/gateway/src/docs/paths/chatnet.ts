import { z } from 'zod';
import { Assignment, DeleteQuery, Drop, Friends, Inbound, ListQuery, NewAccount, Phones, ProxyBody, React, Recall, Scan, Seen, Self } from '../../routes/chatnet-accounts.routes';
import { nulls, proto, reply } from '../proto-schema';
import { area } from '../registry';
import { MessageBody } from '../schemas/common';

const CONNECTOR = 'connector/v1/connector.proto';
/** Live state from the session pool; unset times as null (chatnet-accounts.routes liveStatus). */
const LiveStatus = nulls(proto(CONNECTOR, 'connector.v1.LiveStatus'), ['connectedAt', 'lastHeartbeat']);
/** chatnet-accounts.routes `account`: optional values as null (checked live by tests/gateway/openapi-contract.test.ts). */
const Account = nulls(proto(CONNECTOR, 'connector.v1.Account'), ['chatnetUid', 'avatarUrl', 'phone', 'ownerUserId', 'lastConnectedAt']).extend({ liveStatus: LiveStatus });
const AccountAssignment = nulls(reply('messaging', 'GetAccountAssignment'), ['maxOpenPerUser']);

/** Chat-network accounts (connector; auto-assignment stored by messaging), internal API. */
const accounts = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Chat-network accounts' });
accounts.op('GET /chatnet-accounts', { summary: 'The organization’s chat-network accounts with their live state', query: ListQuery, responses: { 200: z.array(Account) } });
accounts.op('POST /chatnet-accounts', { summary: 'Add an account (then POST …/login for its QR code)', body: NewAccount, responses: { 201: reply('chatnet-connector', 'CreateAccount') } });
accounts.op('GET /chatnet-accounts/:id', { summary: 'One account with its live state', responses: { 200: Account } });
accounts.op('POST /chatnet-accounts/:id/login', {
  summary: 'Start a QR login; the QR code arrives over socket.io (`qr`)',
  description: 'The code goes to room `account:<id>`; a socket that joins the room after this call gets the code being shown at once.', responses: { 200: MessageBody }, errors: [422] });
accounts.op('POST /chatnet-accounts/:id/reconnect', { summary: 'Reconnect with the stored session', responses: { 200: MessageBody }, errors: [422] });
accounts.op('GET /chatnet-accounts/:id/status', { summary: 'The account’s live state', responses: { 200: z.object({ accountId: z.string(), liveStatus: LiveStatus }) } });
accounts.op('PUT /chatnet-accounts/:id/proxy', { summary: 'Set or clear (null or "") the account’s proxy', body: ProxyBody, responses: { 200: reply('chatnet-connector', 'SetProxy') } });
accounts.op('GET /chatnet-accounts/:id/assignment', { summary: 'Who gets the account’s new conversations', responses: { 200: AccountAssignment } });
accounts.op('PUT /chatnet-accounts/:id/assignment', { summary: 'Set auto-assignment: manual or round robin over the listed users (team leads and up)', body: Assignment, responses: { 200: AccountAssignment } });
accounts.op('DELETE /chatnet-accounts/:id', { summary: 'Delete an account (`purge=true` also deletes its conversations)', query: DeleteQuery, responses: { 204: null } });

/** The sandbox chat network's control routes: only with CHATNET_DRIVER=sandbox outside production; owners and admins. */
const sandbox = area({ prefix: '/sandbox', auth: 'bearer', tag: 'Sandbox chat network', sandbox: 'chatnet' });
sandbox.op('POST /accounts/:id/scan', { summary: 'Scan the pending QR code: the account connects as the given identity', body: Scan, responses: { 200: Account }, errors: [422] });
sandbox.op('POST /accounts/:id/inbound', { summary: 'A customer’s message arrives on the account', body: Inbound, responses: { 200: reply('chatnet-connector', 'SandboxInbound') }, errors: [413, 422] });
sandbox.op('POST /accounts/:id/self', {
  summary: 'The agent types a message on the phone: it shows in the conversation as outbound (an echo of a CRM send is stored once)',
  body: Self,
  responses: { 200: reply('chatnet-connector', 'SandboxSelf') },
  errors: [422],
});
sandbox.op('POST /accounts/:id/seen', { summary: 'The customer reads messages the account sent', body: Seen, responses: { 200: reply('chatnet-connector', 'SandboxSeen') }, errors: [422] });
sandbox.op('POST /accounts/:id/drop', { summary: 'The network drops the connection (optionally expiring the session)', body: Drop, responses: { 200: MessageBody }, errors: [422] });
sandbox.op('POST /accounts/:id/friends', { summary: 'Replace the account’s friend list', body: Friends, responses: { 200: reply('chatnet-connector', 'SandboxSetFriends') }, errors: [422] });
sandbox.op('POST /network/phones', {
  summary: 'Register phone numbers as users of the network',
  description: 'The network’s user directory, shared by every account: crm’s phone check (hasChatnet) through a connected account finds these numbers and no others.',
  body: Phones,
  responses: { 200: reply('chatnet-connector', 'SandboxSetPhones') },
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
  description: 'The stored message becomes `status: "recalled"` with `recalledAt` (`message.recalled`); agents then see its content as null. 400 when the id is not a message a contact sent to the account.',
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
