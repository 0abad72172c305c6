import { createHash, randomBytes, randomInt } from 'node:crypto';
import { randomBase62 } from '@crm/crypto';
import type { ConnectorRedis } from '../redis';
import {
  ChatnetDriver,
  ChatnetProfile,
  ChatnetSession,
  ConnectOptions,
  DisconnectInfo,
  Friend,
  FriendRequiredError,
  InboundMessage,
  LoginFailedError,
  MessageRef,
  NetworkUser,
  OutboundFile,
  OutboundMessage,
  QrLoginOptions,
  ReactionNotice,
  ReadMessage,
  RecallNotice,
  SeenReceipt,
  SessionExpiredError,
  SessionHandlers,
  ThreadType,
  UserQuery,
} from './driver';
import { networkPhoneDigits } from './phone-digits';
import type { SandboxLive } from './sandbox-live';

export interface SentRecord {
  chatnetMessageId: string;
  threadId: string;
  threadType: string;
  content: string;
  contentType: string;
  sentAt: string;
  /** What the network received of each file, computed from the bytes themselves. */
  attachments: Array<{ fileName: string; mimeType: string; size: number; sha256: string }>;
  /** The message it quoted; null for none (and for records from before quotes). */
  quote?: { chatnetMessageId: string } | null;
  /** When the account recalled it (merged in by sentBy from the network's recall records); null otherwise. */
  recalledAt?: string | null;
}

/** A message of the network as the sandbox knows where it belongs: its thread and its sender. */
export interface KnownMessage {
  threadId: string;
  threadType: ThreadType;
  fromUid: string;
  /** A contact sent it to the account (else the account sent it). */
  inbound: boolean;
}

/** Read a file being sent as the network would receive it: counted and hashed as it streams, never held whole. */
async function receiveFile(file: OutboundFile): Promise<SentRecord['attachments'][number]> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of await file.open()) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  if (size !== file.size) throw new Error(`file ${file.fileName} arrived with ${size} bytes, not ${file.size}`);
  return { fileName: file.fileName, mimeType: file.mimeType, size, sha256: hash.digest('hex') };
}

/** What the account told the network it read (the agent marked the conversation read in the CRM). */
export interface SeenByAgentRecord {
  threadId: string;
  threadType: string;
  messages: Array<{ chatnetMessageId: string; cliMsgId: string; fromUid: string; sentAt: string }>;
  at: string;
}

const SENT_KEEP = 200;
/** Messages kept for an account with no live connection expire after a week, as a network's offline store would. */
const HELD_TTL_S = 7 * 24 * 3600;
/** How often the network looks for kept messages that a live connection here has not taken yet. */
const HELD_SWEEP_MS = 1_000;

/** A random tag per process and a counter: see networkMessageId. */
const PROCESS_TAG = String(randomInt(0, 10_000)).padStart(4, '0');
let messageSequence = randomInt(0, 1_000_000);

/**
 * A network-style numeric message id (the real network's ids are long decimal strings), unique as the network's
 * are: two messages with one id are one message to everything downstream (the inbound event's id is derived from
 * it). A counter makes it unique within this process, a random tag per process across instances; the milliseconds
 * and six random digits it used to be made ids repeat now and then at hundreds of messages a second (bench/realtime
 * lost one message in a few runs that way).
 */
export function networkMessageId(): string {
  messageSequence = (messageSequence + 1) % 1_000_000;
  return `${Date.now()}${PROCESS_TAG}${String(messageSequence).padStart(6, '0')}`;
}

/** A phone number as the network's directory keys it: its digits with the country code (every Vietnamese spelling is one). */
export const phoneDigits = networkPhoneDigits;

/** A user in the network's directory: who they are, and whether they take messages from accounts that are not their friends. */
export interface DirectoryUser extends NetworkUser {
  acceptsStrangers: boolean;
}

