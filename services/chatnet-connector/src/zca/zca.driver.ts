import type { Agent } from 'node:http';
import type { Readable } from 'node:stream';
import type { Logger } from '@crm/logger';
import { RefusedAddressError } from '@crm/net-guard';
import { FriendEventType, Reactions, ThreadType } from 'zca-js';
import type {
  API,
  AttachmentSource,
  Credentials,
  FriendEvent,
  GetFriendRequestStatusResponse,
  GroupInfoResponse,
  LoginQRCallbackEvent,
  Message,
  Reaction,
  SeenMessage,
  SendMessageQuote,
  Undo,
  SendSeenEventMessageParams,
  TAttachmentContent,
  User,
  UserInfoResponse,
  Zalo,
} from 'zca-js';
import {
  ChatnetDriver,
  ChatnetProfile,
  ChatnetSession,
  ConnectOptions,
  Friend,
  type InboundMedia,
  InboundMessage,
  LoginFailedError,
  MediaRefusedError,
  MessageRef,
  NetworkUser,
  OutboundFile,
  OutboundMessage,
  QrLoginOptions,
  QuotedMessage,
  ReactionNotice,
  ReadMessage,
  RecallNotice,
  SeenReceipt,
  SessionExpiredError,
  SessionHandlers,
  UserQuery,
} from '../drivers';
import { GroupNames } from './group-names';
import { findUserByPhone, type ZcaPhoneApi } from './phone-lookup';
import { fileNameForNetwork, imageSize, mimeTypeOf } from './file-kinds';
import { isSessionRefused } from './zca-errors';
import { SenderProfile, SenderProfiles } from './sender-profiles';

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

/**
 * The slice of zca-js this driver uses, named by zca-js's own published types: a change of the library's
 * shapes fails the build here instead of misbehaving at run time. Tests build fakes of these types.
 */
export type ZcaApi = Pick<
  API,
  | 'getOwnId'
  | 'fetchAccountInfo'
  | 'getAllFriends'
  | 'getGroupInfo'
  | 'getUserInfo'
  | 'sendMessage'
  | 'sendSeenEvent'
  | 'getContext'
  | 'undo'
  | 'addReaction'
  | 'sendFriendRequest'
  | 'getFriendRequestStatus'
> &
  ZcaPhoneApi & {
    listener: ZcaListener;
  };
/** The listener's events (`message`, `old_messages`, `seen_messages`, `closed`, …) as zca-js types them. */
export type ZcaListener = Pick<API['listener'], 'on' | 'start' | 'stop' | 'requestOldMessages'>;
export type ZcaQrEvent = LoginQRCallbackEvent;
export type ZcaCredentials = Credentials;
/** A listener message (models/Message.ts): `UserMessage` or `GroupMessage`. */
export type ZcaMessage = Message;
/** One entry of the listener's `seen_messages` (models/SeenMessage.ts). */
export type ZcaSeenMessage = SeenMessage;
/** The listener's `undo` (models/Undo.ts): a message recalled by its sender. */
export type ZcaUndo = Undo;
/** The listener's `reaction` (models/Reaction.ts). */
export type ZcaReaction = Reaction;
export type ZcaUser = User;
/** zca-js models/Attachment.ts, the Buffer form (a path would need zca-js's imageMetadataGetter for photos). */
export type ZcaAttachmentSource = Exclude<AttachmentSource, string>;
/** zca-js models/Message.ts `TAttachmentContent`: what a photo or file message carries instead of text. */
export type ZcaAttachmentContent = Partial<TAttachmentContent>;
/** zca-js's `Zalo` as the driver uses it: its two logins, whose API it uses only through ZcaApi. */
export interface ZcaClient {
  login(credentials: ZcaCredentials): Promise<ZcaApi>;
  loginQR(...args: Parameters<Zalo['loginQR']>): Promise<ZcaApi>;
}

/** Builds one zca-js client per session, each with its own proxy agent. */
export type ZaloClientFactory = (opts: { agent?: Agent; fetch?: typeof fetch }) => ZcaClient;

/**
 * The production binding: zca-js's `Zalo`, with its update check (a call to the npm registry) off and the account's
 * own messages on (`selfListen`): what the agent types on the phone shows in the CRM as outbound; the session
 * skips the echoes of its own sends.
 */
export function zcaClientFactory(): ZaloClientFactory {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Zalo: Client } = require('zca-js') as typeof import('zca-js');
  return ({ agent, fetch: polyfill }) =>
    new Client({ selfListen: true, checkUpdate: false, logging: false, ...(agent ? { agent } : {}), ...(polyfill ? { polyfill } : {}) });
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
  /** Downloads of the photos and files messages carry (media hosts only, SSRF guard, size cap): drivers/media-download.ts. */
  media: InboundMedia;
}

