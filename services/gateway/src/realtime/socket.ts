import type http from 'node:http';
import { Server } from 'socket.io';
import { createAdapter } from '@socket.io/redis-adapter';
import { createTokenVerifier } from '@crm/auth';
import { EventConsumer, isEventOf, type EventEnvelope } from '@crm/events';
import { ROLES, roleRank } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { Clients } from '../clients';
import type { GatewayConfig } from '../config';
import type { AuthSync } from '../http/auth-sync';
import type { TokenRevocations } from '../http/token-revocations';
import { closeRedis, duplicateRedis, type Redis } from '../redis';
import { adapterPublisher, adapterSubscriber } from './adapter-client';
import { sessionPeers, type SessionPeers } from './session-peers';
import { InboxAudience } from './inbox-audience';
import { PresenceReporter } from './presence-reporter';
import { joinThrottle, originAllowed, SocketsPerUser } from './socket-admission';
import { startSessionGuard } from './session-guard';
import { CONVERSATION_TYPES, emitRoute, MESSAGE_TYPES, tagged, type CrmServer, type CrmSocket, type SocketRoute } from './socket-events';

/**
 * socket.io for live updates: the only place that emits to clients. Clients authenticate with the JWT in
 * `handshake.auth.token`, are put in rooms `org:<orgId>` and `user:<userId>`, and may `join` the room
 * `account:<id>` of a chat-network account of their organization (QR codes during login go there).
 *
 * Services reach clients through events: every gateway instance takes every event into a queue of its own (exclusive,
 * gone with its connection) and emits it to its own sockets. A push is worth nothing later, so there is no durable,
 * replicated queue to keep it, and no Redis publish per push (the Redis adapter still carries what concerns every
 * instance's sockets: disconnecting a user's sockets, counting them). The shared durable queue of earlier versions is
 * unbound and drained (see `retired` below).
 *
 * A socket lives only as long as its token's rights: see session-guard.ts. Conversation events reach only the
 * sockets of users who may see the conversation under the org's inbox visibility: see inbox-audience.ts.
 */
export interface Realtime {
  io: CrmServer;
  /** Sessions passed on between gateway instances: announce() once listening (its port known). */
  peers: SessionPeers;
  stop(): Promise<void>;
}

interface Deps {
  config: GatewayConfig;
  redis: Redis;
  sync: AuthSync;
  tokens: TokenRevocations;
  clients: Clients;
  log: Logger;
  metrics?: Metrics;
}

/** The events that reach sockets (the realtime queue is bound to them, and to the rest of chatnet_account.*). */
const ROUTED = [
  'chatnet_account.qr',
  'chatnet_account.connected',
  'chatnet_account.disconnected',
  ...MESSAGE_TYPES,
  ...CONVERSATION_TYPES,
  'notification.created',
  'user.availability_changed',
] as const;

/**
 * Event type → how it reaches sockets; conversation events are narrowed by `audience` (inbox visibility). The data
 * is what its schema parsed (the consumer's parseData), so the payload holds only the fields the schema describes.
 */
export async function routeEvent(e: EventEnvelope, audience: InboxAudience): Promise<SocketRoute | undefined> {
  if (!isEventOf(e, ...ROUTED)) return undefined;
  const org = `org:${e.orgId}`;
  switch (e.type) {
    case 'chatnet_account.qr':
      return {
        rooms: [`account:${e.data.accountId}`],
        event: 'qr',
        payload: { accountId: e.data.accountId, qr: e.data.qr, expiresAt: e.data.expiresAt },
      };
    case 'chatnet_account.connected':
    case 'chatnet_account.disconnected':
      return {
        rooms: [`account:${e.data.accountId}`, org],
        event: 'account_status',
        payload: { status: e.type === 'chatnet_account.connected' ? 'connected' : 'disconnected', ...e.data },
      };
    case 'message.received':
    case 'message.sent':
    case 'message.seen':
    case 'message.recalled':
    case 'message.reaction':
      return { rooms: await audience.roomsFor(e.orgId, e.data), event: 'message', payload: tagged(e) };
    case 'conversation.assigned': {
      // Whoever may see it now, and the previous assignee, whose inbox must drop it.
      const rooms = await audience.roomsFor(e.orgId, e.data);
      if (e.data.previousAssigneeId && !rooms.includes(org)) rooms.push(`user:${e.data.previousAssigneeId}`);
      return { rooms, event: 'conversation', payload: tagged(e) };
    }
    case 'conversation.status_changed':
    case 'conversation.priority_changed':
    case 'conversation.csat_received':
      return { rooms: await audience.roomsFor(e.orgId, e.data), event: 'conversation', payload: tagged(e) };
    case 'notification.created': {
      // A notification for one user, for the roles at or above `audienceRole`, or for the whole org.
      const { userId, audienceRole } = e.data;
      const rooms = userId
        ? [`user:${userId}`]
        : audienceRole
          ? ROLES.filter((r) => roleRank(r) >= roleRank(audienceRole)).map((r) => `${org}:role:${r}`)
          : [org];
      return { rooms, event: 'notification', payload: e.data };
    }
    case 'user.availability_changed':
      // Teammates see who is available: the whole org, the effective status only.
      return { rooms: [org], event: 'user.availability', payload: { userId: e.data.userId, status: e.data.status } };
  }
}