/** A network-style user id. */
export function networkUid(): string {
  return `${randomInt(1, 10)}${String(randomInt(0, 1e9)).padStart(9, '0')}${String(randomInt(0, 1e9)).padStart(9, '0')}`;
}

/**
 * The simulated chat network. What the network itself stores (valid session tokens and their profiles,
 * friend lists, messages our accounts sent) lives in Redis, so every connector instance sees one network
 * and a session restored on another instance after a takeover is still valid. Live connections and
 * pending QR logins exist only in the process holding them: control calls are routed to that instance
 * (the one holding the account's lease), exactly like a network pushing to a connected client.
 *
 * A message for an account whose connection is down for a moment (handed to another instance, taken
 * over after a crash) is kept in Redis and handed to the account's next connection, as a real network
 * delivers what arrived while the client was away: a move between instances loses nothing.
 */
export class SandboxNetwork implements SandboxLive {
  private readonly p: string;
  private readonly pendingLogins = new Map<string, { token: string; scanned(profile: ChatnetProfile): void }>();
  private readonly sessions = new Map<string, SandboxSession>();
  private sweepTimer?: NodeJS.Timeout;

  constructor(
    private readonly redis: ConnectorRedis,
    prefix: string,
  ) {
    this.p = `${prefix}sandbox:`;
  }

  // ---- network side: what the control API drives ----

  /** Complete the pending QR login of an account held here. False when none is pending here. */
  async scan(accountId: string, profile: ChatnetProfile): Promise<boolean> {
    const pending = this.pendingLogins.get(accountId);
    if (!pending) return false;
    pending.scanned(profile);
    return true;
  }

  hasPendingLogin(accountId: string): boolean {
    return this.pendingLogins.has(accountId);
  }

  /** Push a message to the account's live connection here; resolves once the connector recorded it. */
  async deliver(accountId: string, message: InboundMessage): Promise<boolean> {
    const session = this.sessions.get(accountId);
    if (!session?.isAlive()) return false;
    await session.receive(message);
    return true;
  }

  /** Pass a recall (by its sender) to the account's live connection here; resolves once the connector recorded it. */
  async recalled(accountId: string, notice: RecallNotice): Promise<boolean> {
    const session = this.sessions.get(accountId);
    if (!session?.isAlive()) return false;
    await session.recalledBy(notice);
    return true;
  }

  /** Pass a member's reaction to the account's live connection here; resolves once the connector recorded it. */
  async reacted(accountId: string, notice: ReactionNotice): Promise<boolean> {
    const session = this.sessions.get(accountId);
    if (!session?.isAlive()) return false;
    await session.reactedBy(notice);
    return true;
  }

  /** Pass a read receipt to the account's live connection here; resolves once the connector recorded it. */
  async seen(accountId: string, receipt: SeenReceipt): Promise<boolean> {
    const session = this.sessions.get(accountId);
    if (!session?.isAlive()) return false;
    await session.readBy(receipt);
    return true;
  }

  /** Tell the account's live connection here that a user accepted its friend request; resolves once recorded. */
  async friendAccepted(accountId: string, uid: string, traceparent?: string): Promise<boolean> {
    const session = this.sessions.get(accountId);
    if (!session?.isAlive()) return false;
    await session.friendAccepted(uid, traceparent);
    return true;
  }

  /** Cut the account's live connection here, optionally invalidating its session on the network. */
  async drop(accountId: string, info: DisconnectInfo): Promise<boolean> {
    const session = this.sessions.get(accountId);
    if (!session?.isAlive()) return false;
    if (info.sessionExpired) await this.redis.del(this.sessionKey(session.token));
    session.cut(info);
    return true;
  }

  /**
   * Keep a message for the account's next connection (nobody holds it live right now). A connection that
   * opens meanwhile takes it at once if it is here, else at its network's next sweep.
   */
  async hold(accountId: string, message: InboundMessage): Promise<void> {
    const key = this.heldKey(accountId);
    await this.redis
      .multi()
      .rPush(key, JSON.stringify({ ...message, sentAt: message.sentAt.toISOString() }))
      .expire(key, HELD_TTL_S)
      .exec();
    this.sessions.get(accountId)?.takeHeld();
  }