export class ZcaDriver implements ChatnetDriver {
  readonly name = 'zca';
  private readonly factory: ZaloClientFactory;

  constructor(private readonly o: ZcaDriverOptions) {
    this.factory = o.factory ?? zcaClientFactory();
  }

  /** One client per session, and the agent its downloads reach the network with (the account's proxy; none: direct). */
  private client(proxyUrl?: string): { client: ZcaClient; via?: Agent } {
    if (!proxyUrl) return { client: this.factory({}) };
    if (!this.o.proxy) throw new Error('This build has no proxy support for the zca driver');
    const dialed = this.o.proxy(proxyUrl);
    return { client: this.factory(dialed), via: dialed.agent };
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
    let via: Agent | undefined;
    try {
      // Inside the try: a proxy the SSRF guard refuses is a failed login like any other network failure.
      const dialed = this.client(opts.proxyUrl);
      via = dialed.via;
      api = await dialed.client.loginQR({}, (event) => {
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
      throw (
        failure ??
        (err instanceof LoginFailedError ? err : new LoginFailedError('network_error', `QR login failed: ${(err as Error)?.message ?? err}`))
      );
    } finally {
      opts.signal.removeEventListener('abort', onAbort);
    }
    if (failure || !api) throw failure ?? new LoginFailedError('network_error', 'QR login returned no session');
    return this.open(api, opts.handlers, via, { catchUp: false });
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
    let via: Agent | undefined;
    try {
      const dialed = this.client(opts.proxyUrl);
      via = dialed.via;
      api = await dialed.client.login({
        imei: stored.imei,
        cookie: stored.cookie as ZcaCredentials['cookie'],
        userAgent: stored.userAgent,
        language: stored.language,
      });
    } catch (err) {
      // The network refused the cookies (logged out, expired): a new QR login is needed. Anything else (DNS, TLS,
      // proxy, an HTTP error of the network) is temporary and retried by the pool.
      if (isSessionRefused(err)) throw new SessionExpiredError(`The network refused the stored session: ${err.message}`);
      throw err;
    }
    // A restore follows a drop (or a move between instances): what arrived meanwhile is asked for once connected.
    return this.open(api, opts.handlers, via, { catchUp: true });
  }

  private async open(api: ZcaApi, handlers: SessionHandlers, via: Agent | undefined, opts: { catchUp: boolean }): Promise<ChatnetSession> {
    const uid = api.getOwnId();
    const { profile } = await api.fetchAccountInfo();
    const session = new ZcaSession(
      api,
      { uid, displayName: profile.displayName || profile.zaloName || uid, avatarUrl: profile.avatar ?? '', phone: profile.phoneNumber ?? '' },
      handlers,
      this.o.log,
      { media: this.o.media, via },
    );
    await session.listen(opts);
    return session;
  }

  async close(): Promise<void> {}
}

/**
 * Text of a zca-js message: plain text as is; anything else (photo, sticker, link) as JSON with its msgType. The
 * account's own messages name their sender "0" (zca-js's thread is then the recipient): they are named `ownUid`.
 */
export function inboundOf(m: ZcaMessage, ownUid = ''): InboundMessage {
  const text = typeof m.data.content === 'string';
  return {
    chatnetMessageId: String(m.data.msgId),
    threadId: m.threadId,
    threadType: m.type === ZCA.threadGroup ? 'group' : 'user',
    fromUid: m.isSelf && ownUid ? ownUid : m.data.uidFrom,
    fromName: m.data.dName ?? '',
    fromAvatar: '',
    content: text ? (m.data.content as string) : JSON.stringify(m.data.content),
    contentType: text ? 'text' : m.data.msgType || 'other',
    sentAt: new Date(Number(m.data.ts) || Date.now()),
    ...(m.data.cliMsgId ? { cliMsgId: String(m.data.cliMsgId) } : {}),
    ...(m.isSelf ? { fromSelf: true } : {}),
    ...(quotedIdOf(m) ? { quoteChatnetMessageId: quotedIdOf(m) } : {}),
  };
}

/** The network id of the message a reply quotes (zca-js TQuote.globalMsgId); '' when it quotes none. */
function quotedIdOf(m: ZcaMessage): string {
  const id = m.data.quote?.globalMsgId;
  return id === undefined || id === null || String(id) === '0' ? '' : String(id);
}

/**
 * Reactions as the network names them (zca-js `Reactions`), by the emoji the CRM shows. The network has a fixed set:
 * an emoji outside it cannot be sent, and a network reaction without an emoji here arrives as its own code.
 */
export const EMOJI_REACTIONS: Readonly<Record<string, Reactions>> = {
  '❤️': Reactions.HEART,
  '👍': Reactions.LIKE,
  '😆': Reactions.HAHA,
  '😮': Reactions.WOW,
  '😢': Reactions.CRY,
  '😡': Reactions.ANGRY,
  '😘': Reactions.KISS,
  '😂': Reactions.TEARS_OF_JOY,
  '💩': Reactions.SHIT,
  '🌹': Reactions.ROSE,
  '💔': Reactions.BROKEN_HEART,
  '👎': Reactions.DISLIKE,
  '😍': Reactions.LOVE,
  '😕': Reactions.CONFUSED,
  '😉': Reactions.WINK,
  '☀️': Reactions.SUN,
  '🎂': Reactions.BIRTHDAY,
  '💣': Reactions.BOMB,
  '👌': Reactions.OK,
  '✌️': Reactions.PEACE,
  '🙏': Reactions.PRAY,
  '👊': Reactions.PUNCH,
  '👏': Reactions.HANDCLAP,
  '😎': Reactions.COOL,
  '🍺': Reactions.BEER,
};
const EMOJI_OF_REACTION = new Map<string, string>(Object.entries(EMOJI_REACTIONS).map(([emoji, code]) => [code, emoji]));
const NETWORK_CODES = new Set<string>(Object.values(Reactions));

/** The network's reaction for an emoji ('' takes the reaction back: `Reactions.NONE`); undefined when it has none. */
export function reactionCodeOf(emoji: string): Reactions | undefined {
  if (emoji === '') return Reactions.NONE;
  return EMOJI_REACTIONS[emoji] ?? EMOJI_REACTIONS[`${emoji}\uFE0F`] ?? (NETWORK_CODES.has(emoji) ? (emoji as Reactions) : undefined);
}

/** The emoji of a network reaction code (its own code when the CRM has no emoji for it; '' when it was taken back). */
export function emojiOfReaction(code: string): string {
  return code === Reactions.NONE ? '' : (EMOJI_OF_REACTION.get(code) ?? code);
}

/**
 * A recall from the listener's `undo`: the recalled message is `content.globalMsgId`, its thread the Undo's. Undefined
 * when it names no message.
 */
export function recallOf(u: ZcaUndo, at = new Date()): RecallNotice | undefined {
  const id = u.data.content?.globalMsgId;
  if (id === undefined || id === null || String(id) === '0' || !u.threadId) return undefined;
  const ts = Number(u.data.ts);
  return {
    threadId: String(u.threadId),
    threadType: u.isGroup ? 'group' : 'user',
    chatnetMessageId: String(id),
    fromUid: String(u.data.uidFrom),
    recalledAt: Number.isFinite(ts) && ts > 0 ? new Date(ts) : at,
  };
}

/**
 * Reactions from the listener's `reaction`: one per message it names (`content.rMsg`). The account's own (`isSelf`:
 * the echo of a reaction the CRM sent, or one from its phone) are none of the contact's.
 */
export function reactionsOf(r: ZcaReaction, at = new Date()): ReactionNotice[] {
  if (r.isSelf || !r.threadId) return [];
  const ts = Number(r.data.ts);
  const when = Number.isFinite(ts) && ts > 0 ? new Date(ts) : at;
  const emoji = emojiOfReaction(r.data.content?.rIcon ?? '');
  return (r.data.content?.rMsg ?? [])
    .map((m) => String(m.gMsgID ?? ''))
    .filter((id) => id !== '' && id !== '0')
    .map((chatnetMessageId) => ({
      threadId: String(r.threadId),
      threadType: r.isGroup ? ('group' as const) : ('user' as const),
      chatnetMessageId,
      fromUid: String(r.data.uidFrom),
      emoji,
      at: when,
    }));
}

/**
 * What zca-js's sendMessage needs of the message a reply quotes (SendMessageQuote): a text message's network type is
 * `webchat` with its text; any other keeps its type, and its content as inboundOf wrote it (JSON). The account's own
 * message names the account as its sender.
 */
export function quoteOf(q: QuotedMessage, ownUid: string, cliMsgId: string): SendMessageQuote {
  const text = q.contentType === 'text';
  let content: SendMessageQuote['content'] = q.content;
  if (!text) {
    try {
      content = JSON.parse(q.content) as SendMessageQuote['content'];
    } catch {
      content = q.content;
    }
  }
  return {
    content,
    msgType: text ? 'webchat' : q.contentType,
    propertyExt: undefined,
    uidFrom: q.fromUid || ownUid,
    msgId: q.chatnetMessageId,
    cliMsgId,
    ts: String(q.sentAt.getTime()),
    ttl: 0,
  };
}

/** zca-js's limit of one sendSeenEvent call. */
export const SEEN_EVENT_MAX = 50;

/**
 * What zca-js's sendSeenEvent needs of each message read: in a user thread the contact sent it to us (`uidFrom` is
 * the thread, `idTo` our uid), in a group to the group (`idTo` is the group). A text message's network type is
 * `webchat` (inboundOf calls it `text`); any other keeps the network's own type.
 */
export function seenEventOf(m: ReadMessage, threadId: string, threadType: 'user' | 'group', ownUid: string): SendSeenEventMessageParams {
  return {
    msgId: m.chatnetMessageId,
    cliMsgId: m.cliMsgId,
    uidFrom: threadType === 'group' ? m.fromUid : threadId,
    idTo: threadType === 'group' ? threadId : ownUid,
    msgType: m.contentType === 'text' ? 'webchat' : m.contentType,
    st: 0,
    at: 0,
    cmd: 0,
    ts: m.sentAt.getTime(),
  };
}

/** Message types whose content is a file the network hosts: a photo, or any other file. */
const FILE_MESSAGE_TYPES = new Set(['chat.photo', 'share.file']);

/** The file a photo or file message carries (where to download it, its name and type); undefined for anything else. */
export function inboundFileOf(m: ZcaMessage): { url: string; fileName: string; mimeType: string } | undefined {
  if (!FILE_MESSAGE_TYPES.has(m.data.msgType) || typeof m.data.content !== 'object' || m.data.content === null) return undefined;
  const c = m.data.content as ZcaAttachmentContent;
  let url: URL;
  try {
    url = new URL(c.href ?? '');
  } catch {
    return undefined;
  }
  // Whether it may be fetched (HTTPS, a media host) is the download's to judge, and to log when it is not.
  const fromUrl = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  const photo = m.data.msgType === 'chat.photo';
  // A file message is titled with its name; a photo has no name of its own.
  const given = photo ? '' : (c.title ?? '').trim();
  const ext = /\.([A-Za-z0-9]{1,8})$/.exec(given || fromUrl)?.[1]?.toLowerCase() ?? (photo ? 'jpg' : '');
  const fileName = given || (photo ? `photo-${m.data.msgId}.${ext}` : fromUrl || `file-${m.data.msgId}`);
  return { url: url.toString(), fileName, mimeType: mimeTypeOf(fileName) };
}

/**
 * A read receipt from a `seen_messages` entry; undefined for our own reads (another device of the account)
 * and for entries that name no message. Both ids of a user receipt are kept ("0" means none): messaging
 * matches whichever is the id the send returned.
 */
export function seenOf(m: ZcaSeenMessage, ownUid: string, at = new Date()): SeenReceipt | undefined {
  if (m.isSelf) return undefined;
  // The network's ids arrive as strings or numbers whatever the types say; both are read as text.
  const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  const group = m.type === ThreadType.Group;
  const threadId = text(m.threadId) || (m.type === ThreadType.Group ? text(m.data.groupId) : text(m.data.idTo));
  const ids = [...new Set([text(m.data.msgId), m.type === ThreadType.Group ? '' : text(m.data.realMsgId)])].filter((v) => v !== '' && v !== '0');
  if (!threadId || ids.length === 0) return undefined;
  // A group receipt lists everyone who saw the message so far; the newest reader is the last one.
  const readers = m.type === ThreadType.Group ? (m.data.seenUids ?? []).map(String).filter((u) => u !== ownUid) : [];
  const seenByUid = group ? readers[readers.length - 1] : threadId;
  return { threadId, threadType: group ? 'group' : 'user', chatnetMessageIds: ids, ...(seenByUid ? { seenByUid } : {}), seenAt: at };
}

/** The group's name from a getGroupInfo answer; undefined when the network left the group out (left, dissolved). */
export function groupNameOf(info: GroupInfoResponse | undefined, groupId: string): string | undefined {
  return info?.gridInfoMap?.[groupId]?.name || undefined;
}

/**
 * A user's name and avatar from a getUserInfo answer (`changed_profiles`, keyed by the uid, or by `<uid>_0` as
 * zca-js asks for it); undefined when the network left the user out.
 */
export function senderProfileOf(info: UserInfoResponse | undefined, uid: string): SenderProfile | undefined {
  const p = info?.changed_profiles?.[uid] ?? info?.changed_profiles?.[`${uid}_0`];
  if (!p) return undefined;
  return { displayName: p.displayName || p.zaloName || '', avatarUrl: p.avatar || '' };
}

/**
 * The uid of a user who accepted one of the account's friend requests, from a listener `friend_event`: an ADD the
 * account did not make itself (zca-js models/FriendEvent.ts: `data` is the new friend's uid). Undefined otherwise.
 */
export function acceptedFriendOf(event: FriendEvent | undefined): string | undefined {
  if (!event || event.type !== FriendEventType.ADD || event.isSelf) return undefined;
  return typeof event.data === 'string' && event.data ? event.data : undefined;
}

/** zca-js GetFriendRequestStatusResponse as the connector's request status. */
export function friendRequestStatusOf(r: GetFriendRequestStatusResponse): 'friend' | 'sent' | 'none' {
  if (r.is_friend === 1) return 'friend';
  if (r.is_requested === 1) return 'sent';
  return 'none';
}

/** A file being sent, read whole (zca-js uploads from a Buffer) but never more than its announced size. */
async function readFile(file: OutboundFile): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of await file.open()) {
    size += (chunk as Buffer).length;
    if (size > file.size) throw new Error(`file ${file.fileName} is larger than announced`);
    chunks.push(chunk as Buffer);
  }
  if (size !== file.size) throw new Error(`file ${file.fileName} arrived with ${size} bytes, not ${file.size}`);
  return Buffer.concat(chunks, size);
}

