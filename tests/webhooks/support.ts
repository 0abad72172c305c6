import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Channel, type ChannelModel } from 'amqplib';
import { withTransaction, type Pool } from '@crm/db';
import { enqueueEvent, EVENT_EXAMPLES, exampleContact, installEventTables, OutboxRelay, type EventEnvelope, type NewEvent } from '@crm/events';
import { createLogger } from '@crm/logger';
import { createTestDatabase, infra, uniqueName, type TestDatabase, testPool } from '@crm/testing';

/**
 * An event's data as its producer writes it (the event catalogue's example), with `patch` over it: producers'
 * events are checked against their schemas, so a test standing in for a producer emits what a real one would.
 */
export function sample(type: string, patch: Record<string, unknown> = {}): Record<string, any> {
  const data = EVENT_EXAMPLES[type];
  if (!data) throw new Error(`no example of ${type}`);
  return { ...structuredClone(data as Record<string, unknown>), ...patch };
}

/** A contact as crm's events carry it (the internal shape: `name`), with `patch` over it. */
export function eventContact(patch: Record<string, unknown> = {}) {
  return { ...structuredClone(exampleContact), ...patch };
}

/** What a receiver got: the Standard Webhooks headers, the raw body and when it arrived. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  /** The W3C `traceparent` header, when the request carried one. */
  traceparent?: string;
  body: string;
  json: { type: string; timestamp: string; data: any };
  path: string;
  at: number;
}

/** How the receiver answers the next request to a path: a status (and body), or a callback. */
export type Reply = { status: number; body?: string; delayMs?: number };

/**
 * A webhook receiver on 127.0.0.1, the only address tests deliver to. `replies` per path are used in
 * order (then 200); every request is recorded with its headers and raw body, and every TCP connection
 * is counted, so a test can prove that nothing connected at all.
 */
export async function startReceiver() {
  const received: Received[] = [];
  const replies = new Map<string, Reply[]>();
  let connections = 0;
  let down = false;
  // Requests being answered right now, and the most seen at once, per path.
  const open = new Map<string, number>();
  const peak = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const reqPath = req.url ?? '/';
    open.set(reqPath, (open.get(reqPath) ?? 0) + 1);
    peak.set(reqPath, Math.max(peak.get(reqPath) ?? 0, open.get(reqPath)!));
    res.on('close', () => open.set(reqPath, open.get(reqPath)! - 1));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        traceparent: typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined,
        body,
        json: safeJson(body),
        path,
        at: Date.now(),
      });
      const reply = down ? { status: 503, body: 'down' } : (replies.get(path)?.shift() ?? { status: 200, body: 'ok' });
      setTimeout(() => res.writeHead(reply.status).end(reply.body ?? ''), reply.delayMs ?? 0);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    received,
    /** Queue answers for the next requests to `path`. */
    reply(path: string, ...r: Reply[]) {
      replies.set(path, [...(replies.get(path) ?? []), ...r]);
    },
    get connections() {
      return connections;
    },
    /** While down, every request is answered 503. */
    setDown(value: boolean) {
      down = value;
    },
    at: (path: string) => received.filter((r) => r.path === path),
    /** The most requests to `path` that were being answered at the same time. */
    peakConcurrency: (path: string) => peak.get(path) ?? 0,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

function safeJson(text: string) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Standard Webhooks verification as a receiver does it: HMAC-SHA256 keyed by the base64-decoded part of
 * the `whsec_` secret over `id.timestamp.body`, compared with any `v1,` signature in the header.
 */
export function verifySignature(secret: string, r: Pick<Received, 'id' | 'timestamp' | 'signature' | 'body'>): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${r.id}.${r.timestamp}.${r.body}`).digest('base64');
  return r.signature.split(' ').some((s) => s === `v1,${expected}`);
}

/**
 * A tiny event producer, as any service is one: its own database with the outbox, and a relay publishing
 * to the stack's exchange. Events are committed in a transaction and published after commit, exactly
 * the path a real service's events take.
 */
export async function startProducer(exchange: string) {
  const db: TestDatabase = await createTestDatabase('producer');
  const pool: Pool = testPool(db.url, 4);
  await installEventTables(pool);
  const relay = new OutboxRelay({ pool, amqpUrl: infra.amqpUrl, exchange, logger: createLogger('producer', 'silent') });
  await relay.start();
  return {
    // Any type and data, as a test needs them (data a schema refuses included): the run-time check still applies.
    async emit(type: string, orgId: string, data: unknown): Promise<EventEnvelope> {
      return withTransaction(pool, (tx) => enqueueEvent(tx, { type, orgId, data } as NewEvent));
    },
    /** Several events committed in one transaction (published together, consumed in one batch as a rule). */
    async emitMany(events: { type: string; orgId: string; data: unknown }[]): Promise<EventEnvelope[]> {
      return withTransaction(pool, async (tx) => {
        const out: EventEnvelope[] = [];
        for (const e of events) out.push(await enqueueEvent(tx, e as NewEvent));
        return out;
      });
    },
    async close() {
      await relay.stop();
      await pool.end();
      await db.drop();
    },
  };
}

/** Watch events on the stack's exchange (e.g. `webhook.disabled`) through a temporary queue. */
export async function watchEvents(exchange: string, pattern: string) {
  const connection: ChannelModel = await connect(infra.amqpUrl);
  const channel: Channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue(uniqueName('t_watch'), { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, exchange, pattern);
  const seen: EventEnvelope[] = [];
  await channel.consume(queue, (m) => m && seen.push(JSON.parse(m.content.toString())), { noAck: true });
  return { seen, close: () => connection.close().catch(() => undefined) };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
