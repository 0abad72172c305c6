/**
 * What the connector needs from a chat network. One implementation per network: `sandbox` (simulated,
 * default) and `zca` (the real network through the zca-js client). The session pool owns the sessions;
 * a driver never touches the database, Redis leases or events.
 */
import type { Readable } from 'node:stream';
import type { ParsedEventData } from '@crm/events';

export type ThreadType = 'user' | 'group';

export interface ChatnetProfile {
  uid: string;
  displayName: string;
  avatarUrl: string;
  phone: string;
}

/** One QR code of a login. A network renders it (`image`, PNG base64 or data URL) or gives its text (`code`). */
export interface QrCode {
  code?: string;
  image?: string;
  expiresAt: Date;
}

/**
 * A message from the network as a driver hands it over: the `chatnet.inbound` event's data (its one schema, in
 * packages/events) without the account (the session pool adds it), with the time as a Date and the stored files
 * (the event names them; the bytes never travel with it). The optional fields: `groupName`, the group's name as the
 * network calls it (group threads; absent when the network did not say: a driver never holds a message back for it);
 * `cliMsgId`, the sender's own id of the message (zca: `cliMsgId`), which the network wants back when the account
 * tells it the message was read; `fromSelf`, the account itself wrote it elsewhere than through the CRM (never set
 * for a message the CRM sent through this session: the session skips those echoes); `quoteChatnetMessageId`, the
 * network id of the message of the same thread this one quotes.
 */
export type InboundMessage = Omit<ParsedEventData<'chatnet.inbound'>, 'accountId' | 'sentAt' | 'attachments' | 'threadType'> & {
  threadType: ThreadType;
  sentAt: Date;
  attachments?: StoredAttachment[];
} & Pushed;

/**
 * The trace a piece of news continues, when a call caused it: only the sandbox's control API pushes news for a call
 * (its `traceparent`, which the news's event keeps); news from a network starts a trace of its own. Explicit, since
 * the connector runs without an active context (main.ts).
 */
export interface Pushed {
  traceparent?: string;
}

/** A message of a thread as a recall or a reaction names it: the network's id and the sender's own id (when known). */
export interface MessageRef {
  threadId: string;
  threadType: ThreadType;
  chatnetMessageId: string;
  /** Empty when the CRM does not know it (a message it sent: the network gave only its own id back). */
  cliMsgId: string;
}

/** The message a send quotes, as the network needs it named (zca-js SendMessageQuote). */
export interface QuotedMessage {
  chatnetMessageId: string;
  /** Empty when unknown. */
  cliMsgId: string;
  /** The contact's uid; empty for the account's own message. */
  fromUid: string;
  content: string;
  contentType: string;
  sentAt: Date;
}

/** The network says a message was recalled by whoever sent it. */
export interface RecallNotice extends Pushed {
  threadId: string;
  threadType: ThreadType;
  chatnetMessageId: string;
  /** Who recalled it (its sender). */
  fromUid: string;
  recalledAt: Date;
}

/** The network says a member of a thread reacted to a message (or took the reaction back: emoji ''). */
export interface ReactionNotice extends Pushed {
  threadId: string;
  threadType: ThreadType;
  chatnetMessageId: string;
  fromUid: string;
  emoji: string;
  at: Date;
}

/** A message of the contact the agent read in the CRM, as the network needs it named to mark it seen. */
export interface ReadMessage {
  chatnetMessageId: string;
  cliMsgId: string;
  fromUid: string;
  contentType: string;
  sentAt: Date;
}

/** A file stored in messaging: its attachment id and what it is. */
export interface StoredAttachment {
  id: string;
  fileName: string;
  mimeType: string;
  size: number;
}

/** A file a driver received from the network, to store before its message is announced. */
export interface ReceivedFile {
  fileName: string;
  mimeType: string;
  /** The bytes as they arrive (a download in progress); read once. */
  body: Readable;
}

/**
 * A read receipt from the network: the recipient opened the thread and saw messages our account sent.
 * Networks name the messages read (often only the newest one), never a range.
 */
export interface SeenReceipt extends Pushed {
  threadId: string;
  threadType: ThreadType;
  /** The network ids of the messages seen, as the network names them. */
  chatnetMessageIds: string[];
  /** Who read them, when the network says (the member of a group; the other party of a user thread). */
  seenByUid?: string;
  seenAt: Date;
}

export interface OutboundMessage {
  threadId: string;
  threadType: ThreadType;
  /** May be empty when the message is files only. */
  content: string;
  contentType: string;
  /** Files to send with the text, in order (at most 10). */
  attachments?: OutboundFile[];
  /** The message of the thread this one replies to. */
  quote?: QuotedMessage;
}