/** The last `max` ids seen, in arrival order: `add` answers false for one already there. */
class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly max: number) {}
  has(id: string): boolean {
    return this.ids.has(id);
  }
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}

/** The last `max` entries set, in arrival order. */
class RecentMap {
  private readonly map = new Map<string, string>();
  constructor(private readonly max: number) {}
  get(key: string): string | undefined {
    return this.map.get(key);
  }
  set(key: string, value: string): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

class ZcaSession implements ChatnetSession {
  private alive = false;
  private closedByUs = false;
  /** Per thread, the preparation of its latest message: the next one waits for it, so a thread keeps its order. */
  private readonly lanes = new Map<string, Promise<unknown>>();
  /** The network's listener names no group: its name is asked with getGroupInfo, once per group every few minutes. */
  private readonly groupNames: GroupNames;
  /** The listener's messages name their sender but carry no avatar: getUserInfo, once per user every few minutes. */
  private readonly senders: SenderProfiles;
  /** Messages handed over by this session (live or caught up), so one the network gives twice goes on once. */
  private readonly handed = new RecentIds(10_000);
  /** Per thread, the sends under way: the account's own message on that thread waits for them before it is judged. */
  private readonly sending = new Map<string, Set<Promise<unknown>>>();
  /** The ids our sends returned: their echoes (`selfListen`) are skipped, messaging stored them already. */
  private readonly sentIds = new RecentIds(10_000);
  /**
   * The sender's own id (cliMsgId) of each message seen on the listener, by network id. A send returns only the
   * network's id, yet a recall (`undo`), a reaction and a quote need both: the echo of the send brings the other.
   */
  private readonly cliMsgIds = new RecentMap(10_000);

