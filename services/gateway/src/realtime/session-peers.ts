import { randomBytes } from 'node:crypto';
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { createProxyMiddleware } from 'http-proxy-middleware';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { Redis } from '../redis';

/**
 * socket.io sessions across gateway instances behind a balancer that is not sticky.
 *
 * A client starts on HTTP long-polling: its session lives in the instance that answered the handshake, and each of its
 * later requests (the polls, the posts, the upgrade to WebSocket) must reach that instance. Kubernetes' Service, and
 * most ingress controllers unless told otherwise, send each connection to any replica, and deploy/k8s runs two
 * gateways at least: without this, a client's second request went to the other instance half the time and was refused
 * ("Session ID unknown"), and the client never connected.
 *
 * Each instance names the sessions it makes after itself (`<instance>.<random>`) and, with GATEWAY_PEER_HOST set,
 * writes the address its peers reach it at into one Redis hash, taken out again when it stops. An instance that
 * receives a request for another's session passes it on to that address as it came, once (a request that arrives
 * passed on is never passed again), WebSocket upgrades included; the owner checks it as it checks its own. A session
 * whose instance is gone, or unknown, is answered as engine.io answers an unknown session (400), so the client starts
 * a new one. Only requests that carry another instance's session are looked up: handshakes and WebSocket traffic after
 * the upgrade never are.
 */

/** The Redis hash of instance → address (`http://host:port`) under the deployment's prefix. */
export const peersKey = (prefix: string) => `${prefix}gateway:peers`;
/** Set on a request passed on to its session's instance: it is answered there, never passed on again. */
export const FORWARDED_HEADER = 'x-crm-peer-forwarded';

/** A session id this code made: the instance's 8 characters, a dot, 20 random ones (base64url). */
const SESSION_ID = /^([A-Za-z0-9_-]{8})\.[A-Za-z0-9_-]{20}$/;
/** Addresses of instances seen, kept (an instance's address never changes while it lives); cleared when this full. */
const MAX_KNOWN_PEERS = 1024;

/** What engine.io exposes of itself here: its session ids and its middleware (engine.io's `use`, run for upgrades too). */
interface Engine {
  generateId: (req: IncomingMessage) => string | PromiseLike<string>;
  use(fn: (req: IncomingMessage, res: ServerResponse, next: (err?: Error) => void) => void): void;
}

export interface SessionPeers {
  /** This instance's name: the prefix of every session id it makes. */
  readonly instance: string;
  /** Write this instance's address (GATEWAY_PEER_HOST and the port it listens on) for its peers; a no-op without it. */
  announce(port: number): Promise<void>;
  /** Take the address out (at stop): peers answer this instance's sessions as unknown from then on. */
  withdraw(): Promise<void>;
}

export interface SessionPeerOptions {
  redis: Redis;
  prefix: string;
  /** GATEWAY_PEER_HOST: where the other instances reach this one; empty, requests are never passed on. */
  peerHost: string;
  log: Logger;
  metrics?: Metrics;
}