  /**
   * Hand the kept messages to a live connection, oldest first. Each leaves the store only once the
   * connector recorded it, and by value (LREM), so two connections draining at once (the old one of a
   * stalled holder and the new one) never remove a message the other has not seen: the worst is the
   * same message twice, which its derived event id makes one event.
   */
  async handOverHeld(accountId: string, session: SandboxSession): Promise<void> {
    const key = this.heldKey(accountId);
    for (;;) {
      if (!session.isAlive()) return;
      const raw = await this.redis.lIndex(key, 0);
      if (raw === null) return;
      const m = JSON.parse(raw) as Omit<InboundMessage, 'sentAt'> & { sentAt: string };
      await session.receive({ ...m, sentAt: new Date(m.sentAt) });
      await this.redis.lRem(key, 1, raw);
    }
  }

  /** The network has seen this account log in (a standalone network keeps messages only for accounts it knows). */
  async knowAccount(accountId: string, uid: string): Promise<void> {
    await this.redis.hSet(`${this.p}accounts`, accountId, uid);
  }

  async knowsAccount(accountId: string): Promise<boolean> {
    return (await this.redis.hExists(`${this.p}accounts`, accountId)) === 1;
  }

  async heldCount(accountId: string): Promise<number> {
    return this.redis.lLen(this.heldKey(accountId));
  }

  private heldKey(accountId: string): string {
    return `${this.p}held:${accountId}`;
  }