  constructor(
    private readonly api: ZcaApi,
    readonly profile: ChatnetProfile,
    private readonly handlers: SessionHandlers,
    private readonly log: Logger,
    /** How this session downloads a message's file: through its proxy's agent (`via`) when the account has one. */
    private readonly files: { media: InboundMedia; via?: Agent },
  ) {
    this.groupNames = new GroupNames({
      lookup: async (groupId) => groupNameOf(await this.api.getGroupInfo(groupId), groupId),
      onError: (err, groupId) => this.log.warn({ err, groupId }, 'zca getGroupInfo failed; the message goes on without the group name'),
    });
    this.senders = new SenderProfiles({
      lookup: async (uid) => senderProfileOf(await this.api.getUserInfo(uid), uid),
      onError: (err, uid) => this.log.warn({ err, uid }, 'zca getUserInfo failed; the message goes on without the sender avatar'),
    });
  }

  /** The message with its sender's avatar (and name, when the message had none) from the network; never fails. */
  private async withSender(m: InboundMessage): Promise<InboundMessage> {
    if (m.fromSelf || m.fromUid === this.profile.uid)
      return { ...m, fromName: m.fromName || this.profile.displayName, fromAvatar: m.fromAvatar || this.profile.avatarUrl };
    if (!m.fromUid || m.fromUid === '0') return m;
    const p = await this.senders.profile(m.fromUid);
    if (!p) return m;
    return { ...m, fromName: m.fromName || p.displayName, fromAvatar: m.fromAvatar || p.avatarUrl };
  }

