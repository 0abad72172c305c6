import QRCode from 'qrcode';
import type { SecretBox } from '@crm/crypto';
import { Pool, withTransaction } from '@crm/db';
import { AppError } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { ConnectorConfig } from '../config';
import * as repo from '../db/accounts.repo';
import type { AccountRow } from '../db/accounts.repo';
import { aad } from '../domain/secret-binding';
import { notLive } from '../domain/remote-errors';
import {
  ChatnetDriver,
  ChatnetSession,
  DisconnectInfo,
  FriendRequiredError,
  InboundMessage,
  LoginFailedError,
  MessageRef,
  OutboundMessage,
  QrCode,
  ReadMessage,
  SeenReceipt,
  SessionExpiredError,
  SessionHandlers,
  ThreadType,
} from '../drivers/driver';
import { connectedEvent, disconnectedEvent, friendsEvent, inboundEvent, qrEvent, reactionEvent, recalledEvent, seenEvent } from '../events/events';
import type { NewsPublisher } from '../events/news-publisher';
import type { FileReader, MessagingFiles } from '../files/messaging-files';
import type { ConnectorRedis } from '../redis';
import { fairShare } from './fair-share';
import type { Leases, LiveInfo } from './leases';
import { Rebalancer } from './rebalancer';

/** A send as the pool takes it: files named by their messaging attachment ids (fetched only when the driver reads them). */
export type Outbound = Omit<OutboundMessage, 'attachments'> & { attachments?: AttachmentRef[] };

export interface AttachmentRef {
  id: string;
  fileName: string;
  mimeType: string;
  size: number;
}

export const ENTRY_STATES = ['qr_pending', 'connecting', 'connected'] as const;
export type EntryState = (typeof ENTRY_STATES)[number];

/** An account this instance holds the lease of: a pending QR login, a restore in progress, or a live session. */
interface Entry {
  accountId: string;
  orgId: string;
  state: EntryState;
  since: number;
  session?: ChatnetSession;
  connectedAt?: Date;
  login?: { abort: AbortController; done: Promise<AccountRow> };
  /** Settles when the work after a lost connection (status, event, lease) is done. */
  ended?: Promise<void>;
  closing?: boolean;
}

export interface PoolOptions {
  config: ConnectorConfig;
  pool: Pool;
  redis: ConnectorRedis;
  log: Logger;
  box: SecretBox;
  driver: ChatnetDriver;
  leases: Leases;
  /** Where inbound messages and read receipts go: messages straight to the broker, the rest (and their fallback) to the outbox. */
  news: Pick<NewsPublisher, 'enqueue' | 'flush'>;
  /** Files both ways: sent files are streamed from messaging, received ones stored there. */
  files: MessagingFiles;
  /** Record that a user accepted one of the account's friend requests (domain/friend-requests). */
  onFriendAccepted(orgId: string, accountId: string, uid: string): Promise<void>;
}

/** How many restores one scan runs at once: takeovers of many accounts should not stampede the network. */
const RESTORE_CONCURRENCY = 8;
/** The login call answers once the first QR code is out; a network that cannot produce one fails it (503) instead of the gateway's deadline. */
const FIRST_QR_TIMEOUT_MS = 8_000;
/** A held entry younger than this is not reconciled against the database (its row may not be committed yet). */
const RECONCILE_GRACE_MS = 10_000;

/**
 * The live sessions of this instance. Each is held through a Redis lease renewed by the heartbeat; the
 * scan takes over accounts that should be live (keep_alive) but that no instance holds, reconnecting them
 * from their stored session data, and lets go of sessions the database no longer wants.
 */
export class SessionPool {
  private readonly entries = new Map<string, Entry>();
  private readonly endings = new Map<string, Promise<void>>();
  private heartbeatTimer?: NodeJS.Timeout;
  private scanTimer?: NodeJS.Timeout;
  private scanning?: Promise<void>;
  private heartbeating?: Promise<void>;
  /** Accounts seen free in the previous scan: taken over regardless of this instance's fair share. */
  private seenFree = new Set<string>();
  private stopped = false;
  private address = '';
  private readonly rebalancer: Rebalancer;

