import WebSocket from 'ws';
import {
  ChatnetDriver,
  ChatnetProfile,
  ChatnetSession,
  ConnectOptions,
  DisconnectInfo,
  Friend,
  FriendRequiredError,
  LoginFailedError,
  MessageRef,
  NetworkUser,
  OutboundMessage,
  QrLoginOptions,
  ReadMessage,
  SessionExpiredError,
  SessionHandlers,
  ThreadType,
  UserQuery,
} from './driver';
import {
  CLIENT_PATH,
  type CallMethod,
  type ClientFrame,
  type NetworkFrame,
  reviveMessage,
  reviveReaction,
  reviveReceipt,
  reviveRecall,
} from './sandbox-wire';

/** Opening the socket to the network fails after this (a restore counts as failed, and is retried). */
const OPEN_TIMEOUT_MS = 5_000;
/** A call the network has not answered within this fails. */
const CALL_TIMEOUT_MS = 15_000;

/**
 * The sandbox network run as its own process (src/sandbox-network), reached the way the real network is: each session
 * holds its own WebSocket to the network (sandbox-wire.ts), gets the network's news over it and acknowledges each once
 * the connector recorded it, and makes its calls over it. The network's state and rules are the in-process sandbox's
 * (SandboxNetwork, in the network process), so both modes behave alike.
 */
export class RemoteSandboxDriver implements ChatnetDriver {
  readonly name = 'sandbox';
  private readonly links = new Map<string, NetworkLink>();

  constructor(
    private readonly baseUrl: string,
    private readonly qrTtlMs: number,
    private readonly maxRefreshes: number,
  ) {}

  async loginWithQr(opts: QrLoginOptions): Promise<ChatnetSession> {
    if (opts.signal.aborted) throw new LoginFailedError('aborted', 'QR login was cancelled');
    let link: NetworkLink;
    try {
      link = await this.open(opts.accountId, opts.handlers);
    } catch (err) {
      throw new LoginFailedError('network_error', `The sandbox network could not be reached: ${(err as Error).message}`);
    }
    const onAbort = () => void link.close();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await link.start({ t: 'login', accountId: opts.accountId, qrTtlMs: this.qrTtlMs, maxRefreshes: this.maxRefreshes }, (qr) =>
        opts.onQr({ code: qr.code, expiresAt: new Date(qr.expiresAt) }),
      );
    } catch (err) {
      if (opts.signal.aborted) throw new LoginFailedError('aborted', 'QR login was cancelled');
      throw err;
    } finally {
      opts.signal.removeEventListener('abort', onAbort);
    }
  }

  async restoreSession(sessionData: string, opts: ConnectOptions): Promise<ChatnetSession> {
    const link = await this.open(opts.accountId, opts.handlers);
    return link.start({ t: 'restore', accountId: opts.accountId, sessionData });
  }

  /** Resolves once the account's connection (if any) ended and its handlers were told. */
  cutOf(accountId: string): Promise<void> {
    return this.links.get(accountId)?.ended ?? Promise.resolve();
  }

  async close(): Promise<void> {
    await Promise.all([...this.links.values()].map((l) => l.close()));
  }

  private forget(accountId: string, link: NetworkLink): void {
    if (this.links.get(accountId) === link) this.links.delete(accountId);
  }

  private async open(accountId: string, handlers: SessionHandlers): Promise<NetworkLink> {
    const url = new URL(CLIENT_PATH, this.baseUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const link = await NetworkLink.open(url.toString(), handlers);
    this.links.set(accountId, link);
    void link.ended.then(() => this.forget(accountId, link));
    return link;
  }
}

/** One socket to the network: its frames, its calls in flight, and the session's handlers for the network's news. */
class NetworkLink {
  private nextCall = 0;
  private readonly calls = new Map<number, { resolve(v: unknown): void; reject(err: Error): void; timer: NodeJS.Timeout }>();
  private starting?: {
    resolve(s: ChatnetSession): void;
    reject(err: Error): void;
    onQr?: (qr: { code: string; expiresAt: string }) => Promise<void>;
  };
  private session?: RemoteSandboxSession;
  /** We closed it (a disconnect from our side): the handlers are not told. */
  private closedByUs = false;
  private endedResolve!: () => void;
  readonly ended = new Promise<void>((resolve) => (this.endedResolve = resolve));

  private constructor(
    private readonly ws: WebSocket,
    private readonly handlers: SessionHandlers,
  ) {
    ws.on('message', (raw) => this.onFrame(JSON.parse(String(raw)) as NetworkFrame));
    ws.on('close', () => this.onClose());
    // A failed socket also closes; the error itself needs no more than that.
    ws.on('error', () => undefined);
  }