  /** Stop the sweep (shutdown, after the sessions are closed). */
  close(): void {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  async setFriends(uid: string, friends: Friend[]): Promise<void> {
    await this.redis.set(`${this.p}friends:${uid}`, JSON.stringify(friends));
  }

  async friendsOf(uid: string): Promise<Friend[]> {
    const raw = await this.redis.get(`${this.p}friends:${uid}`);
    return raw ? (JSON.parse(raw) as Friend[]) : [];
  }

  /**
   * Who "exists" on the network under each phone number (the network's user directory, shared by every
   * account as on a real network). Keyed by the number's digits with the country code, so `+84 90…`, `8490…`
   * and `090…` are one number; a second index finds a user by uid.
   */
  async registerPhones(entries: Array<{ phone: string } & DirectoryUser>): Promise<void> {
    if (entries.length === 0) return;
    const json = (e: DirectoryUser) => JSON.stringify({ uid: e.uid, displayName: e.displayName, acceptsStrangers: e.acceptsStrangers });
    await this.redis
      .multi()
      .hSet(this.phonesKey(), Object.fromEntries(entries.map((e) => [phoneDigits(e.phone), json(e)])))
      .hSet(this.usersKey(), Object.fromEntries(entries.map((e) => [e.uid, json(e)])))
      .exec();
  }

  async userByPhone(phone: string): Promise<DirectoryUser | null> {
    const raw = await this.redis.hGet(this.phonesKey(), phoneDigits(phone));
    return raw ? directoryUser(raw) : null;
  }

  async userByUid(uid: string): Promise<DirectoryUser | null> {
    const raw = await this.redis.hGet(this.usersKey(), uid);
    return raw ? directoryUser(raw) : null;
  }

  private phonesKey(): string {
    return `${this.p}phones`;
  }

  private usersKey(): string {
    return `${this.p}users`;
  }

  /** Whether a message from the account (network uid `fromUid`) reaches `toUid`: strangers only when the user takes them. */
  async mayMessage(fromUid: string, toUid: string): Promise<boolean> {
    const user = await this.userByUid(toUid);
    if (!user || user.acceptsStrangers) return true;
    return (await this.friendsOf(fromUid)).some((f) => f.chatnetUid === toUid);
  }

  /** The account (network uid `fromUid`) asks `toUid` to be friends; kept until the user accepts. */
  async requestFriend(fromUid: string, toUid: string, message: string): Promise<void> {
    await this.redis.hSet(this.requestsKey(fromUid), toUid, JSON.stringify({ message, at: new Date().toISOString() }));
  }

  /**
   * `toUid` accepts the request of `fromUid`: each appears in the other's friends. False when no request of
   * `fromUid` to them is pending.
   */
  async acceptFriend(fromUid: string, toUid: string): Promise<boolean> {
    if (!(await this.redis.hDel(this.requestsKey(fromUid), toUid))) return false;
    const user = await this.userByUid(toUid);
    const add = async (owner: string, friend: Friend) => {
      const friends = (await this.friendsOf(owner)).filter((f) => f.chatnetUid !== friend.chatnetUid);
      await this.setFriends(owner, [...friends, friend]);
    };
    await add(fromUid, { chatnetUid: toUid, displayName: user?.displayName ?? '' });
    await add(toUid, { chatnetUid: fromUid, displayName: '' });
    return true;
  }

  private requestsKey(fromUid: string): string {
    return `${this.p}friend-requests:${fromUid}`;
  }

  /** What the account sent, newest first, each with its quote and when the account recalled it (null: not recalled). */
  async sentBy(accountId: string): Promise<SentRecord[]> {
    const [raw, recalls] = await Promise.all([
      this.redis.lRange(`${this.p}sent:${accountId}`, 0, SENT_KEEP - 1),
      this.redis.hGetAll(this.recallsKey(accountId)),
    ]);
    return raw.map((r) => {
      const m = JSON.parse(r) as SentRecord;
      return { ...m, quote: m.quote ?? null, recalledAt: recalls[m.chatnetMessageId] ?? null };
    });
  }

  private recallsKey(accountId: string): string {
    return `${this.p}recalled:${accountId}`;
  }

  private inboundKey(accountId: string): string {
    return `${this.p}inbound:${accountId}`;
  }

  /** Remember where a contact's message to the account belongs, so a recall, a reaction or a quote can name it. */
  async recordInbound(accountId: string, chatnetMessageId: string, m: Omit<KnownMessage, 'inbound'>): Promise<void> {
    const key = this.inboundKey(accountId);
    await this.redis
      .multi()
      .hSet(key, chatnetMessageId, JSON.stringify({ threadId: m.threadId, threadType: m.threadType, fromUid: m.fromUid }))
      .expire(key, HELD_TTL_S)
      .exec();
  }

  /** A message of the account's threads: one a contact sent it (recordInbound) or one it sent; undefined when unknown. */
  async messageOf(accountId: string, ownUid: string, chatnetMessageId: string): Promise<KnownMessage | undefined> {
    const raw = await this.redis.hGet(this.inboundKey(accountId), chatnetMessageId);
    if (raw) return { ...(JSON.parse(raw) as Omit<KnownMessage, 'inbound'>), inbound: true };
    const sent = (await this.sentBy(accountId)).find((m) => m.chatnetMessageId === chatnetMessageId);
    return sent ? { threadId: sent.threadId, threadType: sent.threadType as ThreadType, fromUid: ownUid, inbound: false } : undefined;
  }

  /** The account recalls a message it sent; false when it sent no such message (or recalled it already). */
  async recordRecall(accountId: string, chatnetMessageId: string, at: Date): Promise<boolean> {
    const sent = (await this.sentBy(accountId)).find((m) => m.chatnetMessageId === chatnetMessageId);
    if (!sent || sent.recalledAt) return false;
    await this.redis.hSet(this.recallsKey(accountId), chatnetMessageId, at.toISOString());
    return true;
  }

  /** The account's own reaction on a message of its threads ('' takes it back). */
  async recordAgentReaction(accountId: string, chatnetMessageId: string, emoji: string): Promise<void> {
    const key = `${this.p}agent-reactions:${accountId}`;
    if (emoji) await this.redis.hSet(key, chatnetMessageId, emoji);
    else await this.redis.hDel(key, chatnetMessageId);
  }

  // ---- used by the driver ----

  private sessionKey(token: string): string {
    return `${this.p}session:${token}`;
  }

  awaitScan(accountId: string, token: string, scanned: (profile: ChatnetProfile) => void): void {
    this.pendingLogins.set(accountId, { token, scanned });
  }

  stopWaiting(accountId: string, token: string): void {
    if (this.pendingLogins.get(accountId)?.token === token) this.pendingLogins.delete(accountId);
  }

  async issueSession(profile: ChatnetProfile): Promise<string> {
    const token = randomBase62(32);
    await this.redis.set(this.sessionKey(token), JSON.stringify(profile));
    return token;
  }

  async profileOf(token: string): Promise<ChatnetProfile | null> {
    const raw = await this.redis.get(this.sessionKey(token));
    return raw ? (JSON.parse(raw) as ChatnetProfile) : null;
  }

  attach(accountId: string, session: SandboxSession): void {
    this.sessions.get(accountId)?.cut({ reason: 'replaced', sessionExpired: false });
    this.sessions.set(accountId, session);
    // A message kept just after this connection's first look would otherwise wait for the next one.
    this.sweepTimer ??= setInterval(() => {
      for (const s of this.sessions.values()) s.takeHeld();
    }, HELD_SWEEP_MS).unref();
    session.takeHeld();
  }

  detach(accountId: string, session: SandboxSession): void {
    if (this.sessions.get(accountId) === session) this.sessions.delete(accountId);
  }

  /** The newest first, as sentBy. */
  async seenByAgent(accountId: string): Promise<SeenByAgentRecord[]> {
    const raw = await this.redis.lRange(`${this.p}seen-by-agent:${accountId}`, 0, SENT_KEEP - 1);
    return raw.map((r) => JSON.parse(r) as SeenByAgentRecord);
  }

  async recordSeenByAgent(accountId: string, record: SeenByAgentRecord): Promise<void> {
    const key = `${this.p}seen-by-agent:${accountId}`;
    await this.redis
      .multi()
      .lPush(key, JSON.stringify(record))
      .lTrim(key, 0, SENT_KEEP - 1)
      .exec();
  }

  async recordSent(accountId: string, record: SentRecord): Promise<void> {
    const key = `${this.p}sent:${accountId}`;
    await this.redis
      .multi()
      .lPush(key, JSON.stringify(record))
      .lTrim(key, 0, SENT_KEEP - 1)
      .exec();
  }
}

class SandboxSession implements ChatnetSession {
  private alive = true;
  private taking?: Promise<void>;
  private takeAgain = false;