export function sessionPeers(engine: Engine, opts: SessionPeerOptions): SessionPeers {
  const instance = randomBytes(6).toString('base64url');
  const key = peersKey(opts.prefix);
  engine.generateId = () => `${instance}.${randomBytes(15).toString('base64url')}`;
  const forwards = opts.metrics?.counter(
    'socketio_peer_forwards_total',
    "socket.io requests for another gateway instance's session, by what became of them",
    ['outcome'],
  );
  if (!opts.peerHost) return { instance, announce: async () => undefined, withdraw: async () => undefined };
  let announced = false;

  const known = new Map<string, string>();
  const addressOf = async (peer: string): Promise<string | undefined> => {
    const cached = known.get(peer);
    if (cached) return cached;
    const url = (await opts.redis.hGet(key, peer)) ?? undefined;
    if (url) {
      if (known.size >= MAX_KNOWN_PEERS) known.clear();
      known.set(peer, url);
    }
    return url;
  };

  /**
   * Each passed-on request's target, found before it is handed to the proxy (which asks for it by request), and
   * engine.io's `next`: a request that cannot be passed on goes back to engine.io, which answers it as a session it
   * does not hold (400 "Session ID unknown"; an upgrade refused), exactly as it answers its own.
   */
  const passing = new WeakMap<IncomingMessage, { url: string; answerHere: () => void }>();
  const proxy = createProxyMiddleware<IncomingMessage, ServerResponse>({
    router: (req) => passing.get(req)?.url,
    // The owner sees the request as the client sent it (Host and Origin: its origin check is the same).
    changeOrigin: false,
    xfwd: false,
    on: {
      proxyReq: (proxyReq) => proxyReq.setHeader(FORWARDED_HEADER, instance),
      proxyReqWs: (proxyReq) => proxyReq.setHeader(FORWARDED_HEADER, instance),
      // Counted once the owner answered (a WebSocket: opened), so a peer that is gone counts as unreachable only.
      proxyRes: () => forwards?.inc({ outcome: 'forwarded' }),
      open: () => forwards?.inc({ outcome: 'forwarded' }),
      error: (err, req, res) => {
        forwards?.inc({ outcome: 'unreachable' });
        const pass = passing.get(req as IncomingMessage);
        opts.log.warn({ err, peer: pass?.url }, "socket.io: a session's gateway instance is unreachable");
        // An upgrade is refused now: http-proxy ends its socket as soon as this returns, before engine.io could answer.
        if (res instanceof ServerResponse) pass?.answerHere();
        else refuseUpgrade(res as Socket);
      },
    },
  });

  engine.use((req, res, next) => {
    const owner = ownerOf(req, instance);
    if (!owner) return next();
    addressOf(owner).then(
      (url) => {
        if (!url) {
          forwards?.inc({ outcome: 'unknown_instance' });
          return next();
        }
        passing.set(req, { url, answerHere: () => next() });
        if (res instanceof ServerResponse) return void proxy(req, res, () => next());
        // An upgrade: engine.io hands its middleware a stand-in response that holds the connection's socket. A WebSocket
        // client sends nothing before the server's 101, so the upgrade's head is empty.
        const socket = (res as unknown as { socket?: Socket }).socket;
        if (socket && proxy.upgrade) proxy.upgrade(req, socket, Buffer.alloc(0));
        else next();
      },
      (err: unknown) => {
        // Redis unavailable: the request is answered here, as a session this instance does not know.
        opts.log.warn({ err }, "socket.io: could not look up a session's gateway instance");
        forwards?.inc({ outcome: 'lookup_failed' });
        next();
      },
    );
  });

  return {
    instance,
    async announce(port) {
      const host = opts.peerHost.includes(':') ? `[${opts.peerHost}]` : opts.peerHost;
      await opts.redis.hSet(key, instance, `http://${host}:${port}`);
      announced = true;
    },
    async withdraw() {
      if (!announced) return;
      announced = false;
      await opts.redis.hDel(key, instance).catch((err: unknown) => opts.log.warn({ err }, 'socket.io: could not withdraw this instance'));
    },
  };
}

/** The instance that holds the request's session, when it is another one's and the request was not passed on already. */
function ownerOf(req: IncomingMessage, self: string): string | undefined {
  if (req.headers[FORWARDED_HEADER] !== undefined) return undefined;
  const sid = (req as IncomingMessage & { _query?: Record<string, string> })._query?.sid;
  const m = typeof sid === 'string' ? SESSION_ID.exec(sid) : null;
  return m && m[1] !== self ? m[1] : undefined;
}

/** What engine.io answers an upgrade for a session it does not hold. */
function refuseUpgrade(socket: Socket): void {
  if (socket.writable && socket.bytesWritten === 0) socket.write('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  socket.destroy();
}
