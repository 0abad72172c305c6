import { randomUUID } from 'node:crypto';
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import {
  AppError,
  audienceOf,
  GrpcServer,
  type HandlersFor,
  type InternalPrincipal,
  loadProto,
  type ServiceName,
  serviceDefinition,
} from '@crm/grpc-kit';
import { createLogger } from '@crm/logger';
import { amqpUser, dlqName } from '@crm/events';
import { eventually, infra, testAuth } from '@crm/testing';
import { withUnfaked } from '../support/fake-grpc';
import { client, Client, email, newOrg } from '../support/http';
import { eventContactData, eventData } from '../support/event-data';
import type { Stack } from '../support/stack';
import { producerStampHeaders } from '../support/stamps';

const log = createLogger('automation-test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** A gRPC server for one service of the real contract; methods not given answer UNIMPLEMENTED-like errors. */
export async function fakeServer<N extends ServiceName>(proto: string, service: N, handlers: Partial<HandlersFor<N>>) {
  const ctor = serviceDefinition(loadProto(proto), service);
  const server = new GrpcServer(log, testAuth(audienceOf(service) as InternalPrincipal)).add(ctor, withUnfaked(ctor, handlers));
  const port = await server.listen('127.0.0.1', 0);
  return { addr: `127.0.0.1:${port}`, stop: () => server.stop(100) };
}

export interface Brief {
  id: string;
  name: string;
  phone: string;
  email: string;
  avatar: string;
  status: string;
  tags: string[];
  assignedUserId?: string;
}

/** crm as automation sees it: GetContactBrief and PatchContact over contacts the test puts in. */
export async function fakeCrm() {
  const contacts = new Map<string, Brief>();
  const patches: Array<{ orgId: string; role: string; id: string; assignedUserId?: string; addTags: string[] }> = [];
  const briefCalls: string[] = [];
  const handlers: Partial<HandlersFor<'crm.v1.CrmService'>> = {
    GetContactBrief: async (req, ctx) => {
      briefCalls.push(req.id);
      const c = contacts.get(`${ctx.orgId}/${req.id}`);
      if (!c) throw new AppError('not_found', 'Contact not found');
      return c;
    },
    PatchContact: async (req, ctx) => {
      const c = contacts.get(`${ctx.orgId}/${req.id}`);
      if (!c) throw new AppError('not_found', 'Contact not found');
      patches.push({ orgId: ctx.orgId, role: ctx.role, id: req.id, assignedUserId: req.assignedUserId, addTags: req.addTags });
      if (req.assignedUserId !== undefined) c.assignedUserId = req.assignedUserId;
      for (const t of req.addTags) if (!c.tags.includes(t)) c.tags.push(t);
      return { id: c.id, name: c.name, tags: c.tags };
    },
  };
  const server = await fakeServer('crm/v1/crm.proto', 'crm.v1.CrmService', handlers);
  return {
    ...server,
    contacts,
    patches,
    briefCalls,
    add(orgId: string, c: Partial<Brief> = {}): Brief {
      const brief: Brief = {
        id: randomUUID(),
        name: 'Lan Nguyen',
        phone: '+84901234567',
        email: 'lan@example.test',
        avatar: '',
        status: 'lead',
        tags: [],
        ...c,
      };
      contacts.set(`${orgId}/${brief.id}`, brief);
      return brief;
    },
  };
}

export interface Sent {
  orgId: string;
  conversationId: string;
  content: string;
  contentType: string;
  clientMessageId: string;
  source: string;
}

/**
 * messaging as automation sees it. SendMessage de-duplicates on clientMessageId as the real pipeline
 * does; `failNext` makes the next sends fail with UNAVAILABLE after they took effect (a lost answer).
 */
export async function fakeMessaging() {
  const latest = new Map<string, string>();
  const calls: Sent[] = [];
  const sent = new Map<string, Sent>();
  let failNext = 0;
  const handlers: Partial<HandlersFor<'messaging.v1.MessagingService'>> = {
    LatestConversationForContact: async (req, ctx) => {
      const id = latest.get(`${ctx.orgId}/${req.contactId}`);
      return id ? { conversation: { id } } : {};
    },
    LatestConversationsForContacts: async (req, ctx) => ({
      conversations: (req.contactIds ?? []).flatMap((contactId) => {
        const id = latest.get(`${ctx.orgId}/${contactId}`);
        return id ? [{ contactId, conversationId: id, chatnetAccountId: '' }] : [];
      }),
    }),
    // Starting a conversation with a contact who has none: this fake network knows nobody (not_on_network, as messaging
    // answers for a phone the network does not know).
    StartConversation: async () => {
      throw new AppError('failed_precondition', 'Nobody uses this on the chat network', {
        code: 'not_on_network',
        details: [{ field: 'phone', message: 'is not on the chat network' }],
      });
    },
    SendMessage: async (req, ctx) => {
      const call: Sent = {
        orgId: ctx.orgId,
        conversationId: req.conversationId,
        content: req.content,
        contentType: req.contentType,
        clientMessageId: req.clientMessageId,
        source: req.source,
      };
      calls.push(call);
      if (!sent.has(req.clientMessageId)) sent.set(req.clientMessageId, call);
      if (failNext > 0) {
        failNext--;
        throw new AppError('unavailable', 'connection reset');
      }
      return {
        id: randomUUID(),
        conversationId: req.conversationId,
        content: req.content,
        contentType: req.contentType,
        senderName: 'Automation',
        sentAt: new Date().toISOString(),
        status: 'sent',
      };
    },
  };
  const server = await fakeServer('messaging/v1/messaging.proto', 'messaging.v1.MessagingService', handlers);
  return {
    ...server,
    calls,
    /** Messages that took effect, one per clientMessageId. */
    messages: () => [...sent.values()],
    setLatest(orgId: string, contactId: string, conversationId: string) {
      latest.set(`${orgId}/${contactId}`, conversationId);
    },
    failNext(n: number) {
      failNext = n;
    },
  };
}

/** The chat network's side of the connector: SendChatMessage records what would have left, once per clientMessageId. */
export async function fakeConnector() {
  const accounts = new Map<string, string>();
  const sent: Array<{ orgId: string; accountId: string; threadId: string; content: string; clientMessageId: string }> = [];
  const server = await fakeServer('connector/v1/connector.proto', 'connector.v1.ConnectorService', {
    SendChatMessage: async (req, ctx) => {
      if (accounts.get(req.accountId) !== ctx.orgId) throw new AppError('not_found', 'Chat-network account not found');
      if (!sent.some((s) => s.clientMessageId === req.clientMessageId)) {
        sent.push({ orgId: ctx.orgId, accountId: req.accountId, threadId: req.threadId, content: req.content, clientMessageId: req.clientMessageId });
      }
      return { chatnetMessageId: `net-${req.clientMessageId}`, sentAt: new Date().toISOString() };
    },
  });
  return {
    ...server,
    sent,
    account(orgId: string): string {
      const id = randomUUID();
      accounts.set(id, orgId);
      return id;
    },
  };
}

/** Publishes envelopes into the stack's exchange as the producing services' relays would. */
export async function eventBus(stack: Stack) {
  const exchange = stack.env.EVENTS_EXCHANGE;
  const connection: ChannelModel = await connect(infra.amqpUrl);
  const channel: ConfirmChannel = await connection.createConfirmChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  return {
    async publish(type: string, orgId: string, data: unknown, id: string = randomUUID()) {
      const envelope = { id, type, orgId, occurredAt: new Date().toISOString(), data };
      channel.publish(exchange, type, Buffer.from(JSON.stringify(envelope)), {
        persistent: true,
        userId: amqpUser(infra.amqpUrl),
        contentType: 'application/json',
        messageId: id,
        headers: producerStampHeaders(type, orgId, id),
      });
      await channel.waitForConfirms();
      return envelope;
    },
    /** Collect every event matching `pattern` from now on (a private auto-delete queue). */
    async subscribe(pattern: string) {
      const got: Array<{ id: string; type: string; orgId: string; occurredAt: string; data: any }> = [];
      const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
      await channel.bindQueue(queue, exchange, pattern);
      await channel.consume(queue, (msg) => msg && got.push(JSON.parse(msg.content.toString())), { noAck: true });
      return got;
    },
    /** The next message parked in `queue`'s dead-letter queue (waits for one), with its headers. */
    async deadLettered(queue: string) {
      const msg = await eventually(() => channel.get(dlqName(queue), { noAck: true }));
      return { event: JSON.parse(msg.content.toString()) as { id: string; type: string }, headers: msg.properties.headers ?? {} };
    },
    /** The stack removes the exchange and every queue named after it when it stops. */
    async close() {
      await connection.close().catch(() => undefined);
    },
  };
}

/** A user of the owner's org with the given role, signed in. */
export async function member(stack: Stack, owner: Client, role: 'agent' | 'team_lead' | 'admin', name: string = role) {
  const api = client(stack.url);
  const address = email(name);
  const password = 'correct horse battery';
  const created = await owner.post('/api/v1/users', { email: address, fullName: `${name} user`, role, password });
  if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await api.post('/api/v1/auth/login', { email: address, password });
  if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
  return { api: api.as(login.body.token), id: created.body.id as string, token: login.body.token as string };
}

export async function org(stack: Stack, name = 'Acme') {
  const o = await newOrg(client(stack.url), name);
  return { ...o, orgId: o.user.orgId as string };
}

/** A contact as crm puts it in contact.* events (every field its schema has: consumers parse data by it). */
export function contactData(c: Partial<Record<string, unknown>> = {}) {
  const now = new Date().toISOString();
  return eventContactData({
    id: randomUUID(),
    name: 'Lan Nguyen',
    email: 'lan@example.test',
    phone: '+84901234567',
    source: 'manual',
    status: 'lead',
    assignedUserId: null,
    avatar: '',
    leadScore: 0,
    tags: [],
    notes: '',
    customFields: {},
    createdAt: now,
    updatedAt: now,
    lastActivity: now,
    ...c,
  });
}

/** A message.received as messaging publishes it (unassigned, nobody listed to alert unless `extra` says so). */
export function messageData(contactId: string, conversationId: string, content: string, extra: Record<string, unknown> = {}) {
  return eventData('message.received', {
    messageId: randomUUID(),
    conversationId,
    contactId,
    chatnetAccountId: randomUUID(),
    threadId: 'thread-1',
    threadType: 'user',
    senderUid: 'uid-1',
    senderName: 'Lan',
    content,
    contentType: 'text',
    sentAt: new Date().toISOString(),
    assigneeId: null,
    eligibleUserIds: [],
    ...extra,
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
