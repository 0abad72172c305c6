import type { SecretBox } from '@crm/crypto';
import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { ConnectorConfig } from '../config';
import type { AccountRow } from '../account-store';
import type { ChatnetDriver, ChatnetSession, MessageRef, ReadMessage, ThreadType } from '../drivers';
import type { NewsPublisher } from '../events';
import type { MessagingFiles } from '../files';
import type { ConnectorRedis } from '../redis';
import { LeaseKeeper } from './lease-keeper';
import type { Leases } from './leases';
import { type EntryState, LiveSessions } from './live-sessions';
import { LoginFlow } from './login-flow';
import { Rebalancer } from './rebalancer';
import { RestoreFlow } from './restore-flow';
import { type Caller, type Outbound, SessionCommands, type Traced } from './session-commands';

export { ENTRY_STATES, type EntryState } from './live-sessions';
export type { AttachmentRef, Caller, Outbound, Traced } from './session-commands';

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
  /** Record that a user accepted one of the account's friend requests (friend-requests/), in `traceparent`'s trace. */
  onFriendAccepted(orgId: string, accountId: string, uid: string, traceparent: string | undefined): Promise<void>;
}

/**
 * The chat-network sessions of this instance, as the rest of the connector sees them. It composes the parts that
 * each do one job: the live sessions (what is held here and what happens to a held session), the login flow (QR
 * logins), the restore flow (reconnects from stored session data), the session commands (send, read marks, recall,
 * reactions), the lease keeper (heartbeat, takeovers and reconciliation) and the rebalancer (hand-overs when
 * instances join or leave).
 */
export class SessionPool {
  private readonly live: LiveSessions;
  private readonly login: LoginFlow;
  private readonly restorer: RestoreFlow;
  private readonly commands: SessionCommands;
  private readonly keeper: LeaseKeeper;
  private readonly rebalancer: Rebalancer;

  constructor(o: PoolOptions) {
    const live = new LiveSessions(o);
    this.live = live;
    this.login = new LoginFlow({ ...o, live });
    this.restorer = new RestoreFlow({ ...o, live });
    this.commands = new SessionCommands({ ...o, live });
    this.keeper = new LeaseKeeper({ ...o, live, restorer: this.restorer });
    this.rebalancer = new Rebalancer({
      sessions: live,
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
    return this.keeper.instanceId;
  }

  async start(address: string): Promise<void> {
    await this.keeper.start(address);
    this.rebalancer.start();
  }

  /**
   * Graceful stop: close every session and give its lease back without touching the stored status, so
   * another instance takes the accounts over at its next scan instead of waiting for the leases to lapse.
   */
  async stop(): Promise<void> {
    this.live.stopTaking();
    this.keeper.halt();
    await this.rebalancer.stop();
    await this.keeper.idle();
    await this.live.closeAll();
    await this.keeper.unregister();
  }

  // ---------------------------------------------------------------- what is held here

  /** State of an account held here, if any. */
  held(accountId: string): EntryState | undefined {
    return this.live.held(accountId);
  }

  heldCount(): number {
    return this.live.heldCount();
  }

  /** The sessions this instance carries for balancing: live ones and reconnects, not pending QR logins. */
  load(): number {
    return this.live.load();
  }

  /** The most recently connected live session here: the one rebalancing moves first. */
  newestLive(): string | undefined {
    return this.live.newestLive();
  }

  /** Accounts held here per state (every state present, 0 when none), for the sessions gauge. */
  countByState(): Record<EntryState, number> {
    return this.live.countByState();
  }

  /** Whether this instance holds a live, connected session of the account for that org. */
  isLive(accountId: string, orgId: string): boolean {
    return this.live.isLive(accountId, orgId);
  }

  liveSession(accountId: string, orgId: string): ChatnetSession {
    return this.live.liveSession(accountId, orgId);
  }

  /** Wait until the work after a lost connection of this account (if any) is done. */
  settled(accountId: string): Promise<void> {
    return this.live.settled(accountId);
  }

  /** Read the friend list from the live session and announce it, in `traceparent`'s trace (the call that asked). */
  syncFriends(accountId: string, traceparent: string | undefined): Promise<number> {
    return this.live.syncFriends(accountId, traceparent);
  }

  // ---------------------------------------------------------------- bringing sessions up

  /**
   * Start a QR login for an account nobody holds (login-flow.ts); false when another got the lease first. What the
   * login records later continues `traceparent` (the Login call's).
   */
  startLogin(row: AccountRow, traceparent: string | undefined): Promise<boolean> {
    return this.login.startLogin(row, traceparent);
  }

  /** The pending login of an account held here: resolves with the connected account once scanned. */
  pendingLogin(accountId: string): Promise<AccountRow> | undefined {
    return this.login.pendingLogin(accountId);
  }

  /** The QR code currently shown for an account (any instance), to send again to a client that joined late. */
  currentQr(accountId: string): Promise<{ qr: string; expiresAt: string } | null> {
    return this.login.currentQr(accountId);
  }

  /** Connect a held account (lease already taken) from its stored session data (restore-flow.ts), in `traceparent`'s trace. */
  restore(accountId: string, orgId: string, traceparent: string | undefined): Promise<AccountRow> {
    return this.restorer.restore(accountId, orgId, traceparent);
  }

  // ---------------------------------------------------------------- commands through a live session

  send(
    accountId: string,
    orgId: string,
    m: Outbound,
    clientMessageId: string,
    caller: Caller = {},
  ): Promise<{ chatnetMessageId: string; sentAt: string }> {
    return this.commands.send(accountId, orgId, m, clientMessageId, caller);
  }

  markSeen(
    accountId: string,
    orgId: string,
    seen: { threadId: string; threadType: ThreadType; messages: ReadMessage[] },
    call: Traced = {},
  ): Promise<void> {
    return this.commands.markSeen(accountId, orgId, seen, call);
  }

  recall(accountId: string, orgId: string, ref: MessageRef, call: Traced = {}): Promise<void> {
    return this.commands.recall(accountId, orgId, ref, call);
  }

  react(accountId: string, orgId: string, ref: MessageRef, emoji: string, call: Traced = {}): Promise<void> {
    return this.commands.react(accountId, orgId, ref, emoji, call);
  }

  // ---------------------------------------------------------------- letting go

  /**
   * Close a held session (or pending login) without changing its stored status: used when the account was
   * deleted, its proxy changed (`restart`: connect again right away), or this instance stops.
   */
  async release(accountId: string, restart: boolean, traceparent?: string): Promise<boolean> {
    const released = await this.live.release(accountId, restart, traceparent);
    if (released && restart && !this.live.stopped) this.keeper.scanSoon();
    return released;
  }

  /** Give a live session to another instance (rebalancing); false when it could not be. */
  handOff(accountId: string, markMs: number): Promise<boolean> {
    return this.live.handOff(accountId, markMs);
  }

  /** Look for accounts to take over now. */
  scanSoon(): void {
    this.keeper.scanSoon();
  }
}