  static open(url: string, handlers: SessionHandlers): Promise<NetworkLink> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { handshakeTimeout: OPEN_TIMEOUT_MS, perMessageDeflate: false });
      const fail = (err: Error) => reject(err);
      ws.once('error', fail);
      ws.once('open', () => {
        ws.off('error', fail);
        resolve(new NetworkLink(ws, handlers));
      });
    });
  }

  /** Log in or restore; resolves with the live session once the network says so. */
  start(frame: ClientFrame, onQr?: (qr: { code: string; expiresAt: string }) => Promise<void>): Promise<ChatnetSession> {
    return new Promise((resolve, reject) => {
      this.starting = { resolve, reject, onQr };
      this.send(frame);
    });
  }

  call(method: CallMethod, args: unknown[]): Promise<unknown> {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error('sandbox connection is closed'));
    const id = ++this.nextCall;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(id);
        reject(new Error(`the sandbox network did not answer ${method} within ${CALL_TIMEOUT_MS} ms`));
      }, CALL_TIMEOUT_MS);
      this.calls.set(id, { resolve, reject, timer });
      this.send({ t: 'call', id, method, args });
    });
  }

  /** Close from our side; the handlers are not told. Resolves once the socket is closed. */
  close(): Promise<void> {
    this.closedByUs = true;
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    this.ws.close(1000);
    return this.ended;
  }

  private send(frame: ClientFrame): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  private onFrame(f: NetworkFrame): void {
    switch (f.t) {
      case 'qr':
        void this.starting?.onQr?.(f).catch((err: Error) => this.failStart(new LoginFailedError('network_error', err.message)));
        return;
      case 'session':
        this.session = new RemoteSandboxSession(this, f.profile, f.sessionData);
        this.starting?.resolve(this.session);
        this.starting = undefined;
        return;
      case 'refused':
        this.failStart(
          f.kind === 'session_expired'
            ? new SessionExpiredError(f.message)
            : new LoginFailedError((f.reason as LoginFailedError['reason'] | undefined) ?? 'network_error', f.message),
        );
        return;
      case 'news':
        // Handed to the pool in arrival order, as the in-process network hands them; acknowledged once recorded.
        this.deliver(f).then(
          () => this.send({ t: 'ack', id: f.id }),
          (err: Error) => this.send({ t: 'nack', id: f.id, message: err.message }),
        );
        return;
      case 'result':
      case 'error': {
        const call = this.calls.get(f.id);
        if (!call) return;
        this.calls.delete(f.id);
        clearTimeout(call.timer);
        if (f.t === 'result') call.resolve(f.value);
        else call.reject(f.kind === 'friend_required' ? new FriendRequiredError(f.message) : new Error(f.message));
        return;
      }
      case 'disconnect':
        this.end(f.info);
        this.ws.close(1000);
        return;
    }
  }

  private deliver(f: Extract<NetworkFrame, { t: 'news' }>): Promise<void> {
    const data = f.data as any;
    switch (f.kind) {
      case 'message':
        return this.handlers.onMessage(reviveMessage(data));
      case 'seen':
        return this.handlers.onSeen(reviveReceipt(data));
      case 'recall':
        return this.handlers.onRecall(reviveRecall(data));
      case 'reaction':
        return this.handlers.onReaction(reviveReaction(data));
      case 'friend_accepted':
        return this.handlers.onFriendRequestAccepted(String(data.uid), typeof data.traceparent === 'string' ? data.traceparent : undefined);
      case 'friends_changed':
        this.handlers.onFriendsChanged();
        return Promise.resolve();
    }
  }

  private failStart(err: Error): void {
    this.starting?.reject(err);
    this.starting = undefined;
    this.ws.close(1000);
  }

  /** The live session ended from the network's side: tell the pool once. */
  private end(info: DisconnectInfo): void {
    if (!this.session?.alive) return;
    this.session.alive = false;
    if (!this.closedByUs) this.handlers.onDisconnect(info);
  }

  private onClose(): void {
    for (const call of this.calls.values()) {
      clearTimeout(call.timer);
      call.reject(new Error('sandbox connection is closed'));
    }
    this.calls.clear();
    this.failStart(new LoginFailedError('network_error', 'The sandbox network closed the connection'));
    // Closed without a word from the network (it stopped, the socket broke): a lost connection, to restore.
    this.end({ reason: 'connection_lost', sessionExpired: false });
    this.endedResolve();
  }
}

class RemoteSandboxSession implements ChatnetSession {
  alive = true;

  constructor(
    private readonly link: NetworkLink,
    readonly profile: ChatnetProfile,
    readonly sessionData: string,
  ) {}

  isAlive(): boolean {
    return this.alive;
  }

  async sendMessage(m: OutboundMessage): Promise<{ chatnetMessageId: string; sentAt: Date }> {
    this.mustBeAlive();
    // The bytes go with the call (the sandbox network counts and hashes what it received); a real client uploads them.
    const attachments = [];
    for (const file of m.attachments ?? []) {
      const chunks: Buffer[] = [];
      for await (const chunk of await file.open()) chunks.push(chunk as Buffer);
      attachments.push({
        fileName: file.fileName,
        mimeType: file.mimeType,
        size: file.size,
        contentBase64: Buffer.concat(chunks).toString('base64'),
      });
    }
    const sent = (await this.link.call('sendMessage', [{ ...m, attachments }])) as { chatnetMessageId: string; sentAt: string };
    return { chatnetMessageId: sent.chatnetMessageId, sentAt: new Date(sent.sentAt) };
  }

  async listFriends(): Promise<Friend[]> {
    return (await this.link.call('listFriends', [])) as Friend[];
  }

  findUserByPhone(phone: string): Promise<NetworkUser | null> {
    return this.findUser({ phone });
  }

  async findUser(query: UserQuery): Promise<NetworkUser | null> {
    this.mustBeAlive();
    return (await this.link.call('findUser', [query])) as NetworkUser | null;
  }

  async sendFriendRequest(uid: string, message: string): Promise<void> {
    this.mustBeAlive();
    await this.link.call('sendFriendRequest', [uid, message]);
  }

  async markSeen(threadId: string, threadType: ThreadType, messages: ReadMessage[]): Promise<void> {
    this.mustBeAlive();
    await this.link.call('markSeen', [threadId, threadType, messages]);
  }

  async recall(message: MessageRef): Promise<void> {
    this.mustBeAlive();
    await this.link.call('recall', [message]);
  }

  async react(message: MessageRef, emoji: string): Promise<void> {
    this.mustBeAlive();
    await this.link.call('react', [message, emoji]);
  }

  async disconnect(): Promise<void> {
    this.alive = false;
    await this.link.close();
  }

  private mustBeAlive(): void {
    if (!this.alive) throw new Error('sandbox connection is closed');
  }
}
