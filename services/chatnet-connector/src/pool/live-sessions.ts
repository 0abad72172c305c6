import type { SecretBox } from '@crm/crypto';
import { Pool, withTransaction } from '@crm/db';
import { AppError, traceFields } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { ConnectorConfig } from '../config';
import { aad, type AccountRow, accountRows as repo } from '../account-store';
import type { ChatnetSession, DisconnectInfo, InboundMessage, SeenReceipt, SessionHandlers } from '../drivers';
import {
  connectedEvent,
  disconnectedEvent,
  friendsEvent,
  inboundEvent,
  type NewsPublisher,
  reactionEvent,
  recalledEvent,
  seenEvent,
} from '../events';
import type { MessagingFiles } from '../files';
import { notLive } from './remote-errors';
import type { Leases } from './leases';

export const ENTRY_STATES = ['qr_pending', 'connecting', 'connected'] as const;
export type EntryState = (typeof ENTRY_STATES)[number];

/** An account this instance holds the lease of: a pending QR login, a restore in progress, or a live session. */
export interface Entry {
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

export interface LiveSessionsOptions {
  config: ConnectorConfig;
  pool: Pool;
  log: Logger;
  box: SecretBox;
  leases: Leases;
  /** Where inbound messages and read receipts go: messages straight to the broker, the rest (and their fallback) to the outbox. */
  news: Pick<NewsPublisher, 'enqueue' | 'flush'>;
  /** Received files are stored in messaging. */
  files: Pick<MessagingFiles, 'store'>;
  /** Record that a user accepted one of the account's friend requests (friend-requests/), in `traceparent`'s trace. */
  onFriendAccepted(orgId: string, accountId: string, uid: string, traceparent: string | undefined): Promise<void>;
}

/** How a session that came up is recorded, and what undoes its setting up when recording fails. */
export interface Establishing {
  /** Session data to store (encrypted); undefined keeps what is stored. */
  sessionData?: string;
  /** A QR login: the chat-network user must not be another account's of the organization. */
  fromLogin: boolean;
  /**
   * Recording failed (`err` as thrown to the caller): a login ends its login (status, QR code, lease). Without it the
   * entry is let go of and its lease released.
   */
  failed?(err: unknown): Promise<void>;
  /** The session is live, right before its lease is renewed as connected (a login takes its QR code down). */
  live?(): Promise<unknown>;
  /**
   * The trace its coming up continues (the connected event, the friend list announced, what is logged): the Login or
   * Reconnect call's that started it, kept by the flow while the network answers; undefined for a scan's takeover.
   */
  traceparent: string | undefined;
}

/** The proxy an account's sessions dial through, if it has one. */
export function proxyOf(box: SecretBox, row: AccountRow): string | undefined {
  return row.proxy_enc ? box.decrypt(row.proxy_enc, aad(row.org_id, row.id)) : undefined;
}

/**
 * The accounts this instance holds (a pending QR login, a restore in progress, a live session) and what happens to a
 * session while it is held: it is recorded when it comes up, its news goes out, a lost connection is recorded and its
 * lease released, and it is closed when released or handed over. The flows that bring sessions up (login-flow.ts,
 * restore-flow.ts) add entries here; the lease keeper renews their leases and lets go of unwanted ones.
 */
export class LiveSessions {
  private readonly entries = new Map<string, Entry>();
  private readonly endings = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(private readonly o: LiveSessionsOptions) {}

  /** Set once the instance stops: no new session is taken on (logins, takeovers) nor handed over. */
  get stopped(): boolean {
    return this.stopping;
  }

  stopTaking(): void {
    this.stopping = true;
  }

