import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { amqpUser, deleteTopology } from '@crm/events';
import { createServiceClient, loadProto, type ClientFor, serviceDefinition } from '@crm/grpc-kit';
import { freePort, infra, testAuth } from '@crm/testing';
import { Client, client, email, newOrg } from '../support/http';
import { startStack, StackOptions } from '../support/stack';

export type Org = Awaited<ReturnType<typeof newOrg>> & { orgId: string };

/** identity + crm + gateway, and the RabbitMQ queues crm declared removed again on stop. */
export async function startCrmStack(opts: StackOptions = {}) {
  // Unless the stack runs messaging (or a test says otherwise), it is an address where nothing listens (never a developer's own one).
  const nowhere = `127.0.0.1:${await freePort()}`;
  const stack = await startStack({
    ...opts,
    services: ['crm', ...(opts.services ?? [])],
    // Likewise the connector (hasChatnet's phone lookups): its numbers then stay unchecked (hasChatnet=unknown).
    serviceEnv: {
      ...opts.serviceEnv,
      crm: {
        ...(opts.services?.includes('messaging') ? {} : { MESSAGING_ADDR: nowhere }),
        ...(opts.services?.includes('chatnet-connector') ? {} : { CONNECTOR_ADDR: nowhere }),
        ...opts.serviceEnv?.crm,
      },
    },
  });
  const api = client(stack.url);
  const exchange = stack.env.EVENTS_EXCHANGE;
  let rpc: ClientFor<'crm.v1.CrmService'> | undefined;
  return {
    stack,
    api,
    exchange,
    /** crm's gRPC service, as another service (messaging, automation) calls it. */
    crmRpc(): ClientFor<'crm.v1.CrmService'> {
      rpc ??= createServiceClient(serviceDefinition(loadProto('crm/v1/crm.proto'), 'crm.v1.CrmService'), stack.addr('crm'), testAuth('gateway'));
      return rpc;
    },
    async newOrg(name = 'Acme'): Promise<Org> {
      const o = await newOrg(api, name);
      return { ...o, orgId: o.user.orgId };
    },
    async stop() {
      rpc?.close();
      await stack.stop();
      await deleteTopology(infra.amqpUrl, exchange, [
        `${exchange}.crm.message-events`,
        `${exchange}.crm.contact-events`,
        `${exchange}.crm.chatnet-friends`,
        `${exchange}.crm.inbox-visibility`,
      ]).catch(() => undefined);
    },
  };
}

export type CrmStack = Awaited<ReturnType<typeof startCrmStack>>;

/** A signed-in user of the org with the given role. */
export async function addUser(api: Client, owner: Client, role: string) {
  const password = 'correct horse battery';
  const e = email(role);
  const res = await owner.post('/api/v1/users', { email: e, fullName: `${role} person`, role, password });
  if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${JSON.stringify(res.body)}`);
  const login = await api.post('/api/v1/auth/login', { email: e, password });
  return { id: res.body.id as string, as: api.as(login.body.token) };
}

/** The org's API-key client for /api/public. */
export async function publicClient(api: Client, owner: Client) {
  const res = await owner.post('/api/v1/settings/api-key/generate');
  if (res.status !== 201) throw new Error(`api key generate failed: ${res.status}`);
  return api.withKey(res.body.apiKey);
}

export interface Envelope {
  id: string;
  type: string;
  orgId: string;
  occurredAt: string;
  data: any;
}

/** Everything published to the stack's exchange under `patterns`, collected by a private queue. */
export async function listenEvents(exchange: string, patterns: string[]) {
  const conn = await amqp.connect(infra.amqpUrl);
  const ch = await conn.createChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true });
  for (const p of patterns) await ch.bindQueue(queue, exchange, p);
  const seen: Envelope[] = [];
  await ch.consume(
    queue,
    (msg) => {
      if (msg) seen.push(JSON.parse(msg.content.toString()));
    },
    { noAck: true },
  );
  return {
    seen,
    find: (pred: (e: Envelope) => boolean) => seen.find(pred),
    close: () => conn.close(),
  };
}

/** Publish an event as another service's outbox relay would, saying it happened at `occurredAt` (default now). */
export async function publishEvent(
  exchange: string,
  type: string,
  orgId: string,
  data: unknown,
  id: string = randomUUID(),
  occurredAt: string = new Date().toISOString(),
): Promise<string> {
  const conn = await amqp.connect(infra.amqpUrl);
  try {
    const ch = await conn.createConfirmChannel();
    await ch.assertExchange(exchange, 'topic', { durable: true });
    const body = Buffer.from(JSON.stringify({ id, type, orgId, occurredAt, data }));
    ch.publish(exchange, type, body, { persistent: true, userId: amqpUser(infra.amqpUrl), contentType: 'application/json', messageId: id });
    await ch.waitForConfirms();
    return id;
  } finally {
    await conn.close();
  }
}