  constructor(
    private readonly network: SandboxNetwork,
    private readonly accountId: string,
    readonly token: string,
    readonly profile: ChatnetProfile,
    private readonly handlers: SessionHandlers,
  ) {
    network.attach(accountId, this);
  }

  get sessionData(): string {
    return JSON.stringify({ v: 1, token: this.token });
  }

  isAlive(): boolean {
    return this.alive;
  }

  async sendMessage(m: OutboundMessage): Promise<{ chatnetMessageId: string; sentAt: Date }> {
    if (!this.alive) throw new Error('sandbox connection is closed');
    // A user who takes messages only from friends refuses the account's until it is one.
    if (m.threadType === 'user' && !(await this.network.mayMessage(this.profile.uid, m.threadId))) {
      throw new FriendRequiredError('The recipient accepts messages only from friends');
    }
    const attachments: SentRecord['attachments'] = [];
    // One file at a time, as a network client uploads them.
    for (const file of m.attachments ?? []) attachments.push(await receiveFile(file));
    const sentAt = new Date();
    const chatnetMessageId = networkMessageId();
    const { threadId, threadType, content, contentType } = m;
    if (m.quote) {
      // The network quotes only a message of the same thread.
      const quoted = await this.network.messageOf(this.accountId, this.profile.uid, m.quote.chatnetMessageId);
      if (!quoted || quoted.threadId !== threadId || quoted.threadType !== threadType)
        throw new Error('the quoted message is not a message of this thread');
    }
    await this.network.recordSent(this.accountId, {
      chatnetMessageId,
      threadId,
      threadType,
      content,
      contentType,
      sentAt: sentAt.toISOString(),
      attachments,
      quote: m.quote ? { chatnetMessageId: m.quote.chatnetMessageId } : null,
    });
    return { chatnetMessageId, sentAt };
  }