/** A file to send: what it is, and its bytes, streamed from messaging when the driver asks (once per call). */
export interface OutboundFile {
  fileName: string;
  mimeType: string;
  size: number;
  open(): Promise<Readable>;
}

export interface Friend {
  chatnetUid: string;
  displayName: string;
}

/** Who uses a phone number on the network, as a lookup from one of our accounts sees them. */
export interface NetworkUser {
  uid: string;
  displayName: string;
  /** The profile picture's URL, when the network gives one. */
  avatarUrl?: string;
}

/** A lookup of a network user: by phone (E.164 digits, no `+`) or by uid. */
export type UserQuery = { phone: string } | { uid: string };

export interface DisconnectInfo extends Pushed {
  reason: string;
  /** The stored session can no longer be restored: a new QR login is needed. */
  sessionExpired: boolean;
}

/** Callbacks the pool gives each session. onMessage and onSeen resolve once the news is durably recorded. */
export interface SessionHandlers {
  onMessage(message: InboundMessage): Promise<void>;
  /** Store a file the network delivered (in messaging), so the message can name it; rejects when it was refused. */
  storeFile(file: ReceivedFile): Promise<StoredAttachment>;
  onSeen(receipt: SeenReceipt): Promise<void>;
  /** A message of one of the account's threads was recalled by its sender; resolves once recorded. */
  onRecall(notice: RecallNotice): Promise<void>;
  /** A member of a thread reacted to a message (or took it back); resolves once recorded. */
  onReaction(notice: ReactionNotice): Promise<void>;
  onDisconnect(info: DisconnectInfo): void;
  onFriendsChanged(): void;
  /**
   * A user accepted a friend request the account sent (the network told the session); resolves once recorded.
   * `traceparent`: the sandbox control call that accepted it (Pushed).
   */
  onFriendRequestAccepted(uid: string, traceparent?: string): Promise<void>;
}

export interface ChatnetSession {
  readonly profile: ChatnetProfile;
  /** Serialized credentials to store (encrypted) and restore from later. */
  readonly sessionData: string;
  isAlive(): boolean;
  sendMessage(message: OutboundMessage): Promise<{ chatnetMessageId: string; sentAt: Date }>;
  listFriends(): Promise<Friend[]>;
  /**
   * The network user whose phone number this is (`phone`: E.164 digits, no `+`), or null when the network knows
   * no user by it. Rejects when the network could not be asked (the caller tries again later).
   */
  findUserByPhone(phone: string): Promise<NetworkUser | null>;
  /** findUserByPhone, or the profile of a uid; null when the network knows no such user. */
  findUser(query: UserQuery): Promise<NetworkUser | null>;
  /** Ask the user to become the account's friend, with a message they read; rejects when the network refused. */
  sendFriendRequest(uid: string, message: string): Promise<void>;
  /** Tell the network the account read these messages of one thread (at most 50), so the contact sees them read. */
  markSeen(threadId: string, threadType: ThreadType, messages: ReadMessage[]): Promise<void>;
  /** Recall (take back) a message the account sent; rejects when the network refused (too old, unknown). */
  recall(message: MessageRef): Promise<void>;
  /** The account's reaction on a message of a thread; an empty emoji takes it back. */
  react(message: MessageRef, emoji: string): Promise<void>;
  /** Close the live connection from our side; onDisconnect is not called. */
  disconnect(): Promise<void>;
}

export interface ConnectOptions {
  accountId: string;
  /** Each session dials through its own proxy agent; never a process-wide proxy variable. */
  proxyUrl?: string;
  handlers: SessionHandlers;
}

export interface QrLoginOptions extends ConnectOptions {
  /** Called for the first code and for every fresh code after one expires. */
  onQr(qr: QrCode): Promise<void>;
  signal: AbortSignal;
}

export interface ChatnetDriver {
  readonly name: string;
  /** Show QR codes until one is scanned (→ the new live session) or the login gives up (LoginFailedError). */
  loginWithQr(opts: QrLoginOptions): Promise<ChatnetSession>;
  /** Connect from stored session data; SessionExpiredError when the network no longer accepts it. */
  restoreSession(sessionData: string, opts: ConnectOptions): Promise<ChatnetSession>;
  close(): Promise<void>;
}

export class SessionExpiredError extends Error {
  override readonly name = 'SessionExpiredError';
}

export class LoginFailedError extends Error {
  override readonly name = 'LoginFailedError';
  constructor(
    readonly reason: 'qr_expired' | 'qr_declined' | 'aborted' | 'network_error',
    message: string,
  ) {
    super(message);
  }
}

/** The recipient takes messages only from friends (the network refused a message from a stranger). */
export class FriendRequiredError extends Error {
  override readonly name = 'FriendRequiredError';
}