  /** Closes every held session and gives its lease back, and waits for the work after lost connections. */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.entries.keys()].map((id) => this.release(id, false)));
    await Promise.allSettled([...this.endings.values()]);
  }

  /** Holds an account whose lease was just taken. */
  hold(entry: Entry): void {
    this.entries.set(entry.accountId, entry);
  }

  /** Whether `entry` is still the one held for its account (not released, lost or replaced meanwhile). */
  isCurrent(entry: Entry): boolean {
    return this.entries.get(entry.accountId) === entry;
  }

  /** Stops holding `entry` when it is still the one held; false when it was not. Its lease is the caller's to release. */
  forget(entry: Entry): boolean {
    if (!this.isCurrent(entry)) return false;
    this.entries.delete(entry.accountId);
    return true;
  }

  holds(accountId: string): boolean {
    return this.entries.has(accountId);
  }

  entry(accountId: string): Entry | undefined {
    return this.entries.get(accountId);
  }

  all(): IterableIterator<Entry> {
    return this.entries.values();
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

  /** A session is up: record it (status, session data, event), then start heartbeating it as connected. */
  async establish(entry: Entry, session: ChatnetSession, opts: Establishing): Promise<AccountRow> {
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
        await connectedEvent(tx, orgId, accountId, session.profile.uid, updated.display_name, opts.traceparent);
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
      if (opts.failed) await opts.failed(mapped);
      else if (this.forget(entry)) await this.o.leases.release(accountId).catch(() => undefined);
      throw mapped;
    }
    if (!this.isCurrent(entry)) {
      await session.disconnect();
      throw notLive('the connection was closed while it was being set up');
    }
    entry.session = session;
    entry.state = 'connected';
    entry.connectedAt = new Date();
    entry.login = undefined;
    await opts.live?.();
    await this.o.leases.clearBackoff(accountId).catch(() => undefined);
    await this.o.leases.renew([{ accountId, state: 'connected', connectedAt: entry.connectedAt }]).catch(() => undefined);
    void this.syncFriends(accountId, opts.traceparent).catch((err) =>
      this.o.log.warn({ err, accountId, ...traceFields(opts) }, 'friend list sync failed'),
    );
    this.o.log.info({ accountId, fromLogin: opts.fromLogin, ...traceFields(opts) }, 'chat-network session live');
    return row;
  }

  /**
   * What the driver calls with the news of a held account's session. News from the network starts a trace of its own;
   * news the sandbox's control API pushed names its call's (driver.ts, Pushed), and keeps it.
   */
  handlersFor(entry: Entry): SessionHandlers {
    return {
      onMessage: (m) => this.onInbound(entry, m),
      storeFile: (f) => this.o.files.store(entry.orgId, f),
      onSeen: (r) => this.onSeen(entry, r),
      // In order with the messages and receipts (one queue, news-publisher.ts): a recall never overtakes the message it recalls.
      onRecall: (r) => this.o.news.enqueue(recalledEvent(entry.orgId, entry.accountId, r)),
      onReaction: (r) => this.o.news.enqueue(reactionEvent(entry.orgId, entry.accountId, r)),
      onDisconnect: (info) => this.onDisconnect(entry, info),
      // News from the network: a trace of its own.
      onFriendsChanged: () => void this.syncFriends(entry.accountId, undefined).catch((err) => this.o.log.warn({ err }, 'friend list sync failed')),
      onFriendRequestAccepted: async (uid, traceparent) => {
        await this.o.onFriendAccepted(entry.orgId, entry.accountId, uid, traceparent);
        await this.syncFriends(entry.accountId, traceparent).catch((err) =>
          this.o.log.warn({ err, ...traceFields({ traceparent }) }, 'friend list sync failed'),
        );
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
  onDisconnect(entry: Entry, info: DisconnectInfo): void {
    if (!this.isCurrent(entry) || entry.closing) return;
    this.entries.delete(entry.accountId);
    entry.closing = true;
    const { accountId, orgId } = entry;
    const ended = (async () => {
      try {
        if (!info.sessionExpired) await this.o.leases.backOff(accountId, this.o.config.RECONNECT_DELAY_MS);
        await this.recordDisconnect(orgId, accountId, info.reason || 'connection_lost', !info.sessionExpired, info.traceparent);
      } catch (err) {
        this.o.log.error({ err, accountId, ...traceFields(info) }, 'recording a lost connection failed');
      } finally {
        await this.o.leases.release(accountId).catch(() => undefined);
        this.endings.delete(accountId);
      }
      this.o.log.info({ accountId, reason: info.reason, sessionExpired: info.sessionExpired, ...traceFields(info) }, 'chat-network connection lost');
    })();
    entry.ended = ended;
    this.endings.set(accountId, ended);
  }

  /** Wait until the work after a lost connection of this account (if any) is done. */
  async settled(accountId: string): Promise<void> {
    await this.endings.get(accountId);
  }

  /**
   * The account is disconnected (status, and the event when it was connected, in `traceparent`'s trace: the call's
   * that caused it, none for the network's cut); `keepAlive`: the scan reconnects it.
   */
  async recordDisconnect(orgId: string, accountId: string, reason: string, keepAlive: boolean, traceparent: string | undefined): Promise<void> {
    await withTransaction(this.o.pool, async (tx) => {
      const r = await repo.markDisconnected(tx, accountId, reason, keepAlive);
      if (r?.wasConnected) await disconnectedEvent(tx, orgId, accountId, reason, traceparent);
    });
  }

  /** Read the friend list from the live session and announce it, in `traceparent`'s trace (what asked for it; none: the network). */
  async syncFriends(accountId: string, traceparent: string | undefined): Promise<number> {
    const entry = this.entries.get(accountId);
    if (!entry?.session?.isAlive()) return 0;
    const friends = await entry.session.listFriends();
    await friendsEvent(this.o.pool, entry.orgId, accountId, friends, traceparent);
    return friends.length;
  }

  /**
   * Close a held session (or pending login) without changing its stored status and release its lease: used when the
   * account was deleted, its proxy changed (`restart`: its reconnect back-off is cleared too), or this instance stops.
   * `traceparent`: the call that asked for it, for what is logged.
   */
  async release(accountId: string, restart: boolean, traceparent?: string): Promise<boolean> {
    const entry = this.entries.get(accountId);
    if (!entry) return false;
    entry.closing = true;
    this.entries.delete(accountId);
    entry.login?.abort.abort();
    await entry.session
      ?.disconnect()
      .catch((err) => this.o.log.warn({ err, accountId, ...traceFields({ traceparent }) }, 'closing a session failed'));
    if (restart) await this.o.leases.clearBackoff(accountId).catch(() => undefined);
    await this.o.leases.release(accountId).catch(() => undefined);
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
    if (this.stopping || !entry || entry.state !== 'connected' || entry.closing) return false;
    await this.o.leases.markHandoff(accountId, markMs);
    if (!this.isCurrent(entry) || entry.closing) return false;
    entry.closing = true;
    this.entries.delete(accountId);
    await entry.session?.disconnect().catch((err) => this.o.log.warn({ err, accountId }, 'closing a session failed'));
    await this.o.news.flush().catch((err) => this.o.log.warn({ err, accountId }, 'writing the news of a handed-over session failed'));
    await this.o.leases.release(accountId).catch(() => undefined);
    return true;
  }

  /**
   * Someone else holds the account now (this instance stalled past the lease): stop at once so two instances never
   * both run it. The lease is not ours to release.
   */
  async leaseLost(accountId: string): Promise<void> {
    const e = this.entries.get(accountId);
    if (!e) return;
    this.o.log.warn({ accountId }, 'lease lost to another instance; closing the local session');
    e.closing = true;
    this.entries.delete(accountId);
    e.login?.abort.abort();
    await e.session?.disconnect().catch(() => undefined);
  }
}