  constructor(private readonly o: PoolOptions) {
    this.rebalancer = new Rebalancer({
      sessions: this,
      leases: o.leases,
      pool: o.pool,
      log: o.log,
      intervalMs: o.config.REBALANCE_INTERVAL_MS,
      // Long enough for the instances under their share to scan (and take it) first; after it the scans'
      // usual fallback applies, so a session nobody else wants is not left offline.
      handoffMarkMs: Math.max(o.config.LEASE_TTL_MS, 3 * o.config.SCAN_INTERVAL_MS),
    });
  }

  get instanceId(): string {
    return this.o.leases.instanceId;
  }

  async start(address: string): Promise<void> {
    this.address = address;
    await this.o.leases.register(address);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.o.config.HEARTBEAT_MS);
    this.scanTimer = setInterval(() => this.scanSoon(), this.o.config.SCAN_INTERVAL_MS);
    this.scanSoon();
    this.rebalancer.start();
  }

  /**
   * Graceful stop: close every session and give its lease back without touching the stored status, so
   * another instance takes the accounts over at its next scan instead of waiting for the leases to lapse.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeatTimer);
    clearInterval(this.scanTimer);
    await this.rebalancer.stop();
    await Promise.allSettled([this.scanning, this.heartbeating]);
    await Promise.allSettled([...this.entries.keys()].map((id) => this.release(id, false)));
    await Promise.allSettled([...this.endings.values()]);
    await this.o.leases.unregister().catch(() => undefined);
  }

  /** State of an account held here, if any. */
  held(accountId: string): EntryState | undefined {
    return this.entries.get(accountId)?.state;
  }

  heldCount(): number {
    return this.entries.size;
  }

  /** The sessions this instance carries for balancing: live ones and reconnects, not pending QR logins (not counted as wanted yet). */
  load(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.state !== 'qr_pending') n++;
    return n;
  }

  /** The most recently connected live session here: the one rebalancing moves first (the longest-lived stay put). */
  newestLive(): string | undefined {
    let newest: Entry | undefined;
    for (const e of this.entries.values()) {
      if (e.state !== 'connected' || e.closing || !e.connectedAt) continue;
      if (!newest || e.connectedAt > newest.connectedAt!) newest = e;
    }
    return newest?.accountId;
  }

  /** Accounts held here per state (every state present, 0 when none), for the sessions gauge. */
  countByState(): Record<EntryState, number> {
    const counts = Object.fromEntries(ENTRY_STATES.map((s) => [s, 0])) as Record<EntryState, number>;
    for (const e of this.entries.values()) counts[e.state]++;
    return counts;
  }

  // ---------------------------------------------------------------- QR login

  /**
   * Start a QR login for an account nobody holds. Resolves once the first code is published (or the
   * driver failed to produce one); the login then waits for a scan in the background. False when
   * another instance (or a concurrent call) got the lease first.
   */
  async startLogin(row: AccountRow): Promise<boolean> {
    const id = row.id;
    if (this.stopped || !(await this.o.leases.acquire(id, 'qr_pending'))) return false;
    const entry: Entry = { accountId: id, orgId: row.org_id, state: 'qr_pending', since: Date.now() };
    this.entries.set(id, entry);
    try {
      await repo.markLoginStarted(this.o.pool, id);
      await this.o.leases.clearBackoff(id);
    } catch (err) {
      this.entries.delete(id);
      await this.o.leases.release(id).catch(() => undefined);
      throw err;
    }

    const abort = new AbortController();
    let firstQr!: { resolve(): void; reject(err: unknown): void };
    const shown = new Promise<void>((resolve, reject) => (firstQr = { resolve, reject }));
    const done = (async () => {
      let session: ChatnetSession;
      try {
        session = await this.o.driver.loginWithQr({
          accountId: id,
          proxyUrl: this.proxyOf(row),
          handlers: this.handlersFor(entry),
          signal: abort.signal,
          onQr: async (qr) => {
            await this.publishQr(row, qr);
            firstQr.resolve();
          },
        });
      } catch (err) {
        firstQr.reject(err);
        const reason = err instanceof LoginFailedError ? err.reason : 'network_error';
        if (!(err instanceof LoginFailedError)) this.o.log.warn({ err, accountId: id }, 'QR login failed');
        await this.loginEnded(entry, reason === 'qr_expired' ? 'qr_login_expired' : reason);
        throw new AppError('failed_precondition', `QR login did not complete (${reason})`, { code: reason });
      }
      return this.establish(entry, session, { sessionData: session.sessionData, fromLogin: true });
    })();
    done.catch(() => undefined);
    entry.login = { abort, done };
    const timer = setTimeout(
      () => firstQr.reject(new AppError('unavailable', 'The chat network did not produce a QR code in time; try again', { code: 'qr_unavailable' })),
      FIRST_QR_TIMEOUT_MS,
    );
    try {
      await shown;
    } catch (err) {
      abort.abort();
      throw err instanceof AppError
        ? err
        : new AppError('unavailable', 'The chat network did not produce a QR code; try again', { code: 'qr_unavailable' });
    } finally {
      clearTimeout(timer);
    }
    return true;
  }

  /** The pending login of an account held here: resolves with the connected account once scanned. */
  pendingLogin(accountId: string): Promise<AccountRow> | undefined {
    return this.entries.get(accountId)?.login?.done;
  }

  private async publishQr(row: AccountRow, qr: QrCode): Promise<void> {
    const dataUrl = qr.image
      ? qr.image.startsWith('data:')
        ? qr.image
        : `data:image/png;base64,${qr.image}`
      : await QRCode.toDataURL(qr.code ?? '', { errorCorrectionLevel: 'M', margin: 2, scale: 5 });
    const ttl = Math.max(1, qr.expiresAt.getTime() - Date.now());
    await this.o.redis.set(this.qrKey(row.id), JSON.stringify({ qr: dataUrl, expiresAt: qr.expiresAt.toISOString() }), { PX: ttl });
    await qrEvent(this.o.pool, row.org_id, row.id, dataUrl, qr.expiresAt);
  }

  private qrKey(accountId: string): string {
    return `${this.o.config.REDIS_PREFIX}chatnet:qr:${accountId}`;
  }

  /** The QR code currently shown for an account (any instance), to send again to a client that joined late. */
  async currentQr(accountId: string): Promise<{ qr: string; expiresAt: string } | null> {
    const raw = await this.o.redis.get(this.qrKey(accountId));
    return raw ? (JSON.parse(raw) as { qr: string; expiresAt: string }) : null;
  }

  private async loginEnded(entry: Entry, reason: string): Promise<void> {
    await this.o.redis.del(this.qrKey(entry.accountId)).catch(() => undefined);
    if (this.entries.get(entry.accountId) !== entry) return;
    this.entries.delete(entry.accountId);
    try {
      await withTransaction(this.o.pool, async (tx) => {
        const row = await repo.markLoginFailed(tx, entry.accountId, reason);
        if (row) await disconnectedEvent(tx, entry.orgId, entry.accountId, reason);
      });
    } finally {
      await this.o.leases.release(entry.accountId).catch(() => undefined);
    }
  }

  // ---------------------------------------------------------------- restore

  /**
   * Connect a held account (lease already taken, state `connecting`) from its stored session data.
   * SessionExpiredError → disconnected for good (a new QR login is needed); other failures → disconnected,
   * retried with back-off by whichever instance scans next.
   */
  async restore(accountId: string, orgId: string): Promise<AccountRow> {
    const entry: Entry = { accountId, orgId, state: 'connecting', since: Date.now() };
    this.entries.set(accountId, entry);
    const giveUp = async () => {
      if (this.entries.get(accountId) === entry) this.entries.delete(accountId);
      await this.o.leases.release(accountId).catch(() => undefined);
    };
    let row: AccountRow | undefined;
    let sessionData: string;
    try {
      row = await repo.getAccountById(this.o.pool, accountId);
      if (!row || !row.session_enc)
        throw new AppError('failed_precondition', 'The account has no stored session; log in with a QR code', { code: 'no_session' });
      sessionData = this.o.box.decrypt(row.session_enc, aad(row.org_id, row.id));
    } catch (err) {
      await giveUp();
      throw err;
    }
    let session: ChatnetSession;
    try {
      session = await withTimeout(
        this.o.driver.restoreSession(sessionData, { accountId, proxyUrl: this.proxyOf(row!), handlers: this.handlersFor(entry) }),
        this.o.config.RESTORE_TIMEOUT_MS,
      );
    } catch (err) {
      const expired = err instanceof SessionExpiredError;
      if (!expired) {
        const delay = await this.o.leases.backOff(accountId, Math.max(this.o.config.RECONNECT_DELAY_MS, 1000)).catch(() => 0);
        this.o.log.warn({ err, accountId, retryInMs: delay }, 'restoring a session failed');
      }
      await this.recordDisconnect(orgId, accountId, expired ? 'session_expired' : 'reconnect_failed', !expired);
      await giveUp();
      throw expired
        ? new AppError('failed_precondition', 'The stored session has expired; log in with a QR code again', { code: 'session_expired' })
        : new AppError('unavailable', 'Could not reconnect to the chat network; it is retried automatically', { code: 'reconnect_failed' });
    }
    if (this.entries.get(accountId) !== entry) {
      // Released (deleted, stopped) while connecting.
      await session.disconnect();
      throw notLive('the connection was closed while reconnecting');
    }
    return this.establish(entry, session, { sessionData: session.sessionData !== sessionData ? session.sessionData : undefined, fromLogin: false });
  }

  /** A session is up: record it (status, session data, event), then start heartbeating it as connected. */
  private async establish(entry: Entry, session: ChatnetSession, opts: { sessionData?: string; fromLogin: boolean }): Promise<AccountRow> {
    const { accountId, orgId } = entry;
    let row: AccountRow | undefined;
    try {
      row = await withTransaction(this.o.pool, async (tx) => {
        if (opts.fromLogin && (await repo.uidTakenByOther(tx, orgId, accountId, session.profile.uid))) {
          throw new AppError('already_exists', 'Another account of this organization is already connected to that chat-network user', {
            code: 'chatnet_uid_taken',
          });
        }
        const updated = await repo.markConnected(tx, accountId, {
          chatnetUid: session.profile.uid,
          avatarUrl: session.profile.avatarUrl,
          phone: session.profile.phone,
          sessionEnc: opts.sessionData === undefined ? undefined : this.o.box.encrypt(opts.sessionData, aad(orgId, accountId)),
        });
        if (!updated) throw new AppError('not_found', 'Chat-network account not found');
        await connectedEvent(tx, orgId, accountId, session.profile.uid, updated.display_name);
        return updated;
      });
    } catch (err) {
      await session.disconnect().catch(() => undefined);
      const code = (err as { code?: string }).code;
      const mapped =
        code === '23505'
          ? new AppError('already_exists', 'Another account of this organization is already connected to that chat-network user', {
              code: 'chatnet_uid_taken',
            })
          : err;
      if (opts.fromLogin) await this.loginEnded(entry, mapped instanceof AppError ? mapped.code : 'login_failed');
      else if (this.entries.get(accountId) === entry) {
        this.entries.delete(accountId);
        await this.o.leases.release(accountId).catch(() => undefined);
      }
      throw mapped;
    }
    if (this.entries.get(accountId) !== entry) {
      await session.disconnect();
      throw notLive('the connection was closed while it was being set up');
    }
    entry.session = session;
    entry.state = 'connected';
    entry.connectedAt = new Date();
    entry.login = undefined;
    if (opts.fromLogin) await this.o.redis.del(this.qrKey(accountId)).catch(() => undefined);
    await this.o.leases.clearBackoff(accountId).catch(() => undefined);
    await this.o.leases.renew([{ accountId, state: 'connected', connectedAt: entry.connectedAt }]).catch(() => undefined);
    void this.syncFriends(accountId).catch((err) => this.o.log.warn({ err, accountId }, 'friend list sync failed'));
    this.o.log.info({ accountId, fromLogin: opts.fromLogin }, 'chat-network session live');
    return row;
  }

  private handlersFor(entry: Entry): SessionHandlers {
    return {
      onMessage: (m) => this.onInbound(entry, m),
      storeFile: (f) => this.o.files.store(entry.orgId, f),
      onSeen: (r) => this.onSeen(entry, r),
      // In order with the messages and receipts (one queue, news-publisher.ts): a recall never overtakes the message it recalls.
      onRecall: (r) => this.o.news.enqueue(recalledEvent(entry.orgId, entry.accountId, r)),
      onReaction: (r) => this.o.news.enqueue(reactionEvent(entry.orgId, entry.accountId, r)),
      onDisconnect: (info) => this.onDisconnect(entry, info),
      onFriendsChanged: () => void this.syncFriends(entry.accountId).catch((err) => this.o.log.warn({ err }, 'friend list sync failed')),
      onFriendRequestAccepted: async (uid) => {
        await this.o.onFriendAccepted(entry.orgId, entry.accountId, uid);
        await this.syncFriends(entry.accountId).catch((err) => this.o.log.warn({ err }, 'friend list sync failed'));
      },
    };
  }

  /** Resolves once the broker confirmed the message, or the outbox committed it (with the others of its batch). */
  private onInbound(entry: Entry, m: InboundMessage): Promise<void> {
    return this.o.news.enqueue(inboundEvent(entry.orgId, entry.accountId, m));
  }

  private onSeen(entry: Entry, r: SeenReceipt): Promise<void> {
    return this.o.news.enqueue(seenEvent(entry.orgId, entry.accountId, r));
  }

  /** The network cut a live connection: record it, and let the scan reconnect after a pause unless the session expired. */
  private onDisconnect(entry: Entry, info: DisconnectInfo): void {
    if (this.entries.get(entry.accountId) !== entry || entry.closing) return;
    this.entries.delete(entry.accountId);
    entry.closing = true;
    const { accountId, orgId } = entry;
    const ended = (async () => {
      try {
        if (!info.sessionExpired) await this.o.leases.backOff(accountId, this.o.config.RECONNECT_DELAY_MS);
        await this.recordDisconnect(orgId, accountId, info.reason || 'connection_lost', !info.sessionExpired);
      } catch (err) {
        this.o.log.error({ err, accountId }, 'recording a lost connection failed');
      } finally {
        await this.o.leases.release(accountId).catch(() => undefined);
        this.endings.delete(accountId);
      }
      this.o.log.info({ accountId, reason: info.reason, sessionExpired: info.sessionExpired }, 'chat-network connection lost');
    })();
    entry.ended = ended;
    this.endings.set(accountId, ended);
  }

  /** Wait until the work after a lost connection of this account (if any) is done. */
  async settled(accountId: string): Promise<void> {
    await this.endings.get(accountId);
  }

  private async recordDisconnect(orgId: string, accountId: string, reason: string, keepAlive: boolean): Promise<void> {
    await withTransaction(this.o.pool, async (tx) => {
      const r = await repo.markDisconnected(tx, accountId, reason, keepAlive);
      if (r?.wasConnected) await disconnectedEvent(tx, orgId, accountId, reason);
    });
  }

  // ---------------------------------------------------------------- live operations (on the holder)

  /** Whether this instance holds a live, connected session of the account for that org. */
  isLive(accountId: string, orgId: string): boolean {
    const entry = this.entries.get(accountId);
    return !!entry && entry.orgId === orgId && entry.state === 'connected' && !!entry.session?.isAlive();
  }

  liveSession(accountId: string, orgId: string): ChatnetSession {
    const entry = this.entries.get(accountId);
    if (!entry || entry.orgId !== orgId) throw notLive();
    if (entry.state !== 'connected' || !entry.session?.isAlive())
      throw notLive(entry.state === 'qr_pending' ? 'a QR login is pending' : 'it is reconnecting');
    return entry.session;
  }

  /** `caller`: the request id and the origin of the call being served (files are read from messaging under it). */
  async send(
    accountId: string,
    orgId: string,
    m: Outbound,
    clientMessageId: string,
    caller: Omit<FileReader, 'orgId'> = {},
  ): Promise<{ chatnetMessageId: string; sentAt: string }> {
    const session = this.liveSession(accountId, orgId);
    const key = clientMessageId ? `${this.o.config.REDIS_PREFIX}chatnet:sent:${accountId}:${clientMessageId}` : '';
    if (key) {
      // The network knows nothing of our ids: a retried call (after a timeout, a takeover) must not send twice.
      const claimed = await this.o.redis.set(key, 'pending', { EX: 120, NX: true });
      if (claimed !== 'OK') {
        const prior = await this.o.redis.get(key);
        if (prior && prior !== 'pending') return JSON.parse(prior) as { chatnetMessageId: string; sentAt: string };
        throw new AppError('already_exists', 'A message with this clientMessageId is being sent', { code: 'send_in_progress' });
      }
    }
    let sent: { chatnetMessageId: string; sentAt: Date };
    try {
      sent = await session.sendMessage(this.withFiles({ ...caller, orgId }, m));
    } catch (err) {
      if (key) await this.o.redis.del(key).catch(() => undefined);
      if (err instanceof FriendRequiredError) {
        throw new AppError('failed_precondition', 'The recipient accepts messages only from friends: send a friend request first', {
          code: 'friend_required',
        });
      }
      this.o.log.warn({ err, accountId }, 'sending through the chat network failed');
      throw new AppError('unavailable', 'The chat network did not accept the message; try again', { code: 'send_failed' });
    }
    const result = { chatnetMessageId: sent.chatnetMessageId, sentAt: sent.sentAt.toISOString() };
    if (key) await this.o.redis.set(key, JSON.stringify(result), { EX: 24 * 3600 }).catch(() => undefined);
    return result;
  }

  /** Tell the network the account read messages of a thread; UNAVAILABLE when the network refused. */
  async markSeen(accountId: string, orgId: string, seen: { threadId: string; threadType: ThreadType; messages: ReadMessage[] }): Promise<void> {
    const session = this.liveSession(accountId, orgId);
    try {
      await session.markSeen(seen.threadId, seen.threadType, seen.messages);
    } catch (err) {
      this.o.log.warn({ err, accountId }, 'marking messages seen on the chat network failed');
      throw new AppError('unavailable', 'The chat network did not accept the read mark; try again', { code: 'mark_seen_failed' });
    }
  }

  /** Recall a message the account sent; UNAVAILABLE `recall_failed` when the network refused. */
  async recall(accountId: string, orgId: string, ref: MessageRef): Promise<void> {
    const session = this.liveSession(accountId, orgId);
    try {
      await session.recall(ref);
    } catch (err) {
      this.o.log.warn({ err, accountId }, 'recalling a message on the chat network failed');
      throw new AppError('unavailable', 'The chat network did not accept the recall; try again', { code: 'recall_failed' });
    }
  }

  /** The account's reaction on a message ('' takes it back); UNAVAILABLE `react_failed` when the network refused. */
  async react(accountId: string, orgId: string, ref: MessageRef, emoji: string): Promise<void> {
    const session = this.liveSession(accountId, orgId);
    try {
      await session.react(ref, emoji);
    } catch (err) {
      this.o.log.warn({ err, accountId }, 'reacting to a message on the chat network failed');
      throw new AppError('unavailable', 'The chat network did not accept the reaction; try again', { code: 'react_failed' });
    }
  }

  /** The message as a driver sends it: each file's bytes are streamed from messaging when the driver reads them. */
  private withFiles(reader: FileReader, m: Outbound): OutboundMessage {
    const { attachments, ...rest } = m;
    if (!attachments?.length) return rest;
    return {
      ...rest,
      attachments: attachments.map((a) => ({
        fileName: a.fileName,
        mimeType: a.mimeType,
        size: a.size,
        open: () => this.o.files.open(reader, a.id),
      })),
    };
  }

  /** Read the friend list from the live session and announce it. */
  async syncFriends(accountId: string): Promise<number> {
    const entry = this.entries.get(accountId);
    if (!entry?.session?.isAlive()) return 0;
    const friends = await entry.session.listFriends();
    await friendsEvent(this.o.pool, entry.orgId, accountId, friends);
    return friends.length;
  }

  /**
   * Close a held session (or pending login) without changing its stored status: used when the account was
   * deleted, its proxy changed (`restart`: connect again right away), or this instance stops.
   */
  async release(accountId: string, restart: boolean): Promise<boolean> {
    const entry = this.entries.get(accountId);
    if (!entry) return false;
    entry.closing = true;
    this.entries.delete(accountId);
    entry.login?.abort.abort();
    await entry.session?.disconnect().catch((err) => this.o.log.warn({ err, accountId }, 'closing a session failed'));
    if (restart) await this.o.leases.clearBackoff(accountId).catch(() => undefined);
    await this.o.leases.release(accountId).catch(() => undefined);
    if (restart && !this.stopped) this.scanSoon();
    return true;
  }

  /**
   * Give a live session to another instance (rebalancing), without touching its stored status: mark the
   * hand-over so this instance's scan leaves the account to the others, close the connection, write what
   * it received to the outbox, and only then release the lease, so the instance that reconnects it from
   * the session data starts after everything the old connection got is stored.
   */
  async handOff(accountId: string, markMs: number): Promise<boolean> {
    const entry = this.entries.get(accountId);
    if (this.stopped || !entry || entry.state !== 'connected' || entry.closing) return false;
    await this.o.leases.markHandoff(accountId, markMs);
    if (this.entries.get(accountId) !== entry || entry.closing) return false;
    entry.closing = true;
    this.entries.delete(accountId);
    await entry.session?.disconnect().catch((err) => this.o.log.warn({ err, accountId }, 'closing a session failed'));
    await this.o.news.flush().catch((err) => this.o.log.warn({ err, accountId }, 'writing the news of a handed-over session failed'));
    await this.o.leases.release(accountId).catch(() => undefined);
    return true;
  }

  // ---------------------------------------------------------------- heartbeat and scan

  private heartbeat(): Promise<void> {
    this.heartbeating ??= this.beat()
      .catch((err) => this.o.log.warn({ err }, 'heartbeat failed'))
      .finally(() => (this.heartbeating = undefined));
    return this.heartbeating;
  }

  private async beat(): Promise<void> {
    await this.o.leases.register(this.address);
    // The states are read after that round trip, right before the renew is written: a snapshot taken before
    // it could be older than a renew that establish() wrote meanwhile, and would set a connected account's
    // live info back to `connecting` until the next beat (commands on the one connection keep their order).
    const list: Array<{ accountId: string; state: LiveInfo['state']; connectedAt?: Date }> = [];
    for (const e of this.entries.values()) {
      if (e.state === 'connected' && !e.session?.isAlive()) {
        // A driver that lost its connection without telling us: treat it as a drop.
        this.onDisconnect(e, { reason: 'connection_lost', sessionExpired: false });
        continue;
      }
      list.push({ accountId: e.accountId, state: e.state, connectedAt: e.connectedAt });
    }
    const lost = await this.o.leases.renew(list);
    for (const accountId of lost) {
      const e = this.entries.get(accountId);
      if (!e) continue;
      // Someone else holds it now (we stalled past the lease): stop at once so two instances never both run it.
      this.o.log.warn({ accountId }, 'lease lost to another instance; closing the local session');
      e.closing = true;
      this.entries.delete(accountId);
      e.login?.abort.abort();
      await e.session?.disconnect().catch(() => undefined);
    }
  }

  scanSoon(): void {
    if (this.stopped || this.scanning) return;
    this.scanning = this.scan()
      .catch((err) => this.o.log.warn({ err }, 'session pool scan failed'))
      .finally(() => (this.scanning = undefined));
  }

  private async scan(): Promise<void> {
    await this.reconcile();
    const wanted = await repo.accountsToKeepAlive(this.o.pool);
    const candidates = wanted.filter((r) => !this.entries.has(r.id));
    if (candidates.length === 0) {
      this.seenFree.clear();
      return;
    }
    const ids = candidates.map((r) => r.id);
    const [holders, backoffs, handoffs, instances] = await Promise.all([
      this.o.leases.holders(ids),
      this.o.leases.backoffs(ids),
      this.o.leases.handoffs(ids),
      this.o.leases.liveInstances(),
    ]);
    const free = candidates.filter((_, i) => !holders[i] && !backoffs[i]);
    const handedBy = new Map(ids.map((id, i) => [id, handoffs[i]]));
    // Fair share, so that instances started together spread the accounts and the sessions handed over by
    // rebalancing go to the instances under their share (one that just joined). An account left free by
    // the others for a whole scan is taken anyway (they may be full or dying), except one being handed
    // over: that waits for an instance with room until its hand-over mark lapses, and never goes back to
    // the instance handing it over meanwhile.
    const share = fairShare(wanted.length, instances, this.instanceId);
    let room = Math.max(0, share - this.load());
    const pick: typeof free = [];
    for (const r of shuffle(free)) {
      const handing = handedBy.get(r.id);
      if (handing === this.instanceId) continue;
      if (this.seenFree.has(r.id) && !handing) pick.push(r);
      else if (room > 0) {
        pick.push(r);
        room--;
      }
    }
    this.seenFree = new Set(free.filter((r) => !pick.includes(r)).map((r) => r.id));
    await mapLimit(pick, RESTORE_CONCURRENCY, async (r) => {
      if (this.stopped || !(await this.o.leases.acquire(r.id, 'connecting'))) return;
      try {
        await this.restore(r.id, r.org_id);
        this.o.log.info({ accountId: r.id }, 'account taken over and reconnected from its session data');
      } catch (err) {
        this.o.log.info({ accountId: r.id, code: (err as AppError).code }, 'reconnecting an account failed');
      }
    });
  }

  /** Let go of held accounts the database no longer wants live (deleted, logged out elsewhere). */
  private async reconcile(): Promise<void> {
    const old = [...this.entries.values()].filter((e) => Date.now() - e.since > RECONCILE_GRACE_MS).map((e) => e.accountId);
    if (old.length === 0) return;
    const keep = await repo.stillWanted(this.o.pool, old);
    for (const id of old) if (!keep.has(id)) await this.release(id, false);
  }

  private proxyOf(row: AccountRow): string | undefined {
    return row.proxy_enc ? this.o.box.decrypt(row.proxy_enc, aad(row.org_id, row.id)) : undefined;
  }
}

function shuffle<T>(items: T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The promise's value, or a rejection after `ms`; a session that arrives too late is closed, not leaked. */
function withTimeout<T extends ChatnetSession>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`timed out after ${ms} ms`));
    }, ms);
    promise.then(
      (session) => {
        clearTimeout(timer);
        if (timedOut) session.disconnect().catch(() => undefined);
        else resolve(session);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
