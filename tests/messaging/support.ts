import { randomUUID } from 'node:crypto';
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import {
  AppError,
  audienceOf,
  type ClientFor,
  createServiceClient,
  GrpcServer,
  type HandlersFor,
  type InternalPrincipal,
  loadProto,
  type ServiceName,
  serviceDefinition,
} from '@crm/grpc-kit';
import { createLogger } from '@crm/logger';
import { amqpUser, dlqName } from '@crm/events';
import { eventually, freePort, infra, testAuth } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { withUnfaked } from '../support/fake-grpc';
import { startStack, type Stack } from '../support/stack';
import { producerStampHeaders } from '../support/stamps';

const log = createLogger('messaging-test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** A gRPC server speaking a real contract; methods not given fail clearly. Can stop and start on the same port. */
export async function fakeServer<N extends ServiceName>(proto: string, service: N, handlers: Partial<HandlersFor<N>>, port?: number) {
  const ctor = serviceDefinition(loadProto(proto), service);
  const all = withUnfaked(ctor, handlers);
  const chosen = port ?? (await freePort());
  let server: GrpcServer | undefined;
  const up = async () => {
    server = new GrpcServer(log, testAuth(audienceOf(service) as InternalPrincipal)).add(ctor, all);
    await server.listen('127.0.0.1', chosen);
  };
  return {
    addr: `127.0.0.1:${chosen}`,
    up,
    async down() {
      await server?.stop(100);
      server = undefined;
    },
  };
}

export interface FakeAccount {
  orgId: string;
  connected: boolean;
}

export interface NetworkSend {
  orgId: string;
  accountId: string;
  threadId: string;
  threadType: string;
  content: string;
  contentType: string;
  clientMessageId: string;
  chatnetMessageId: string;
}

/**
 * The connector's SendChatMessage as the contract states it: NOT_FOUND outside the org, FAILED_PRECONDITION
 * when not connected, a repeated clientMessageId answers with the first result. `sent` is what reached the network.
 */
export async function fakeConnector() {
  const accounts = new Map<string, FakeAccount>();
  const sent: NetworkSend[] = [];
  /** Runs after the network took a send and before the connector answers (e.g. its echo arriving first). */
  const hooks: { beforeReply?: (s: NetworkSend) => Promise<void> } = {};
  const server = await fakeServer('connector/v1/connector.proto', 'connector.v1.ConnectorService', {
    // Only what messaging reads: the account exists in the caller's org (else NOT_FOUND).
    GetAccount: async (req, ctx) => {
      const a = accounts.get(req.id);
      if (!a || a.orgId !== ctx.orgId) throw new AppError('not_found', 'Chat-network account not found');
      return { id: req.id, displayName: 'fake account', status: a.connected ? 'connected' : 'disconnected' };
    },
    SendChatMessage: async (req, ctx) => {
      const a = accounts.get(req.accountId);
      if (!a || a.orgId !== ctx.orgId) throw new AppError('not_found', 'Chat-network account not found');
      if (!a.connected) throw new AppError('failed_precondition', 'Account is not connected', { code: 'account_not_connected' });
      const prior = sent.find((s) => s.accountId === req.accountId && s.clientMessageId === req.clientMessageId);
      if (prior) return { chatnetMessageId: prior.chatnetMessageId, sentAt: new Date().toISOString() };
      const s: NetworkSend = { orgId: ctx.orgId, ...req, chatnetMessageId: `net-${randomUUID()}` };
      sent.push(s);
      await hooks.beforeReply?.(s);
      return { chatnetMessageId: s.chatnetMessageId, sentAt: new Date().toISOString() };
    },
  });
  await server.up();
  return {
    ...server,
    sent,
    hooks,
    account(orgId: string, connected = true): string {
      const id = randomUUID();
      accounts.set(id, { orgId, connected });
      return id;
    },
    setConnected(id: string, connected: boolean) {
      accounts.get(id)!.connected = connected;
    },
  };
}

/**
 * crm's UpsertChatnetContact(s) / GetContactBrief over an in-memory contact table; `beforeUpsert` runs first (a slow
 * crm), once per call.
 */
export async function fakeCrm(port?: number, hooks: { beforeUpsert?: () => Promise<void> } = {}) {
  const contacts = new Map<string, { id: string; name: string; avatar: string; phone: string; uid: string }>();
  const upserts: Array<{ orgId: string; chatnetUid: string; displayName: string; threadType: string }> = [];
  const upsert = (orgId: string, req: { chatnetUid: string; displayName: string; avatar: string; threadType: string }) => {
    upserts.push({ orgId, chatnetUid: req.chatnetUid, displayName: req.displayName, threadType: req.threadType });
    const key = `${orgId}/${req.chatnetUid}`;
    const found = contacts.get(key);
    if (found) return { id: found.id, name: found.name, avatar: found.avatar, created: false, phone: found.phone };
    const c = { id: randomUUID(), name: req.displayName, avatar: req.avatar, phone: '', uid: req.chatnetUid };
    contacts.set(key, c);
    return { id: c.id, name: c.name, avatar: c.avatar, created: true, phone: '' };
  };
  const server = await fakeServer(
    'crm/v1/crm.proto',
    'crm.v1.CrmService',
    {
      UpsertChatnetContact: async (req, ctx) => {
        await hooks.beforeUpsert?.();
        return upsert(ctx.orgId, req);
      },
      UpsertChatnetContacts: async (req, ctx) => {
        await hooks.beforeUpsert?.();
        return { contacts: req.contacts.map((c) => upsert(ctx.orgId, c)) };
      },
      GetContactBrief: async (req, ctx) => {
        const c = [...contacts.entries()].find(([k, v]) => k.startsWith(`${ctx.orgId}/`) && v.id === req.id)?.[1];
        if (!c) throw new AppError('not_found', 'Contact not found');
        return { id: c.id, name: c.name, phone: c.phone, email: '', avatar: c.avatar, status: 'lead', tags: [], chatnetUid: c.uid };
      },
    },
    port,
  );
  return {
    ...server,
    contacts,
    upserts,
    /** A contact that already exists in crm (e.g. typed in by hand, with a phone). */
    add(orgId: string, uid: string, name: string, phone = '') {
      const c = { id: randomUUID(), name, avatar: '', phone, uid };
      contacts.set(`${orgId}/${uid}`, c);
      return c;
    },
  };
}

/** The stack's event exchange: publish envelopes as another service's relay would, and watch what messaging publishes. */
export async function eventBus(stack: Stack) {
  const exchange = stack.env.EVENTS_EXCHANGE;
  const conn: ChannelModel = await connect(infra.amqpUrl, { noDelay: true });
  const ch: ConfirmChannel = await conn.createConfirmChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  const seen: Array<{ id: string; type: string; orgId: string; occurredAt: string; data: any }> = [];
  const q = await ch.assertQueue('', { exclusive: true, autoDelete: true });
  for (const key of ['conversation.*', 'message.*', 'chatnet_account.assignment_updated']) await ch.bindQueue(q.queue, exchange, key);
  await ch.consume(q.queue, (m) => m && seen.push(JSON.parse(m.content.toString())), { noAck: true });

  /** `occurredAt` defaults to now (an earlier one: an announcement that arrives late). */
  const publish = (type: string, orgId: string, data: unknown, id: string = randomUUID(), occurredAt = new Date().toISOString()) =>
    new Promise<string>((resolve, reject) => {
      const body = Buffer.from(JSON.stringify({ id, type, orgId, occurredAt, data }));
      ch.publish(
        exchange,
        type,
        body,
        {
          persistent: true,
          userId: amqpUser(infra.amqpUrl),
          contentType: 'application/json',
          messageId: id,
          headers: producerStampHeaders(type, orgId, id),
        },
        (err) => (err ? reject(err) : resolve(id)),
      );
    });

  return {
    seen,
    publish,
    /** A message arriving from the network, as the connector announces it. */
    inbound(orgId: string, d: Partial<InboundData> & { accountId: string; fromUid: string }, eventId?: string) {
      const data: InboundData = {
        chatnetMessageId: `in-${randomUUID()}`,
        threadId: d.fromUid,
        threadType: 'user',
        fromName: 'Lan Nguyen',
        fromAvatar: '',
        content: 'Hello',
        contentType: 'text',
        sentAt: new Date().toISOString(),
        ...d,
      };
      return publish('chatnet.inbound', orgId, data, eventId).then(() => data);
    },
    of: (type: string) => seen.filter((e) => e.type === type),
    /** The next message parked in the dead-letter queue of messaging's consumer `name` (`inbound`, `seen`, ...), with its headers. */
    async deadLettered(name: string) {
      const msg = await eventually(() => ch.get(dlqName(`${exchange}.messaging.${name}`), { noAck: true }));
      return { event: JSON.parse(msg.content.toString()) as { id: string; type: string }, headers: msg.properties.headers ?? {} };
    },
    async close() {
      await conn.close().catch(() => undefined);
    },
  };
}

export interface InboundData {
  accountId: string;
  chatnetMessageId: string;
  threadId: string;
  threadType: string;
  fromUid: string;
  fromName: string;
  fromAvatar: string;
  content: string;
  contentType: string;
  sentAt: string;
  /** Group threads: the group's name, when the network gave it. */
  groupName?: string;
  /** The account's own message, typed on its phone. */
  fromSelf?: boolean;
}

/** A direct gRPC client of messaging, as automation, campaigns and crm call it. */
export function messagingClient(stack: Stack): ClientFor<'messaging.v1.MessagingService'> {
  return createServiceClient(
    serviceDefinition(loadProto('messaging/v1/messaging.proto'), 'messaging.v1.MessagingService'),
    stack.addr('messaging'),
    testAuth('gateway'),
  );
}

/** An org with its owner's client, its id, and a client holding a fresh API key of the org. */
export async function orgWithKey(url: string, name = 'Acme') {
  const org = await newOrg(client(url), name);
  const key = await org.owner.post('/api/v1/settings/api-key/generate');
  if (key.status !== 201) throw new Error(`api key: ${key.status} ${JSON.stringify(key.body)}`);
  return { ...org, orgId: org.user.orgId as string, pub: client(url).withKey(key.body.apiKey), apiKey: key.body.apiKey as string };
}

/**
 * Messaging alone behind the gateway (with identity), its connector and crm faked in memory: what the attachment
 * tests need. `messagingEnv` adds messaging's own settings (ATTACHMENTS_DIR, limits). down() stops all three.
 */
export async function messagingWithFakes(messagingEnv: Record<string, string>) {
  const connector = await fakeConnector();
  const crm = await fakeCrm();
  await crm.up();
  const stack = await startStack({
    services: ['messaging'],
    serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ...messagingEnv } },
  }).catch(async (err) => {
    await connector.down();
    await crm.down();
    throw err;
  });
  return {
    stack,
    connector,
    crm,
    async down() {
      await stack.stop();
      await connector.down();
      await crm.down();
    },
  };
}
