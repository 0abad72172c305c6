import type { Agent } from 'node:http';
import type { Logger } from '@crm/logger';
import type { GroupInfoResponse } from 'zca-js';
import {
  ChatnetDriver,
  ChatnetProfile,
  ChatnetSession,
  ConnectOptions,
  Friend,
  InboundMessage,
  LoginFailedError,
  OutboundMessage,
  QrLoginOptions,
  SeenReceipt,
  SessionExpiredError,
  SessionHandlers,
} from './driver';
import { GroupNames } from './group-names';

/**
 * The real network (Zalo) through the zca-js client. Only the slice of zca-js this driver uses is named
 * here (`ZaloClientFactory`), so the adapter is unit-tested against fixtures in zca-js's shapes without any
 * network; `zcaClientFactory()` is the production binding to the library.
 */

// zca-js enum values (models/Enum.ts, apis/loginQR.ts, apis/listen.ts), restated so tests need no import.
export const ZCA = {
  threadUser: 0,
  threadGroup: 1,
  qrGenerated: 0,
  qrExpired: 1,
  qrScanned: 2,
  qrDeclined: 3,
  gotLoginInfo: 4,
  closeManual: 1000,
  closeDuplicate: 3000,
  closeKick: 3003,
} as const;

export interface ZcaQrEvent {
  type: number;
  data: any;
  actions: { retry?: () => unknown; abort?: () => unknown } | null;
}

export interface ZcaCredentials {
  imei: string;
  cookie: unknown[];
  userAgent: string;
  language?: string;
}

export interface ZcaMessage {
  type: number;
  threadId: string;
  isSelf: boolean;
  data: { msgId: string; cliMsgId?: string; uidFrom: string; dName: string; ts: string; msgType: string; content: unknown };
}

/**
 * One entry of the listener's `seen_messages` (models/SeenMessage.ts): a user thread names the message read
 * (`msgId`, and `realMsgId` when the network has one); a group names the message and every member who saw it.
 */
export interface ZcaSeenMessage {
  type: number;
  threadId: string;
  isSelf: boolean;
  data: { idTo?: string; msgId?: string | number; realMsgId?: string | number; groupId?: string; seenUids?: string[] };
}

export interface ZcaUser {
  userId: string;
  displayName: string;
  zaloName: string;
  avatar: string;
  phoneNumber: string;
}

export interface ZcaListener {
  on(event: 'message', cb: (m: ZcaMessage) => void): unknown;
  on(event: 'connected', cb: () => void): unknown;
  on(event: 'closed' | 'disconnected', cb: (code: number, reason: string) => void): unknown;
  on(event: 'error', cb: (err: unknown) => void): unknown;
  on(event: 'friend_event', cb: (e: unknown) => void): unknown;
  on(event: 'seen_messages', cb: (seen: ZcaSeenMessage[]) => void): unknown;
  start(opts?: { retryOnClose?: boolean }): void;
  stop(): void;
}

export interface ZcaApi {
  listener: ZcaListener;
  getOwnId(): string;
  fetchAccountInfo(): Promise<{ profile: ZcaUser }>;
  getAllFriends(count?: number, page?: number): Promise<ZcaUser[]>;
  /** zca-js apis/getGroupInfo.ts: the group's record (its `name` among others) in `gridInfoMap`, keyed by group id. */
  getGroupInfo(groupId: string): Promise<GroupInfoResponse>;
  sendMessage(message: string | { msg: string }, threadId: string, type?: number): Promise<{ message: { msgId: number | string } | null }>;
  getContext(): { imei: string; userAgent: string; language?: string; cookie: { toJSON(): { cookies: unknown[] } } };
}

export interface ZcaClient {
  loginQR(options: { userAgent?: string; language?: string }, callback: (event: ZcaQrEvent) => unknown): Promise<ZcaApi>;
  login(credentials: ZcaCredentials): Promise<ZcaApi>;
}

