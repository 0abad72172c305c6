import type WebSocket from 'ws';
import type { Logger } from '@crm/logger';
import {
  type ChatnetSession,
  type ClientFrame,
  fileFromWire,
  FriendRequiredError,
  LoginFailedError,
  type NetworkFrame,
  type NewsKind,
  type OutboundMessage,
  type ReadMessage,
  SandboxDriver,
  type SandboxNetwork,
  SessionExpiredError,
  type SessionHandlers,
  type ThreadType,
  type WireFile,
} from '../drivers';

/**
 * One client connection to the standalone network (sandbox-wire.ts): the client logs in or restores, then the network's
 * session for it (the in-process sandbox's SandboxSession, so the rules are one) pushes its news over the socket and
 * waits for each acknowledgement, exactly as it waits for the connector's handlers in-process: a kept message leaves
 * the network's store only once acknowledged, and a push answers its caller only then.
 */
export function serveClient(ws: WebSocket, network: SandboxNetwork, log: Logger): void {
  let nextPush = 0;
  const pushes = new Map<number, { resolve(): void; reject(err: Error): void }>();
  const abort = new AbortController();
  let session: ChatnetSession | undefined;
  let started = false;

  const send = (frame: NetworkFrame) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  };
  const push = (kind: NewsKind, data: unknown) =>
    new Promise<void>((resolve, reject) => {
      if (ws.readyState !== ws.OPEN) return reject(new Error('the client connection is closed'));
      const id = ++nextPush;
      pushes.set(id, { resolve, reject });
      send({ t: 'news', id, kind, data });
    });

  const handlers: SessionHandlers = {
    onMessage: (m) => push('message', m),
    onSeen: (r) => push('seen', r),
    onRecall: (r) => push('recall', r),
    onReaction: (r) => push('reaction', r),
    onFriendRequestAccepted: (uid, traceparent) => push('friend_accepted', { uid, traceparent }),
    onFriendsChanged: () => void push('friends_changed', {}).catch(() => undefined),
    // The sandbox's messages name files already stored by whoever pushed them; it has none of its own to hand over.
    storeFile: () => Promise.reject(new Error('the sandbox network hands over no files of its own')),
    onDisconnect: (info) => {
      send({ t: 'disconnect', info });
      ws.close(1000);
    },
  };

  const begin = async (frame: Extract<ClientFrame, { t: 'login' | 'restore' }>) => {
    try {
      const s =
        frame.t === 'login'
          ? await new SandboxDriver(network, frame.qrTtlMs, frame.maxRefreshes).loginWithQr({
              accountId: frame.accountId,
              handlers,
              signal: abort.signal,
              onQr: async (qr) => send({ t: 'qr', code: qr.code ?? '', expiresAt: qr.expiresAt.toISOString() }),
            })
          : await new SandboxDriver(network, 0, 0).restoreSession(frame.sessionData, { accountId: frame.accountId, handlers });
      if (ws.readyState !== ws.OPEN) return void (await s.disconnect());
      session = s;
      await network.knowAccount(frame.accountId, s.profile.uid);
      send({ t: 'session', sessionData: s.sessionData, profile: s.profile });
    } catch (err) {
      if (err instanceof SessionExpiredError) send({ t: 'refused', kind: 'session_expired', message: err.message });
      else if (err instanceof LoginFailedError) send({ t: 'refused', kind: 'login_failed', reason: err.reason, message: err.message });
      else {
        log.warn({ err, accountId: frame.accountId }, 'sandbox client could not start a session');
        send({ t: 'refused', kind: 'login_failed', reason: 'network_error', message: 'the network failed' });
      }
      ws.close(1000);
    }
  };

  const call = async (frame: Extract<ClientFrame, { t: 'call' }>) => {
    try {
      if (!session) throw new Error('no session on this connection');
      const value = await runCall(session, frame.method, frame.args);
      send({ t: 'result', id: frame.id, value });
    } catch (err) {
      send({
        t: 'error',
        id: frame.id,
        message: (err as Error).message,
        ...(err instanceof FriendRequiredError ? { kind: 'friend_required' as const } : {}),
      });
    }
  };

  ws.on('message', (raw) => {
    let frame: ClientFrame;
    try {
      frame = JSON.parse(String(raw)) as ClientFrame;
    } catch {
      return void ws.close(1003, 'frames are JSON');
    }
    if (frame.t === 'login' || frame.t === 'restore') {
      if (started) return void ws.close(1008, 'one session per connection');
      started = true;
      void begin(frame);
    } else if (frame.t === 'call') void call(frame);
    else {
      const p = pushes.get(frame.id);
      pushes.delete(frame.id);
      if (frame.t === 'ack') p?.resolve();
      else p?.reject(new Error(`the client refused it: ${frame.message}`));
    }
  });
  ws.on('close', () => {
    abort.abort();
    for (const p of pushes.values()) p.reject(new Error('the client connection closed before it acknowledged'));
    pushes.clear();
    void session?.disconnect();
  });
  ws.on('error', (err) => log.debug({ err }, 'sandbox client socket error'));
}

/** A client's call on its session, its arguments back from the wire (dates, files). */
async function runCall(session: ChatnetSession, method: string, args: any[]): Promise<unknown> {
  switch (method) {
    case 'sendMessage': {
      const m = args[0] as Omit<OutboundMessage, 'attachments'> & { attachments?: WireFile[] };
      return session.sendMessage({ ...m, attachments: (m.attachments ?? []).map(fileFromWire) });
    }
    case 'listFriends':
      return session.listFriends();
    case 'findUser':
      return session.findUser(args[0]);
    case 'sendFriendRequest':
      return session.sendFriendRequest(String(args[0]), String(args[1]));
    case 'markSeen': {
      const messages = (args[2] as Array<Omit<ReadMessage, 'sentAt'> & { sentAt: string }>).map((m) => ({ ...m, sentAt: new Date(m.sentAt) }));
      return session.markSeen(String(args[0]), args[1] as ThreadType, messages);
    }
    case 'recall':
      return session.recall(args[0]);
    case 'react':
      return session.react(args[0], String(args[1]));
    default:
      throw new Error(`no such call: ${method}`);
  }
}