  /** The message with its group's name when it is a group's and the network says it; never fails. */
  private async withGroupName(m: InboundMessage): Promise<InboundMessage> {
    if (m.threadType !== 'group') return m;
    const groupName = await this.groupNames.name(m.threadId);
    return groupName ? { ...m, groupName } : m;
  }

  /**
   * A photo or file message with its file: downloaded from the network's media hosts (through the session's proxy when
   * it has one), streamed into messaging. A file that is refused (not HTTPS, not a media host, an address the SSRF guard
   * refuses) or cannot be had (gone, too large) leaves the message as it is, never holds it back. Logged by host only:
   * a file's URL may carry a token in its query.
   */
  private async withFile(raw: ZcaMessage, m: InboundMessage): Promise<InboundMessage> {
    const file = inboundFileOf(raw);
    if (!file) return m;
    let body: Readable | undefined;
    try {
      body = await this.files.media.download(file.url, this.files.via);
      const stored = await this.handlers.storeFile({ fileName: file.fileName, mimeType: file.mimeType, body });
      return { ...m, attachments: [stored] };
    } catch (err) {
      // A download messaging stopped reading (it refused the file) is closed now, not when its socket times out.
      body?.destroy();
      const refused = err instanceof MediaRefusedError || err instanceof RefusedAddressError;
      const host = new URL(file.url).hostname;
      this.log.warn(
        { err, chatnetMessageId: m.chatnetMessageId, host },
        refused
          ? 'the file of an inbound message was refused; the message goes on without it'
          : 'the file of an inbound message could not be stored; the message goes on without it',
      );
      return m;
    }
  }