  /** Like the real network: only a message this account sent to that thread, once. */
  async recall(ref: MessageRef): Promise<void> {
    if (!this.alive) throw new Error('sandbox connection is closed');
    const known = await this.network.messageOf(this.accountId, this.profile.uid, ref.chatnetMessageId);
    if (!known || known.inbound || known.threadId !== ref.threadId || known.threadType !== ref.threadType)
      throw new Error('no such message sent by this account');
    if (!(await this.network.recordRecall(this.accountId, ref.chatnetMessageId, new Date()))) throw new Error('the message was recalled already');
  }

  /** A reaction on a message of one of the account's threads ('' takes it back). */
  async react(ref: MessageRef, emoji: string): Promise<void> {
    if (!this.alive) throw new Error('sandbox connection is closed');
    const known = await this.network.messageOf(this.accountId, this.profile.uid, ref.chatnetMessageId);
    if (!known || known.threadId !== ref.threadId || known.threadType !== ref.threadType) throw new Error('no such message in this thread');
    await this.network.recordAgentReaction(this.accountId, ref.chatnetMessageId, emoji);
  }

  listFriends(): Promise<Friend[]> {
    return this.network.friendsOf(this.profile.uid);
  }

  async findUserByPhone(phone: string): Promise<NetworkUser | null> {
    return this.findUser({ phone });
  }

  async findUser(query: UserQuery): Promise<NetworkUser | null> {
    if (!this.alive) throw new Error('sandbox connection is closed');
    const user = 'phone' in query ? await this.network.userByPhone(query.phone) : await this.network.userByUid(query.uid);
    return user ? { uid: user.uid, displayName: user.displayName, avatarUrl: '' } : null;
  }

  async sendFriendRequest(uid: string, message: string): Promise<void> {
    if (!this.alive) throw new Error('sandbox connection is closed');
    if (!(await this.network.userByUid(uid))) throw new Error('no such user on the network');
    await this.network.requestFriend(this.profile.uid, uid, message);
  }

  /** The network tells the connection a user accepted its friend request (`traceparent`: the control call's, Pushed). */
  friendAccepted(uid: string, traceparent?: string): Promise<void> {
    return this.handlers.onFriendRequestAccepted(uid, traceparent);
  }

  /** Like the real network, a message must be named by both its ids; at most 50 of one thread at a time. */
  async markSeen(threadId: string, threadType: ThreadType, messages: ReadMessage[]): Promise<void> {
    if (!this.alive) throw new Error('sandbox connection is closed');
    if (messages.length === 0 || messages.length > 50) throw new Error('between 1 and 50 messages may be marked seen at once');
    if (messages.some((m) => !m.chatnetMessageId || !m.cliMsgId)) throw new Error('every message needs its msgId and cliMsgId');
    await this.network.recordSeenByAgent(this.accountId, {
      threadId,
      threadType,
      messages: messages.map((m) => ({
        chatnetMessageId: m.chatnetMessageId,
        cliMsgId: m.cliMsgId,
        fromUid: m.fromUid,
        sentAt: m.sentAt.toISOString(),
      })),
      at: new Date().toISOString(),
    });
  }

  async disconnect(): Promise<void> {
    this.alive = false;
    this.network.detach(this.accountId, this);
  }