export async function startRealtime(server: http.Server, deps: Deps): Promise<Realtime> {
  const { config, redis, clients, log } = deps;
  const verify = createTokenVerifier(config.JWT_SECRET);
  // The adapter publishes on one connection and subscribes on another (node-redis clients).
  const pub = duplicateRedis(redis, log, 'socket.io pub');
  const sub = duplicateRedis(redis, log, 'socket.io sub');
  await Promise.all([pub.connect(), sub.connect()]);
  const corsOrigins = config.CORS_ORIGINS.trim();
  const io: CrmServer = new Server(server, {
    cors: { origin: corsOrigins === '*' ? true : corsOrigins ? corsOrigins.split(',').map((o) => o.trim()) : false },
    // Browsers apply no CORS to WebSockets: the Origin is checked here for every transport.
    allowRequest: (req, cb) => cb(originAllowed(req, corsOrigins) ? null : 'origin not allowed', originAllowed(req, corsOrigins)),
    serveClient: false,
  });
  // Counts each user's live sockets across the gateways; identity hears when the first connects and the last goes.
  const presence = new PresenceReporter(clients, log);
  const perUser = new SocketsPerUser(redis, config.REDIS_PREFIX, config.SOCKETS_PER_USER, log, (change) => presence.report(change));
  io.adapter(createAdapter(adapterPublisher(pub, log), adapterSubscriber(sub, log), { key: `${config.REDIS_PREFIX}socket.io` }));
  // Before the first handshake: session ids name this instance (realtime/session-peers.ts).
  const peers = sessionPeers(io.engine, { redis, prefix: config.REDIS_PREFIX, peerHost: config.GATEWAY_PEER_HOST, log, metrics: deps.metrics });
  const guard = await startSessionGuard({
    io,
    redis,
    sync: deps.sync,
    tokens: deps.tokens,
    prefix: config.REDIS_PREFIX,
    resyncMs: config.SOCKET_SESSION_RESYNC_MS,
    log,
  });
  const audience = new InboxAudience(
    (orgId) => clients.messaging.GetInboxAudience({}, { orgId, userId: '', role: '', requestId: `realtime-${orgId}` }),
    config.SOCKET_AUDIENCE_CACHE_MS,
    log,
  );

  // A refused handshake reaches the client as connect_error "unauthorized"; `err.data.reason` says why when known.
  // socket.io ignores a middleware's promise; every path below ends in next(), a failed check included.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  io.use(async (socket, next) => {
    const token = socket.handshake.auth?.token;
    const claims = typeof token === 'string' ? verify(token) : undefined;
    if (!claims) return next(new Error('unauthorized'));
    try {
      const reason = await guard.check(claims);
      if (reason) return next(Object.assign(new Error('unauthorized'), { data: { reason } }));
    } catch (err) {
      log.warn({ err }, 'socket handshake: revocation check failed');
      return next(new Error('unavailable'));
    }
    try {
      if (!(await perUser.admit(claims.sub, claims.org, socket.id)))
        return next(Object.assign(new Error('too_many_connections'), { data: { reason: 'too_many_connections', limit: config.SOCKETS_PER_USER } }));
    } catch (err) {
      log.warn({ err }, 'socket handshake: connection count unavailable');
      return next(new Error('unavailable'));
    }
    socket.data.claims = claims;
    next();
  });

  io.on('connection', (socket: CrmSocket) => {
    const claims = socket.data.claims;
    guard.watch(socket);
    socket.on('disconnect', () => void perUser.release(socket.id));
    const mayJoin = joinThrottle(config.SOCKET_JOINS_PER_10S, 10_000);
    // The Redis adapter keeps rooms in memory: join is synchronous, nothing to wait for.
    void socket.join([`org:${claims.org}`, `user:${claims.sub}`, `org:${claims.org}:role:${claims.role}`]);
    // Join an account's room only when the account belongs to the caller's organization. A client may join
    // after calling login (the spec allows either order), so the code a login is showing now is sent to this
    // socket at once (`qr`, as the event would carry it); later codes arrive through the room.
    socket.on('join', async (room: unknown, ack?: (r: { ok: boolean; error?: string }) => void) => {
      const reply = typeof ack === 'function' ? ack : () => undefined;
      if (!mayJoin()) return reply({ ok: false, error: 'too many joins; slow down' });
      const m = typeof room === 'string' ? /^account:([0-9a-f-]{36})$/i.exec(room) : null;
      if (!m) return reply({ ok: false, error: 'room must be account:<id>' });
      let pending: { qr?: string; expiresAt?: string };
      try {
        pending = await clients['chatnet-connector'].GetPendingQr(
          { id: m[1] },
          { orgId: claims.org, userId: claims.sub, role: claims.role, requestId: socket.id },
        );
      } catch {
        return reply({ ok: false, error: 'account not found' });
      }
      await socket.join(room as string);
      if (pending.qr) socket.emit('qr', { accountId: m[1], qr: pending.qr, expiresAt: pending.expiresAt ?? null });
      reply({ ok: true });
    });
    socket.on('leave', async (room: unknown, ack?: (r: { ok: boolean }) => void) => {
      if (typeof room === 'string' && room.startsWith('account:')) await socket.leave(room);
      if (typeof ack === 'function') ack({ ok: true });
    });
  });

  // Every event is routed before any is emitted: should routing fail (the audience cannot be read), the consumer
  // retries the batch event by event, and nothing of it has reached a socket twice.
  const emitBatch = async (events: EventEnvelope[]) => {
    const routes = [];
    for (const e of events) routes.push(await routeEvent(e, audience));
    for (const route of routes) if (route) emitRoute(io, route);
  };
  // What both consumers of the routed events share: the broker, the bindings, and batches emitted in order and acked
  // with one frame (nothing is stored, so no pool), their data parsed by its schema.
  const routed = {
    amqpUrl: config.AMQP_URL,
    amqpUserPrefix: config.AMQP_USER_PREFIX,
    exchange: config.EVENTS_EXCHANGE,
    // Every routed type, and the rest of chatnet_account.* (one wildcard rather than each account event).
    bindings: ['chatnet_account.*', ...ROUTED.filter((t) => !t.startsWith('chatnet_account.'))],
    logger: log,
    metrics: deps.metrics,
    parseData: true,
    batchSize: 100,
    batchHandler: emitBatch,
  };
  // Data that does not fit its schema is dropped, logged with the fields named and counted
  // (amqp_messages_consumed_total, outcome dropped): an exclusive queue has no dead-letter queue.
  const consumer = new EventConsumer({ ...routed, queue: `${config.EVENTS_EXCHANGE}.gateway.sockets`, exclusive: true });
  // The queue every instance shared before (durable, replicated, each push then published to Redis for the other
  // instances): its bindings removed at every connect, and what is left in it pushed to this instance's sockets
  // (packages/events README, "Retiring a queue"). maxAttempts as it was declared with, so its retry queue matches.
  // While instances of the earlier version still run, a socket on a new instance may get an event twice.
  const retired = new EventConsumer({ ...routed, queue: `${config.EVENTS_EXCHANGE}.gateway.realtime`, draining: true, maxAttempts: 2 });
  // Every instance holds its own audience cache, so every instance hears the changes (its own exclusive queue).
  const audienceChanges = new EventConsumer({
    amqpUrl: config.AMQP_URL,
    amqpUserPrefix: config.AMQP_USER_PREFIX,
    exchange: config.EVENTS_EXCHANGE,
    queue: `${config.EVENTS_EXCHANGE}.gateway.inbox-audience`,
    bindings: ['inbox_settings.updated', 'chatnet_account.assignment_updated'],
    exclusive: true,
    logger: log,
    metrics: deps.metrics,
    // No parseData: only the org of the change is read, never its data.
    handler: async (e) => audience.invalidate(e.orgId),
  });
  await audienceChanges.start();
  await consumer.start();
  // After the new queue is bound, so nothing published from now on is only in the old one.
  await retired.start();

  return {
    io,
    peers,
    async stop() {
      // First, so peers stop passing this instance's sessions on to it (they answer them as unknown: clients reconnect).
      await peers.withdraw();
      await retired.stop();
      await consumer.stop();
      await audienceChanges.stop();
      await guard.stop();
      // The callback, not close()'s promise, waits for the HTTP server to close.
      await new Promise<void>((resolve) => void io.close(() => resolve()));
      // The sockets closed above are released and their users' last disconnects reported before Redis and the
      // clients close: identity starts their offline window (a client reconnecting to another gateway ends it).
      await perUser.stop();
      await presence.stop();
      await closeRedis(pub);
      await closeRedis(sub);
    },
  };
}