  private remember(raw: ZcaMessage): void {
    if (raw.data.msgId && raw.data.cliMsgId) this.cliMsgIds.set(String(raw.data.msgId), String(raw.data.cliMsgId));
  }

  /** A message's cliMsgId: as messaging gave it, else as the listener brought it; the network needs one. */
  private cliMsgIdOf(chatnetMessageId: string, given: string): string {
    const id = given || this.cliMsgIds.get(chatnetMessageId);
    if (!id) throw new Error(`the sender id (cliMsgId) of message ${chatnetMessageId} is not known to this session`);
    return id;
  }

  /** Prepare a message (group name, file) after the thread's previous one, then hand it over in that order. */
  private receive(raw: ZcaMessage): void {
    this.remember(raw);
    if (!this.handed.add(`${raw.type}:${raw.data.msgId}`)) return;
    const key = `${raw.type}:${raw.threadId}`;
    const ready = (this.lanes.get(key) ?? Promise.resolve())
      .then(() => inboundOf(raw, this.profile.uid))
      .then((m) => this.withGroupName(m))
      .then((m) => this.withSender(m))
      .then((m) => this.withFile(raw, m));
    const done = ready.catch(() => undefined);
    this.lanes.set(key, done);
    void done.then(() => {
      if (this.lanes.get(key) === done) this.lanes.delete(key);
    });
    ready.then((message) => this.handlers.onMessage(message)).catch((err) => this.log.error({ err }, 'recording an inbound message failed'));
  }

  /**
   * The account's own message (typed on the phone, or the echo of a send of ours). Once the sends under way on its
   * thread returned their ids, an echo is skipped; anything else goes on as a message from the account itself.
   */
  private receiveSelf(raw: ZcaMessage): void {
    this.remember(raw);
    const pending = this.sending.get(`${raw.type}:${raw.threadId}`);
    const judge = () => {
      if (!this.sentIds.has(String(raw.data.msgId))) this.receive(raw);
    };
    if (!pending?.size) return judge();
    void Promise.allSettled([...pending]).then(judge);
  }

  /** Run a send, known as under way on its thread until it returned (sendAll remembers each id as it comes). */
  private async tracked(key: string, send: () => Promise<string[]>): Promise<string[]> {
    const running = send();
    let set = this.sending.get(key);
    if (!set) this.sending.set(key, (set = new Set()));
    set.add(running);
    try {
      return await running;
    } finally {
      set.delete(running);
      if (set.size === 0 && this.sending.get(key) === set) this.sending.delete(key);
    }
  }