/** Builds one zca-js client per session, each with its own proxy agent. */
export type ZaloClientFactory = (opts: { agent?: Agent; fetch?: typeof fetch }) => ZcaClient;

/** The production binding: zca-js's `Zalo`, with its update check (a call to the npm registry) off. */
export function zcaClientFactory(): ZaloClientFactory {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Zalo } = require('zca-js') as { Zalo: new (options: object) => ZcaClient };
  return ({ agent, fetch: polyfill }) =>
    new Zalo({ selfListen: false, checkUpdate: false, logging: false, ...(agent ? { agent } : {}), ...(polyfill ? { polyfill } : {}) });
}

/** Turns a proxy URL into what zca-js needs: an agent for its WebSocket and a fetch that uses the same proxy. */
export type ProxyDialer = (proxyUrl: string) => { agent: Agent; fetch: typeof fetch };

interface StoredSession {
  v: 1;
  imei: string;
  userAgent: string;
  language?: string;
  cookie: unknown[];
}

const SESSION_EXPIRED_CODES = new Set<number>([ZCA.closeDuplicate, ZCA.closeKick]);

export interface ZcaDriverOptions {
  log: Logger;
  qrMaxRefreshes: number;
  factory?: ZaloClientFactory;
  proxy?: ProxyDialer;
}

export class ZcaDriver implements ChatnetDriver {
  readonly name = 'zca';
  private readonly factory: ZaloClientFactory;

  constructor(private readonly o: ZcaDriverOptions) {
    this.factory = o.factory ?? zcaClientFactory();
  }

  private client(proxyUrl?: string): ZcaClient {
    if (!proxyUrl) return this.factory({});
    if (!this.o.proxy) throw new Error('This build has no proxy support for the zca driver');
    return this.factory(this.o.proxy(proxyUrl));
  }

  async loginWithQr(opts: QrLoginOptions): Promise<ChatnetSession> {
    let refreshes = 0;
    let failure: LoginFailedError | undefined;
    let pending: Promise<void> = Promise.resolve();
    let abortLogin: (() => unknown) | undefined;
    const onAbort = () => {
      failure = new LoginFailedError('aborted', 'QR login was cancelled');
      abortLogin?.();
    };
    opts.signal.addEventListener('abort', onAbort, { once: true });
    let api: ZcaApi;
    try {
      // Inside the try: a proxy the SSRF guard refuses is a failed login like any other network failure.
      const client = this.client(opts.proxyUrl);
      api = await client.loginQR({}, (event) => {
        abortLogin = event.actions?.abort;
        if (opts.signal.aborted) {
          event.actions?.abort?.();
          return;
        }
        switch (event.type) {
          case ZCA.qrGenerated:
            // zca-js gives the rendered PNG (base64); the network's QR lives about 100 s.
            pending = pending.then(() => opts.onQr({ image: event.data.image, code: event.data.code, expiresAt: new Date(Date.now() + 100_000) }));
            break;
          case ZCA.qrExpired:
            if (refreshes++ < this.o.qrMaxRefreshes) event.actions?.retry?.();
            else {
              failure = new LoginFailedError('qr_expired', 'No QR code was scanned before the last one expired');
              event.actions?.abort?.();
            }
            break;
          case ZCA.qrDeclined:
            failure = new LoginFailedError('qr_declined', 'The login was declined on the phone');
            event.actions?.abort?.();
            break;
          default:
            break;
        }
      });
      await pending;
    } catch (err) {
      throw failure ?? (err instanceof LoginFailedError ? err : new LoginFailedError('network_error', `QR login failed: ${(err as Error)?.message ?? err}`));
    } finally {
      opts.signal.removeEventListener('abort', onAbort);
    }
    if (failure || !api) throw failure ?? new LoginFailedError('network_error', 'QR login returned no session');
    return this.open(api, opts.handlers);
  }

