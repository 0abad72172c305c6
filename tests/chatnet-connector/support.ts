import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { connect } from 'amqplib';
import type { RedisClientType } from '@redis/client';
import { type ClientFor, checkHealth, createServiceClient, loadProto, serviceDefinition, type CallContext } from '@crm/grpc-kit';
import { eventually, infra, testAuth } from '@crm/testing';
import { email, type Client } from '../support/http';

export interface Envelope<T = any> {
  id: string;
  type: string;
  orgId: string;
  occurredAt: string;
  data: T;
}

/**
 * Everything the stack publishes on its exchange, seen through a private test queue, so a test can
 * assert that an event was (or was not) emitted.
 */
export async function captureEvents(exchange: string, pattern = '#') {
  const connection = await connect(infra.amqpUrl);
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, exchange, pattern);
  const events: Envelope[] = [];
  await channel.consume(queue, (msg) => msg && events.push(JSON.parse(msg.content.toString())), { noAck: true });
  return {
    events,
    /** Events of one type (optionally about one account), in arrival order. */
    of: (type: string, accountId?: string) => events.filter((e) => e.type === type && (!accountId || e.data?.accountId === accountId)),
    /** Wait for the first event matching, optionally only among those after `after` events. */
    waitFor: (type: string, pred: (e: Envelope) => boolean = () => true, timeoutMs = 10_000, after = 0) =>
      eventually(async () => events.slice(after).find((e) => e.type === type && pred(e)), timeoutMs),
    count: () => events.length,
    async stop(deleteExchange = false) {
      if (deleteExchange) await channel.deleteExchange(exchange).catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

/** A direct client of ConnectorService (signed as the gateway) or ConnectorPeerService (signed as a peer connector). */
export function connectorClient(address: string, service: 'ConnectorPeerService'): ClientFor<'connector.v1.ConnectorPeerService'>;
export function connectorClient(address: string): ClientFor<'connector.v1.ConnectorService'>;
export function connectorClient(address: string, service?: 'ConnectorPeerService') {
  const proto = loadProto('connector/v1/connector.proto');
  if (service) return createServiceClient(serviceDefinition(proto, 'connector.v1.ConnectorPeerService'), address, testAuth('connector'), 10_000);
  return createServiceClient(serviceDefinition(proto, 'connector.v1.ConnectorService'), address, testAuth('gateway'), 10_000);
}

export function grpcCtx(user: { id: string; orgId: string; role: string }): Partial<CallContext> {
  return { orgId: user.orgId, userId: user.id, role: user.role, requestId: `test-${Date.now()}` };
}

/**
 * grpcCtx of a call messaging makes while serving the user's request: the gateway's credential for that request
 * travels with it as the origin, as methods bound to an origin need (a recall, a reaction: ORIGIN_BOUND).
 */
export function userRequestCtx(user: { id: string; orgId: string; role: string }): Partial<CallContext> {
  const ctx = grpcCtx(user);
  const origin = testAuth('gateway').sign(ctx, 'messaging.v1.MessagingService/RecallMessage').split('~')[0];
  return { ...ctx, origin };
}

/** Add a user with a role to the owner's org and sign them in. */
export async function addUser(api: Client, owner: Client, role: 'agent' | 'admin' | 'team_lead', fullName = 'Ada Agent') {
  const mail = email(role);
  const password = 'correct horse battery';
  const created = await owner.post('/api/v1/users', { email: mail, fullName, role, password });
  if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await api.post('/api/v1/auth/login', { email: mail, password });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  return { client: api.as(login.body.token), user: login.body.user as { id: string; orgId: string; role: string; email: string; fullName: string } };
}

export const PNG_DATA_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/;

const CONNECTOR_MAIN = path.join(__dirname, '..', '..', 'services', 'chatnet-connector', 'dist', 'main.js');

/** A connector process started from its build, for the tests that run several replicas side by side. */
export interface ConnectorProcess {
  proc: ChildProcess;
  address: string;
  output: string[];
  exited: Promise<number | null>;
}

/** Start a connector process on `port` with `env` (the stack's, plus the test's) and wait until it is healthy. */
export async function spawnConnector(env: Record<string, string>, port: number): Promise<ConnectorProcess> {
  const proc = spawn(process.execPath, [CONNECTOR_MAIN], {
    env: { PATH: process.env.PATH ?? '', ...env, GRPC_PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  proc.stdout!.on('data', (d) => output.push(String(d)));
  proc.stderr!.on('data', (d) => output.push(String(d)));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const address = `127.0.0.1:${port}`;
  await eventually(() => checkHealth(address), 30_000, 200).catch((err: Error) => {
    throw new Error(`connector did not start: ${err.message}\n${output.join('')}`);
  });
  return { proc, address, output, exited };
}

/** The address of the process holding an account's session lease (as that process registered it), or null. */
export async function leaseHolder(redis: Pick<RedisClientType, 'get'>, prefix: string, accountId: string): Promise<string | null> {
  const instance = await redis.get(`${prefix}chatnet:lease:${accountId}`);
  return instance ? redis.get(`${prefix}chatnet:instance:${instance}`) : null;
}

const SANDBOX_NETWORK_MAIN = path.join(__dirname, '..', '..', 'services', 'chatnet-connector', 'dist', 'sandbox-network', 'main.js');

/** The standalone sandbox network process (its build), listening on `port`, started and answering /healthz. */
export async function spawnSandboxNetwork(env: Record<string, string>, port: number): Promise<ConnectorProcess & { url: string }> {
  const proc = spawn(process.execPath, [SANDBOX_NETWORK_MAIN], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env, SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  proc.stdout!.on('data', (d) => output.push(String(d)));
  proc.stderr!.on('data', (d) => output.push(String(d)));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => (await fetch(`${url}/healthz`)).ok || undefined, 30_000, 200).catch((err: Error) => {
    throw new Error(`sandbox network did not start: ${err.message}\n${output.join('')}`);
  });
  return { proc, address: `127.0.0.1:${port}`, url, output, exited };
}