  get sessionData(): string {
    const ctx = this.api.getContext();
    const stored: StoredSession = {
      v: 1,
      imei: ctx.imei,
      userAgent: ctx.userAgent,
      language: ctx.language,
      cookie: ctx.cookie.toJSON()?.cookies ?? [],
    };
    return JSON.stringify(stored);
  }

  /**
   * Start the listener and resolve once its WebSocket is open. With `catchUp` (a restore after a drop), ask the
   * network (once the socket's cipher key came) for the latest messages of user and group threads
   * (`requestOldMessages`): what arrived while the account was away comes back as `old_messages` and goes the way
   * of live messages, oldest first; what was already handed over (by id) is skipped here, and messaging stores a
   * message once per account and network id.
   */
  listen(opts: { catchUp: boolean } = { catchUp: false }): Promise<void> {
    const l = this.api.listener;
    return new Promise((resolve, reject) => {
      let opened = false;
      l.on('connected', () => {
        opened = true;
        this.alive = true;
        resolve();
      });
      // The network's first frame is the socket's cipher key, without which zca-js cannot read the answer: ask then, once.
      let askedOld = !opts.catchUp;
      l.on('cipher_key', () => {
        if (askedOld) return;
        askedOld = true;
        this.catchUp();
      });
      l.on('message', (m) => (m.isSelf ? this.receiveSelf(m) : this.receive(m)));
      l.on('old_messages', (messages) => {
        const list = Array.isArray(messages) ? [...messages] : [];
        for (const m of list.sort((a, b) => Number(a.data.ts) - Number(b.data.ts))) {
          if (m.isSelf) this.receiveSelf(m);
          else this.receive(m);
        }
      });
      l.on('seen_messages', (seen) => {
        for (const m of Array.isArray(seen) ? seen : []) {
          const receipt = seenOf(m, this.profile.uid);
          if (receipt) this.handlers.onSeen(receipt).catch((err) => this.log.error({ err }, 'recording a read receipt failed'));
        }
      });
      // A message recalled by its sender (the contact, or the account itself: from its phone, or the echo of a CRM recall).
      l.on('undo', (u) => {
        const notice = recallOf(u);
        if (notice) this.handlers.onRecall(notice).catch((err) => this.log.error({ err }, 'recording a recall failed'));
      });
      l.on('reaction', (r) => {
        for (const notice of reactionsOf(r)) this.handlers.onReaction(notice).catch((err) => this.log.error({ err }, 'recording a reaction failed'));
      });
      l.on('friend_event', (event) => {
        // A user we asked became a friend (ADD, not our own doing): the request is accepted.
        const accepted = acceptedFriendOf(event);
        if (accepted)
          this.handlers.onFriendRequestAccepted(accepted).catch((err) => this.log.error({ err }, 'recording an accepted friend request failed'));
        this.handlers.onFriendsChanged();
      });
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

  /** Ask for what arrived while disconnected; a request that cannot be sent is logged (the next restore asks again). */
  private catchUp(): void {
    for (const type of [ThreadType.User, ThreadType.Group]) {
      try {
        this.api.listener.requestOldMessages(type);
      } catch (err) {
        this.log.warn({ err, threadType: type }, 'zca requestOldMessages failed; messages that arrived while disconnected may be missing');
      }
    }
  }

  isAlive(): boolean {
    return this.alive;
  }

  /** The send is known by the id of its first message, text or file (see sendAll). */
  async sendMessage(m: OutboundMessage): Promise<{ chatnetMessageId: string; sentAt: Date }> {
    if (m.contentType !== 'text') throw new Error(`The zca driver sends text only, not ${m.contentType}`);
    const type = m.threadType === 'group' ? ZCA.threadGroup : ZCA.threadUser;
    const ids = await this.tracked(`${type}:${m.threadId}`, () => this.sendAll(m, type));
    if (!ids[0]) throw new Error('The network returned no message id');
    return { chatnetMessageId: ids[0], sentAt: new Date() };
  }

  /**
   * Text, then files. The first call carries the text and the first file (zca-js sends the text on its own, or as a
   * single photo's caption); every further file goes in a call of its own, so only one file is in memory at a time.
   * Answers every message id the network returned, the first message's first (the id the send is known by); each is
   * remembered as it comes, so the echo of a file already sent is skipped even when a later file fails.
   */
  private async sendAll(m: OutboundMessage, type: number): Promise<string[]> {
    const files = m.attachments ?? [];
    const ids: string[] = [];
    // A reply carries its quote on its first call (the text, or the first file with it).
    const quote = m.quote ? quoteOf(m.quote, this.profile.uid, this.cliMsgIdOf(m.quote.chatnetMessageId, m.quote.cliMsgId)) : undefined;
    const got = (list: Array<{ msgId?: unknown } | null | undefined>) => {
      for (const x of list) {
        if (x?.msgId === undefined || x.msgId === null) continue;
        ids.push(String(x.msgId));
        this.sentIds.add(String(x.msgId));
      }
    };
    if (files.length === 0) {
      got([(await this.api.sendMessage({ msg: m.content, ...(quote ? { quote } : {}) }, m.threadId, type)).message]);
      return ids;
    }
    for (const [i, file] of files.entries()) {
      const source = await this.sourceOf(file);
      const res = await this.api.sendMessage(
        { msg: i === 0 ? m.content : '', attachments: [source], ...(i === 0 && quote ? { quote } : {}) },
        m.threadId,
        type,
      );
      got([res.message, ...(res.attachment ?? [])]);
    }
    return ids;
  }

  /** A file as zca-js uploads it: a Buffer, a name with an extension (it picks photo or file by it), its size and a photo's dimensions. */
  private async sourceOf(file: OutboundFile): Promise<ZcaAttachmentSource> {
    const data = await readFile(file);
    return { data, filename: fileNameForNetwork(file.fileName, file.mimeType), metadata: { totalSize: data.length, ...imageSize(data) } };
  }

  /** Every friend in one call: zca-js asks for up to 20,000 at once by default, more than an account can have. */
  async listFriends(): Promise<Friend[]> {
    const users = await this.api.getAllFriends();
    return users.map((u) => ({ chatnetUid: u.userId, displayName: u.displayName || u.zaloName || u.userId }));
  }

  findUserByPhone(phone: string) {
    return findUserByPhone(this.api, phone);
  }

  /** By phone: findUser (zca-js apis/findUser.ts); by uid: the profile getUserInfo gives (none: not a user). */
  async findUser(query: UserQuery): Promise<NetworkUser | null> {
    if ('phone' in query) return findUserByPhone(this.api, query.phone);
    const profile = senderProfileOf(await this.api.getUserInfo(query.uid), query.uid);
    return profile ? { uid: query.uid, displayName: profile.displayName, avatarUrl: profile.avatarUrl } : null;
  }

  /** zca-js apis/sendFriendRequest.ts takes the message first, then the user. */
  async sendFriendRequest(uid: string, message: string): Promise<void> {
    await this.api.sendFriendRequest(message, uid);
  }

  /** Where a request to the user stands on the network (zca-js apis/getFriendRequestStatus.ts). */
  async friendRequestStatus(uid: string): Promise<'friend' | 'sent' | 'none'> {
    return friendRequestStatusOf(await this.api.getFriendRequestStatus(uid));
  }

  /** One sendSeenEvent call per thread (zca-js takes at most 50 messages, all of one thread). */
  async markSeen(threadId: string, threadType: 'user' | 'group', messages: ReadMessage[]): Promise<void> {
    const list = messages.slice(-SEEN_EVENT_MAX).map((m) => seenEventOf(m, threadId, threadType, this.profile.uid));
    if (list.length === 0) return;
    await this.api.sendSeenEvent(list, threadType === 'group' ? ThreadType.Group : ThreadType.User);
  }

  /** zca-js `undo`: the network takes back a message the account sent, named by both of its ids. */
  async recall(ref: MessageRef): Promise<void> {
    const cliMsgId = this.cliMsgIdOf(ref.chatnetMessageId, ref.cliMsgId);
    await this.api.undo({ msgId: ref.chatnetMessageId, cliMsgId }, ref.threadId, ref.threadType === 'group' ? ThreadType.Group : ThreadType.User);
  }

  /** zca-js `addReaction` with the network's code of the emoji (`Reactions.NONE` takes the account's reaction back). */
  async react(ref: MessageRef, emoji: string): Promise<void> {
    const icon = reactionCodeOf(emoji);
    if (icon === undefined) throw new Error(`the network has no reaction for ${emoji}`);
    const cliMsgId = this.cliMsgIdOf(ref.chatnetMessageId, ref.cliMsgId);
    await this.api.addReaction(icon, {
      data: { msgId: ref.chatnetMessageId, cliMsgId },
      threadId: ref.threadId,
      type: ref.threadType === 'group' ? ThreadType.Group : ThreadType.User,
    });
  }

  async disconnect(): Promise<void> {
    this.closedByUs = true;
    this.alive = false;
    this.api.listener.stop();
  }
}