  async restoreSession(sessionData: string, opts: ConnectOptions): Promise<ChatnetSession> {
    let stored: StoredSession;
    try {
      stored = JSON.parse(sessionData) as StoredSession;
    } catch {
      throw new SessionExpiredError('Stored session data is unreadable');
    }
    if (!stored.imei || !Array.isArray(stored.cookie) || !stored.userAgent) throw new SessionExpiredError('Stored session data is incomplete');
    let api: ZcaApi;
    try {
      api = await this.client(opts.proxyUrl).login({ imei: stored.imei, cookie: stored.cookie, userAgent: stored.userAgent, language: stored.language });
    } catch (err) {
      // zca-js raises ZaloApiError when the network refuses the cookies (logged out, expired); anything
      // else (DNS, TLS, proxy) is transient and retried by the pool.
      if ((err as Error)?.name === 'ZaloApiError') throw new SessionExpiredError(`The network refused the stored session: ${(err as Error).message}`);
      throw err;
    }
    return this.open(api, opts.handlers);
  }

  private async open(api: ZcaApi, handlers: SessionHandlers): Promise<ChatnetSession> {
    const uid = api.getOwnId();
    const { profile } = await api.fetchAccountInfo();
    const session = new ZcaSession(
      api,
      { uid, displayName: profile.displayName || profile.zaloName || uid, avatarUrl: profile.avatar ?? '', phone: profile.phoneNumber ?? '' },
      handlers,
      this.o.log,
    );
    await session.listen();
    return session;
  }

  async close(): Promise<void> {}
}

/** Text of a zca-js message: plain text as is; anything else (photo, sticker, link) as JSON with its msgType. */
export function inboundOf(m: ZcaMessage): InboundMessage {
  const text = typeof m.data.content === 'string';
  return {
    chatnetMessageId: String(m.data.msgId),
    threadId: m.threadId,
    threadType: m.type === ZCA.threadGroup ? 'group' : 'user',
    fromUid: m.data.uidFrom,
    fromName: m.data.dName ?? '',
    fromAvatar: '',
    content: text ? (m.data.content as string) : JSON.stringify(m.data.content),
    contentType: text ? 'text' : m.data.msgType || 'other',
    sentAt: new Date(Number(m.data.ts) || Date.now()),
  };
}

/**
 * A read receipt from a `seen_messages` entry; undefined for our own reads (another device of the account)
 * and for entries that name no message. Both ids of a user receipt are kept ("0" means none): messaging
 * matches whichever is the id the send returned.
 */
export function seenOf(m: ZcaSeenMessage, ownUid: string, at = new Date()): SeenReceipt | undefined {
  if (m.isSelf) return undefined;
  const group = m.type === ZCA.threadGroup;
  const threadId = String(m.threadId || (group ? m.data.groupId : m.data.idTo) || '');
  const ids = [...new Set([m.data.msgId, group ? undefined : m.data.realMsgId].map((v) => (v === undefined || v === null ? '' : String(v))))].filter(
    (v) => v !== '' && v !== '0',
  );
  if (!threadId || ids.length === 0) return undefined;
  // A group receipt lists everyone who saw the message so far; the newest reader is the last one.
  const readers = (m.data.seenUids ?? []).map(String).filter((u) => u !== ownUid);
  const seenByUid = group ? readers[readers.length - 1] : threadId;
  return { threadId, threadType: group ? 'group' : 'user', chatnetMessageIds: ids, ...(seenByUid ? { seenByUid } : {}), seenAt: at };
}

/** The group's name from a getGroupInfo answer; undefined when the network left the group out (left, dissolved). */
export function groupNameOf(info: GroupInfoResponse | undefined, groupId: string): string | undefined {
  return info?.gridInfoMap?.[groupId]?.name || undefined;
}

