import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { createLogger, type Logger } from '@crm/logger';
import {
  type ChatnetProfile,
  CLIENT_PATH,
  type DisconnectInfo,
  LIVE_ACTIONS,
  type LiveAction,
  reviveMessage,
  reviveReaction,
  reviveReceipt,
  reviveRecall,
  SandboxNetwork,
} from '../drivers';
import { connectRedis } from '../redis';
import { serveClient } from './client-link';
import type { SandboxNetworkConfig } from './config';
import { ContactMessage, deliverOrHold, networkMessage } from './contact-message';

export { loadSandboxConfig as loadConfig } from './config';

/** Request bodies larger than this are refused (text messages and control payloads only). */
const BODY_LIMIT = 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Array<{ field: string; message: string }>,
  ) {
    super(message);
  }
}

/**
 * The sandbox chat network as its own process. Its sides:
 * - clients (connectors, CHATNET_SANDBOX_URL): a WebSocket per session at /client (sandbox-wire.ts);
 * - the outside world: `POST /accounts/:id/inbound`, a contact writing to an account (benchmarks push here, so the
 *   gateway is not on the inbound path, as it is not for a real network);
 * - the connector's sandbox control routes, for what touches a live connection: `POST /live/:id/:action`.
 * The rest of the network's state (sent messages, friends, directory) is read by the control routes in Redis, under
 * the same prefix.
 */
export async function startSandboxNetwork(
  config: SandboxNetworkConfig,
  log: Logger = createLogger('chatnet-sandbox', config.LOG_LEVEL),
): Promise<{ port: number; stop(): Promise<void> }> {
  const redis = await connectRedis(config.REDIS_URL, log);
  const network = new SandboxNetwork(redis, config.REDIS_PREFIX);
  const net: Network = { network, known: new Set() };
  // A send carries its files in the frame (base64): up to 10 files of 25 MB each by default, well within this.
  const clients = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 512 * 1024 * 1024 });
  clients.on('connection', (ws) => serveClient(ws, network, log));

  const server = http.createServer((req, res) => {
    route(net, req)
      .then((body) => answer(res, 200, body))
      .catch((err: Error) => {
        if (err instanceof HttpError) return answer(res, err.status, { error: { code: err.code, message: err.message, details: err.details } });
        log.error({ err, url: req.url }, 'sandbox network request failed');
        answer(res, 500, { error: { code: 'internal', message: err.message } });
      });
  });
  server.keepAliveTimeout = 65_000;
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== CLIENT_PATH) return void socket.destroy();
    clients.handleUpgrade(req, socket, head, (ws) => clients.emit('connection', ws, req));
  });
  await new Promise<void>((resolve) => server.listen(config.SANDBOX_PORT, config.SANDBOX_HOST, resolve));
  const port = (server.address() as AddressInfo).port;
  log.info({ port, host: config.SANDBOX_HOST }, 'sandbox network listening');

  const stop = async () => {
    // Clients see their sockets close and reconnect (to this network's next start) from their stored sessions.
    for (const ws of clients.clients) ws.close(1001);
    clients.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    network.close();
    await redis.close();
  };
  return { port, stop };
}

export const start = startSandboxNetwork;

async function route(net: Network, req: http.IncomingMessage): Promise<unknown> {
  const path = new URL(req.url ?? '/', 'http://x').pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (req.method === 'GET' && path.length === 1 && path[0] === 'healthz') return { ok: true };
  if (req.method === 'POST' && path.length === 3 && path[0] === 'accounts' && path[2] === 'inbound')
    return contactWrites(net, path[1], await body(req));
  if (req.method === 'POST' && path.length === 3 && path[0] === 'live' && (LIVE_ACTIONS as readonly string[]).includes(path[2]))
    return { live: await live(net.network, path[1], path[2] as LiveAction, await body(req)) };
  throw new HttpError(404, 'not_found', 'No such route');
}

/** The network, and the accounts known to have logged in (once known, always known: no Redis read per message). */
interface Network {
  network: SandboxNetwork;
  known: Set<string>;
}

async function contactWrites({ network, known }: Network, accountId: string, raw: unknown) {
  const parsed = ContactMessage.safeParse(raw);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
    throw new HttpError(400, 'invalid_argument', `${details[0].field} ${details[0].message}`, details);
  }
  if (!known.has(accountId) && !(await network.knowsAccount(accountId)))
    throw new HttpError(404, 'not_found', 'No account of this network has that id (log it in first)');
  const message = await networkMessage(network, accountId, parsed.data);
  if (!message)
    throw new HttpError(400, 'invalid_argument', 'quoteChatnetMessageId must be a message of this thread', [
      { field: 'quoteChatnetMessageId', message: 'must be a message of this thread' },
    ]);
  known.add(accountId);
  const delivered = await deliverOrHold(network, accountId, message);
  const { chatnetMessageId, cliMsgId, threadId } = message;
  return { accountId, chatnetMessageId, cliMsgId, threadId, sentAt: message.sentAt.toISOString(), held: !delivered };
}

/** What the connector's control routes ask of a live connection (or the offline store). */
function live(network: SandboxNetwork, accountId: string, action: LiveAction, b: any): Promise<boolean> {
  switch (action) {
    case 'scan':
      return network.scan(accountId, b as ChatnetProfile);
    case 'message':
      return network.deliver(accountId, reviveMessage(b));
    case 'seen':
      return network.seen(accountId, reviveReceipt(b));
    case 'recall':
      return network.recalled(accountId, reviveRecall(b));
    case 'react':
      return network.reacted(accountId, reviveReaction(b));
    case 'friend_accepted':
      return network.friendAccepted(accountId, String(b.uid), typeof b.traceparent === 'string' ? b.traceparent : undefined);
    case 'drop':
      return network.drop(accountId, b as DisconnectInfo);
    case 'hold':
      return network.hold(accountId, reviveMessage(b)).then(() => true);
  }
}

function body(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > BODY_LIMIT) {
        reject(new HttpError(413, 'payload_too_large', `bodies are at most ${BODY_LIMIT} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(size ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {});
      } catch {
        reject(new HttpError(400, 'invalid_json', 'The body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