  /** Take the messages the network kept for this account; one pass at a time, another after if asked meanwhile. */
  takeHeld(): void {
    if (!this.alive) return;
    if (this.taking) {
      this.takeAgain = true;
      return;
    }
    this.taking = (async () => {
      do {
        this.takeAgain = false;
        await this.network.handOverHeld(this.accountId, this);
      } while (this.takeAgain && this.alive);
    })()
      // A message the connector could not record stays kept: the next sweep hands it over again.
      .catch(() => undefined)
      .finally(() => (this.taking = undefined));
  }

  receive(message: InboundMessage): Promise<void> {
    return this.handlers.onMessage(message);
  }

  readBy(receipt: SeenReceipt): Promise<void> {
    return this.handlers.onSeen(receipt);
  }

  recalledBy(notice: RecallNotice): Promise<void> {
    return this.handlers.onRecall(notice);
  }

  reactedBy(notice: ReactionNotice): Promise<void> {
    return this.handlers.onReaction(notice);
  }

  cut(info: DisconnectInfo): void {
    if (!this.alive) return;
    this.alive = false;
    this.network.detach(this.accountId, this);
    this.handlers.onDisconnect(info);
  }
}

export class SandboxDriver implements ChatnetDriver {
  readonly name = 'sandbox';

  constructor(
    readonly network: SandboxNetwork,
    private readonly qrTtlMs: number,
    private readonly maxRefreshes: number,
  ) {}

  async loginWithQr(opts: QrLoginOptions): Promise<ChatnetSession> {
    for (let shown = 0; shown <= this.maxRefreshes; shown++) {
      if (opts.signal.aborted) throw new LoginFailedError('aborted', 'QR login was cancelled');
      const qrToken = randomBytes(16).toString('hex');
      let onScan!: (profile: ChatnetProfile) => void;
      const scanned = new Promise<ChatnetProfile>((resolve) => (onScan = resolve));
      this.network.awaitScan(opts.accountId, qrToken, onScan);
      try {
        await opts.onQr({ code: `chatnet-sandbox://login/${qrToken}`, expiresAt: new Date(Date.now() + this.qrTtlMs) });
        const profile = await waitFor(scanned, this.qrTtlMs, opts.signal);
        if (profile) {
          const token = await this.network.issueSession(profile);
          return new SandboxSession(this.network, opts.accountId, token, profile, opts.handlers);
        }
      } finally {
        this.network.stopWaiting(opts.accountId, qrToken);
      }
      if (opts.signal.aborted) throw new LoginFailedError('aborted', 'QR login was cancelled');
    }
    throw new LoginFailedError('qr_expired', 'No QR code was scanned before the last one expired');
  }

  async restoreSession(sessionData: string, opts: ConnectOptions): Promise<ChatnetSession> {
    let token: string | undefined;
    try {
      token = (JSON.parse(sessionData) as { token?: string }).token;
    } catch {
      /* unreadable session data is as good as expired */
    }
    const profile = token ? await this.network.profileOf(token) : null;
    if (!token || !profile) throw new SessionExpiredError('The network no longer accepts this session; log in with a QR code again');
    return new SandboxSession(this.network, opts.accountId, token, profile, opts.handlers);
  }

  async close(): Promise<void> {
    this.network.close();
  }
}

function directoryUser(raw: string): DirectoryUser {
  const u = JSON.parse(raw) as Partial<DirectoryUser> & NetworkUser;
  // Entries registered before acceptsStrangers existed took messages from anyone.
  return { uid: u.uid, displayName: u.displayName, acceptsStrangers: u.acceptsStrangers !== false };
}

/** The value, or undefined when the time runs out or the signal aborts. */
function waitFor<T>(promise: Promise<T>, ms: number, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve) => {
    const done = (v: T | undefined) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    };
    const onAbort = () => done(undefined);
    const timer = setTimeout(() => done(undefined), ms);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(done); // given only promises that cannot reject (a scan), so no rejection handler
  });
}