class ZcaSession implements ChatnetSession {
  private alive = false;
  private closedByUs = false;
  /** The network's listener names no group: its name is asked with getGroupInfo, once per group every few minutes. */
  private readonly groupNames: GroupNames;

  constructor(
    private readonly api: ZcaApi,
    readonly profile: ChatnetProfile,
    private readonly handlers: SessionHandlers,
    private readonly log: Logger,
  ) {
    this.groupNames = new GroupNames({
      lookup: async (groupId) => groupNameOf(await this.api.getGroupInfo(groupId), groupId),
      onError: (err, groupId) => this.log.warn({ err, groupId }, 'zca getGroupInfo failed; the message goes on without the group name'),
    });
  }

  /** The message with its group's name when it is a group's and the network says it; never fails. */
  private async withGroupName(m: InboundMessage): Promise<InboundMessage> {
    if (m.threadType !== 'group') return m;
    const groupName = await this.groupNames.name(m.threadId);
    return groupName ? { ...m, groupName } : m;
  }

  get sessionData(): string {
    const ctx = this.api.getContext();
    const stored: StoredSession = { v: 1, imei: ctx.imei, userAgent: ctx.userAgent, language: ctx.language, cookie: ctx.cookie.toJSON().cookies };
    return JSON.stringify(stored);
  }

  /** Start the listener and resolve once its WebSocket is open. */
  listen(): Promise<void> {
    const l = this.api.listener;
    return new Promise((resolve, reject) => {
      let opened = false;
      l.on('connected', () => {
        opened = true;
        this.alive = true;
        resolve();
      });
      l.on('message', (m) => {
        if (m.isSelf) return;
        this.withGroupName(inboundOf(m))
          .then((message) => this.handlers.onMessage(message))
          .catch((err) => this.log.error({ err }, 'recording an inbound message failed'));
      });
      l.on('seen_messages', (seen) => {
        for (const m of Array.isArray(seen) ? seen : []) {
          const receipt = seenOf(m, this.profile.uid);
          if (receipt) this.handlers.onSeen(receipt).catch((err) => this.log.error({ err }, 'recording a read receipt failed'));
        }
      });
      l.on('friend_event', () => this.handlers.onFriendsChanged());
      l.on('error', (err) => this.log.warn({ err }, 'zca listener error'));
      l.on('closed', (code, reason) => {
        const wasAlive = this.alive;
        this.alive = false;
        if (!opened) return reject(new Error(`listener closed before opening (${code} ${reason})`));
        if (this.closedByUs || !wasAlive) return;
        // 3000: the account opened a session elsewhere; 3003: kicked. Both need a new login.
        this.handlers.onDisconnect({ reason: reason || `closed_${code}`, sessionExpired: SESSION_EXPIRED_CODES.has(code) });
      });
      l.start({ retryOnClose: false });
    });
  }

  isAlive(): boolean {
    return this.alive;
  }

  async sendMessage(m: OutboundMessage): Promise<{ chatnetMessageId: string; sentAt: Date }> {
    if (m.contentType !== 'text') throw new Error(`The zca driver sends text only, not ${m.contentType}`);
    const res = await this.api.sendMessage({ msg: m.content }, m.threadId, m.threadType === 'group' ? ZCA.threadGroup : ZCA.threadUser);
    if (!res.message) throw new Error('The network returned no message id');
    return { chatnetMessageId: String(res.message.msgId), sentAt: new Date() };
  }

  async listFriends(): Promise<Friend[]> {
    const out: Friend[] = [];
    const pageSize = 200;
    for (let page = 1; page <= 50; page++) {
      const users = await this.api.getAllFriends(pageSize, page);
      for (const u of users) out.push({ chatnetUid: u.userId, displayName: u.displayName || u.zaloName || u.userId });
      if (users.length < pageSize) break;
    }
    return out;
  }

  async disconnect(): Promise<void> {
    this.closedByUs = true;
    this.alive = false;
    this.api.listener.stop();
  }
}
