import { EventEmitter } from 'node:events';
import { Agent } from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createLogger } from '@crm/logger';
import {
  DisconnectInfo,
  InboundMessage,
  LoginFailedError,
  ReactionNotice,
  RecallNotice,
  SeenReceipt,
  SessionExpiredError,
  SessionHandlers,
} from '../src/drivers/driver';
import { FriendEventType, Reaction, Reactions, ThreadType, Undo, UserMessage, GroupMessage, ZaloApiError } from 'zca-js';
import {
  acceptedFriendOf,
  emojiOfReaction,
  friendRequestStatusOf,
  inboundFileOf,
  inboundOf,
  reactionCodeOf,
  reactionsOf,
  recallOf,
  seenOf,
  ZcaApi,
  ZcaClient,
  ZcaDriver,
  ZcaQrEvent,
  zcaClientFactory,
} from '../src/zca/zca.driver';
import type { InboundMedia } from '../src/drivers/media-download';

// The zca driver against fixtures in the shapes zca-js 2.2 produces (its QR-login callback events, listener
// messages, account and friend records, send results, session context): no network at all.
const fx = (name: string) => JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'zca', `${name}.json`), 'utf8'));
const log = createLogger('test', 'silent');

class FakeListener extends EventEmitter {
  started = 0;
  stopped = 0;
  /** zca-js sends the request over the socket; the network answers with `old_messages`. */
  requestOldMessages = jest.fn();
  start() {
    this.started++;
    // As zca-js's: `connected` when the socket opens, then `cipher_key` with the network's first frame.
    setImmediate(() => {
      this.emit('connected');
      setImmediate(() => this.emit('cipher_key', 'fixture-key'));
    });
  }
  stop() {
    this.stopped++;
    // zca-js closes the socket with 1000 (ManualClosure) and reports it as `closed`.
    this.emit('closed', 1000, '');
  }
}

function fakeApi() {
  const friends = fx('friends') as Array<{ userId: string }>;
  const api = {
    listener: new FakeListener(),
    getOwnId: () => fx('account-info').profile.userId,
    fetchAccountInfo: async () => fx('account-info'),
    getAllFriends: jest.fn(async (count = 20000, page = 1) => friends.slice((page - 1) * count, page * count)),
    // zca-js's UserInfoResponse: the profiles asked for that the network knows.
    getUserInfo: jest.fn(async (uid: string | string[]) => {
      const all = fx('user-info');
      const asked = new Set([uid].flat());
      return { ...all, changed_profiles: Object.fromEntries(Object.entries(all.changed_profiles).filter(([k]) => asked.has(k))) };
    }),
    sendSeenEvent: jest.fn(async () => ({ status: 0 })),
    // zca-js apis/sendFriendRequest.ts answers an empty string when the network took the request.
    sendFriendRequest: jest.fn(async (_msg: string, _userId: string) => '' as const),
    getFriendRequestStatus: jest.fn(async (_friendId: string) => fx('friend-request-status')),
    sendMessage: jest.fn(async () => fx('send-message-response')),
    // zca-js UndoResponse and AddReactionResponse.
    undo: jest.fn(async () => ({ status: 0 })),
    addReaction: jest.fn(async () => ({ msgIds: [6938394735567] })),
    getGroupInfo: jest.fn(async (groupId: string) =>
      groupId in fx('group-info').gridInfoMap ? fx('group-info') : { ...fx('group-info'), gridInfoMap: {} },
    ),
    getContext: () => {
      const c = fx('context');
      return { ...c, cookie: { toJSON: () => c.cookie } };
    },
  };
  // Part of ZcaApi, on purpose: records hold only the fields the driver reads (friends are { userId }), the listener is
  // a plain EventEmitter, and findUser is left out (phone-lookup.test.ts covers it).
  return api as typeof api & ZcaApi;
}

/** A zca-js client that replays QR-login callback events, then resolves with the API. */
function fakeClient(script: Array<string | 'wait'>, api = fakeApi(), login?: (c: unknown) => Promise<ZcaApi>) {
  const calls = { retry: 0, abort: 0, login: [] as unknown[] };
  const client: ZcaClient = {
    loginQR: (_opts, callback) =>
      new Promise((resolve, reject) => {
        let aborted = false;
        const actions = {
          saveToFile: async () => undefined,
          retry: () => calls.retry++,
          abort: () => {
            calls.abort++;
            aborted = true;
            reject(new Error('aborted by caller'));
          },
        };
        (async () => {
          for (const step of script) {
            if (aborted) return;
            if (step === 'wait') {
              await new Promise((r) => setTimeout(r, 50));
              continue;
            }
            // A fixture's actions are JSON ({}, or null once logged in): the callback gets working ones, as from zca-js.
            const event = fx(step) as ZcaQrEvent;
            callback?.(event.actions === null ? event : { ...event, actions });
            await new Promise((r) => setImmediate(r));
          }
          if (!aborted) resolve(api);
        })();
      }),
    login: async (credentials) => {
      calls.login.push(credentials);
      return login ? login(credentials) : api;
    },
  };
  return { client, calls, api };
}

/**
 * The network's file hosts as the driver sees them (InboundMedia): each url gives its bytes; anything else fails as a
 * download does. Records what was asked and through which agent. Which URLs may be fetched, redirects and the size cap
 * are media-download.ts's, tested against real servers in tests/security/inbound-media.test.ts.
 */
function fakeFiles(files: Record<string, Buffer> = {}, delayMs = 0) {
  const asked: string[] = [];
  const via: Array<Agent | undefined> = [];
  const media: InboundMedia = {
    download: async (url, agent) => {
      asked.push(url);
      via.push(agent);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const bytes = files[url];
      if (!bytes) throw new Error('download answered 404');
      return Readable.from([bytes]);
    },
  };
  return { media, asked, via };
}

const until = async (check: () => boolean, ms = 2_000) => {
  for (const end = Date.now() + ms; !check();) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

function recorder() {
  const messages: InboundMessage[] = [];
  const seen: SeenReceipt[] = [];
  const drops: DisconnectInfo[] = [];
  const recalls: RecallNotice[] = [];
  const reactions: ReactionNotice[] = [];
  /** What reached messaging: each file's name, type and bytes. */
  const stored: Array<{ fileName: string; mimeType: string; bytes: Buffer }> = [];
  let friendsChanged = 0;
  const accepted: string[] = [];
  const handlers: SessionHandlers = {
    onFriendRequestAccepted: async (uid) => void accepted.push(uid),
    onMessage: async (m) => void messages.push(m),
    storeFile: async (f) => {
      const chunks: Buffer[] = [];
      for await (const c of f.body) chunks.push(c as Buffer);
      const bytes = Buffer.concat(chunks);
      stored.push({ fileName: f.fileName, mimeType: f.mimeType, bytes });
      return { id: `att-${stored.length}`, fileName: f.fileName, mimeType: f.mimeType, size: bytes.length };
    },
    onSeen: async (r) => void seen.push(r),
    onRecall: async (r) => void recalls.push(r),
    onReaction: async (r) => void reactions.push(r),
    onDisconnect: (d) => void drops.push(d),
    onFriendsChanged: () => void friendsChanged++,
  };
  return { handlers, messages, seen, drops, stored, recalls, reactions, accepted, friendsChanged: () => friendsChanged };
}

const PHOTO_URL = 'https://photo-stal-1.zadn.vn/fixture.jpg';
const FILE_URL = fx('message-user-file').data.content.href as string;
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000ffc0001108003c005003012200021101031101', 'hex');
const network = fakeFiles({ [PHOTO_URL]: JPEG, [FILE_URL]: Buffer.from('%PDF-1.7 quote') });
const driverWith = (client: ZcaClient, qrMaxRefreshes = 2, media: InboundMedia = network.media) =>
  new ZcaDriver({ log, qrMaxRefreshes, factory: () => client, media });

describe('zca driver: QR login', () => {
  it('shows each QR zca-js renders (PNG) and, once scanned, returns a live session with the account profile', async () => {
    const { client, calls, api } = fakeClient(['qr-generated', 'qr-expired', 'qr-generated', 'qr-scanned', 'got-login-info']);
    const shown: Array<{ image?: string; expiresAt: Date }> = [];
    const r = recorder();
    const session = await driverWith(client).loginWithQr({
      accountId: 'a1',
      handlers: r.handlers,
      signal: new AbortController().signal,
      onQr: async (qr) => void shown.push(qr),
    });
    expect(shown).toHaveLength(2);
    expect(shown[0].image).toBe(fx('qr-generated').data.image);
    expect(Buffer.from(shown[0].image!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(shown[0].expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(calls.retry).toBe(1);
    expect(session.profile).toEqual({
      uid: '8421930000000000001',
      displayName: 'Cửa hàng Hoa Mai',
      avatarUrl: expect.stringContaining('8421930000000000001'),
      phone: '84901234567',
    });
    expect(api.listener.started).toBe(1);
    expect(session.isAlive()).toBe(true);
    // What is stored to reconnect later: imei, user agent and cookies from the session context.
    expect(JSON.parse(session.sessionData)).toEqual({
      v: 1,
      imei: fx('context').imei,
      userAgent: fx('context').userAgent,
      language: 'vi',
      cookie: fx('context').cookie.cookies,
    });
  });

  it('gives up with qr_expired after the last allowed fresh code', async () => {
    const { client, calls } = fakeClient(['qr-generated', 'qr-expired', 'qr-generated', 'qr-expired', 'qr-generated', 'qr-expired', 'wait', 'wait']);
    const err = await driverWith(client, 2)
      .loginWithQr({ accountId: 'a1', handlers: recorder().handlers, signal: new AbortController().signal, onQr: async () => undefined })
      .catch((e) => e);
    expect(err).toBeInstanceOf(LoginFailedError);
    expect(err.reason).toBe('qr_expired');
    expect(calls.retry).toBe(2);
    expect(calls.abort).toBe(1);
  });

  it('a login declined on the phone fails with qr_declined', async () => {
    const { client } = fakeClient(['qr-generated', 'qr-scanned', 'qr-declined', 'wait']);
    const err = await driverWith(client)
      .loginWithQr({ accountId: 'a1', handlers: recorder().handlers, signal: new AbortController().signal, onQr: async () => undefined })
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'LoginFailedError', reason: 'qr_declined' });
  });

  it('aborting the signal cancels the login (aborted)', async () => {
    const { client } = fakeClient(['qr-generated', 'wait', 'wait', 'wait', 'wait', 'qr-scanned']);
    const ctl = new AbortController();
    const p = driverWith(client).loginWithQr({
      accountId: 'a1',
      handlers: recorder().handlers,
      signal: ctl.signal,
      onQr: async () => void ctl.abort(),
    });
    await expect(p).rejects.toMatchObject({ reason: 'aborted' });
  });
});

describe('zca driver: restore, receive, send, friends, disconnect', () => {
  const stored = JSON.stringify({
    v: 1,
    imei: fx('context').imei,
    userAgent: fx('context').userAgent,
    language: 'vi',
    cookie: fx('context').cookie.cookies,
  });

  it('restores from stored session data with the stored credentials', async () => {
    const { client, calls } = fakeClient([]);
    const session = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers });
    expect(calls.login).toEqual([
      { imei: fx('context').imei, userAgent: fx('context').userAgent, language: 'vi', cookie: fx('context').cookie.cookies },
    ]);
    expect(session.profile.uid).toBe('8421930000000000001');
  });

  it('a session the network refuses (zca-js ZaloApiError, login refused) is expired; network failures are temporary', async () => {
    const restoreFailingWith = (err: unknown) => {
      const { client } = fakeClient([], fakeApi(), async () => Promise.reject(err));
      return driverWith(client)
        .restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers })
        .catch((e) => e);
    };
    // What zca-js 2.2 throws when getLoginInfo answers without login info (the cookies are no longer accepted).
    const refused = new ZaloApiError('Đăng nhập thất bại');
    expect(refused.name).toBe('ZcaApiError');
    expect(await restoreFailingWith(refused)).toBeInstanceOf(SessionExpiredError);
    expect(await restoreFailingWith(new ZaloApiError('Khởi tạo ngữ cảnh thất bại.'))).toBeInstanceOf(SessionExpiredError);
    // Temporary: the network answering an HTTP error, a DNS failure, an error merely named like the library's.
    for (const err of [
      new ZaloApiError('Failed to fetch login info: Bad Gateway'),
      Object.assign(new Error('getaddrinfo EAI_AGAIN wpa.chat.zalo.me'), { code: 'EAI_AGAIN' }),
      new TypeError('fetch failed'),
      Object.assign(new Error('Đăng nhập thất bại'), { name: 'ZcaApiError' }),
    ]) {
      const got = await restoreFailingWith(err);
      expect(got).toBe(err);
      expect(got).not.toBeInstanceOf(SessionExpiredError);
    }
    const { client } = fakeClient([]);
    await expect(driverWith(client).restoreSession('{"v":1}', { accountId: 'a1', handlers: recorder().handlers })).rejects.toBeInstanceOf(
      SessionExpiredError,
    );
    await expect(driverWith(client).restoreSession('not json', { accountId: 'a1', handlers: recorder().handlers })).rejects.toBeInstanceOf(
      SessionExpiredError,
    );
  });

  it("maps listener messages to inbound messages: text, group, attachments, and the account's own (fromSelf)", async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    for (const name of ['message-user-text', 'message-group-text', 'message-user-photo', 'message-self']) api.listener.emit('message', fx(name));
    await until(() => r.messages.length === 4);
    // A group's message waits for its name (getGroupInfo), so it may come after messages of other threads.
    r.messages.sort((x, y) => x.chatnetMessageId.localeCompare(y.chatnetMessageId));
    expect(r.messages).toEqual([
      {
        chatnetMessageId: '6938394735567',
        threadId: '6100000000000000000',
        threadType: 'user',
        fromUid: '6100000000000000000',
        fromName: 'Khách 0',
        // The listener gives no avatar: getUserInfo does.
        fromAvatar: 'https://s120-ava-talk.zadn.vn/a/6100000000000000000_120.jpg',
        content: 'Chào shop, còn hàng không?',
        contentType: 'text',
        sentAt: new Date(1735689600123),
        // Kept by messaging: marking the message read on the network names it by both ids.
        cliMsgId: '1735689600123',
      },
      expect.objectContaining({
        chatnetMessageId: '6938394735568',
        threadId: '4500000000000000077',
        threadType: 'group',
        fromUid: '6100000000000000002',
        content: '@Hoa Mai giá bao nhiêu?',
        groupName: 'Hội khách quen Hoa Mai',
      }),
      expect.objectContaining({
        chatnetMessageId: '6938394735569',
        contentType: 'chat.photo',
        content: expect.stringContaining('fixture.jpg'),
        attachments: [{ id: 'att-1', fileName: 'photo-6938394735569.jpg', mimeType: 'image/jpeg', size: JPEG.length }],
      }),
      // Typed on the phone: in the contact's thread, from the account itself (named by its profile; no getUserInfo).
      expect.objectContaining({
        chatnetMessageId: '6938394735570',
        threadId: '6100000000000000000',
        threadType: 'user',
        fromUid: '8421930000000000001',
        fromName: fx('account-info').profile.displayName,
        content: 'Dạ còn ạ',
        fromSelf: true,
      }),
    ]);
    expect(r.messages.filter((m) => m.fromSelf)).toHaveLength(1);
    expect(api.getUserInfo).not.toHaveBeenCalledWith('8421930000000000001');
    expect(inboundOf(fx('message-user-photo')).contentType).toBe('chat.photo');
  });

  it('names a group message after getGroupInfo, asked once per group for a burst; a failed lookup never holds the message', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    const group = fx('message-group-text');
    for (let i = 0; i < 3; i++) api.listener.emit('message', { ...group, data: { ...group.data, msgId: `g-${i}` } });
    await new Promise((res) => setImmediate(res));
    expect(r.messages.map((m) => [m.chatnetMessageId, m.groupName])).toEqual([0, 1, 2].map((i) => [`g-${i}`, 'Hội khách quen Hoa Mai']));
    expect(api.getGroupInfo).toHaveBeenCalledTimes(1);
    expect(api.getGroupInfo).toHaveBeenCalledWith('4500000000000000077');

    // The network errs for another group: its message still arrives, without a name.
    api.getGroupInfo.mockRejectedValueOnce(Object.assign(new Error('Không thể lấy thông tin nhóm'), { name: 'ZaloApiError' }));
    api.listener.emit('message', {
      ...group,
      threadId: '4500000000000000099',
      data: { ...group.data, msgId: 'g-other', idTo: '4500000000000000099' },
    });
    await new Promise((res) => setImmediate(res));
    const other = r.messages.find((m) => m.chatnetMessageId === 'g-other')!;
    expect(other).toEqual(expect.objectContaining({ threadType: 'group', threadId: '4500000000000000099' }));
    expect(other).not.toHaveProperty('groupName');
  });

  it('maps seen_messages to read receipts: user threads by both ids, groups with their newest reader; skips its own reads', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    api.listener.emit('seen_messages', fx('seen-messages-user'));
    api.listener.emit('seen_messages', fx('seen-messages-group'));
    await new Promise((res) => setImmediate(res));
    expect(r.seen).toEqual([
      // realMsgId "0" means the network has no second id for it.
      {
        threadId: '6100000000000000000',
        threadType: 'user',
        chatnetMessageIds: ['6938394735599'],
        seenByUid: '6100000000000000000',
        seenAt: expect.any(Date),
      },
      {
        threadId: '6100000000000000001',
        threadType: 'user',
        chatnetMessageIds: ['6938394735601', '6938394735602'],
        seenByUid: '6100000000000000001',
        seenAt: expect.any(Date),
      },
      {
        threadId: '4500000000000000077',
        threadType: 'group',
        chatnetMessageIds: ['6938394735600'],
        seenByUid: '6100000000000000003',
        seenAt: expect.any(Date),
      },
    ]);
    // The id a send returns is the one a receipt names, so messaging can match the two.
    expect(String(fx('send-message-response').message.msgId)).toBe(fx('seen-messages-user')[0].data.msgId);
    expect(seenOf({ type: 0, threadId: '1', isSelf: false, data: { idTo: '1', msgId: '0', realMsgId: '0' } }, 'me')).toBeUndefined();
  });

  it('sends text to user and group threads and returns the network message id', async () => {
    const { client, api } = fakeClient([]);
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers });
    const sent = await s.sendMessage({ threadId: '4500000000000000077', threadType: 'group', content: 'Dạ 150k ạ', contentType: 'text' });
    expect(sent.chatnetMessageId).toBe('6938394735599');
    expect(api.sendMessage).toHaveBeenCalledWith({ msg: 'Dạ 150k ạ' }, '4500000000000000077', 1);
    await s.sendMessage({ threadId: '6100000000000000000', threadType: 'user', content: 'ok', contentType: 'text' });
    expect(api.sendMessage).toHaveBeenLastCalledWith({ msg: 'ok' }, '6100000000000000000', 0);
    await expect(s.sendMessage({ threadId: '1', threadType: 'user', content: '{}', contentType: 'image' })).rejects.toThrow(/text only/);
  });

  it('marks messages read with sendSeenEvent: a user thread names the contact as sender and us as recipient, a group its members and the group', async () => {
    const { client, api } = fakeClient([]);
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers });
    const text = inboundOf(fx('message-user-text'));
    await s.markSeen(text.threadId, 'user', [
      {
        chatnetMessageId: text.chatnetMessageId,
        cliMsgId: text.cliMsgId!,
        fromUid: text.fromUid,
        contentType: text.contentType,
        sentAt: text.sentAt,
      },
    ]);
    // As zca-js reads them: uidFrom is a user thread's id, idTo our own uid; a text message's network type is webchat.
    expect(api.sendSeenEvent).toHaveBeenCalledWith(
      [
        {
          msgId: '6938394735567',
          cliMsgId: '1735689600123',
          uidFrom: '6100000000000000000',
          idTo: '8421930000000000001',
          msgType: 'webchat',
          st: 0,
          at: 0,
          cmd: 0,
          ts: 1735689600123,
        },
      ],
      0,
    );
    const g = inboundOf(fx('message-group-text'));
    const sentAt = new Date(1735689700000);
    await s.markSeen(g.threadId, 'group', [
      { chatnetMessageId: 'g1', cliMsgId: 'c1', fromUid: '6100000000000000002', contentType: 'text', sentAt },
      { chatnetMessageId: 'g2', cliMsgId: 'c2', fromUid: '6100000000000000003', contentType: 'chat.photo', sentAt },
    ]);
    expect(api.sendSeenEvent).toHaveBeenLastCalledWith(
      [
        expect.objectContaining({ msgId: 'g1', cliMsgId: 'c1', uidFrom: '6100000000000000002', idTo: '4500000000000000077', msgType: 'webchat' }),
        expect.objectContaining({ msgId: 'g2', cliMsgId: 'c2', uidFrom: '6100000000000000003', idTo: '4500000000000000077', msgType: 'chat.photo' }),
      ],
      1,
    );
    // zca-js takes at most 50 at once: the newest 50 go.
    const many = Array.from({ length: 60 }, (_, i) => ({
      chatnetMessageId: `m${i}`,
      cliMsgId: `c${i}`,
      fromUid: text.fromUid,
      contentType: 'text',
      sentAt,
    }));
    await s.markSeen(text.threadId, 'user', many);
    const last = api.sendSeenEvent.mock.calls.at(-1) as unknown as [Array<{ msgId: string }>, number];
    expect(last[0].map((m) => m.msgId)).toEqual(many.slice(10).map((m) => m.chatnetMessageId));
    // A refusal of the network reaches the caller (the pool answers UNAVAILABLE; messaging only logs it).
    api.sendSeenEvent.mockRejectedValueOnce(new ZaloApiError('messages must contain between 1 and 50 messages.'));
    await expect(s.markSeen(text.threadId, 'user', many.slice(0, 1))).rejects.toThrow(/between 1 and 50/);
  });

  it('the echo of its own send is skipped, even when it comes before the send returned; a message typed on the phone meanwhile goes on after', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    const self = fx('message-self');
    const echo = (msgId: string, content: string) => ({ ...self, data: { ...self.data, msgId, content } });
    // The network answers the send only after its echo (and a phone-typed message) arrived on the listener.
    let answer!: () => void;
    api.sendMessage.mockImplementationOnce(() => new Promise((res) => (answer = () => res(fx('send-message-response')))));
    const sending = s.sendMessage({ threadId: self.threadId, threadType: 'user', content: 'from the CRM', contentType: 'text' });
    await until(() => api.sendMessage.mock.calls.length === 1);
    api.listener.emit('message', echo('6938394735599', 'from the CRM'));
    api.listener.emit('message', echo('phone-1', 'typed on the phone'));
    await new Promise((res) => setTimeout(res, 20));
    // Nothing of the account's own on that thread is judged while its send is under way.
    expect(r.messages).toEqual([]);
    answer();
    expect((await sending).chatnetMessageId).toBe('6938394735599');
    await until(() => r.messages.length === 1);
    expect(r.messages[0]).toEqual(expect.objectContaining({ chatnetMessageId: 'phone-1', fromSelf: true, content: 'typed on the phone' }));
    // Echoes after the send returned are skipped as well; another thread never waited.
    api.listener.emit('message', echo('6938394735599', 'from the CRM'));
    api.listener.emit('message', { ...echo('phone-2', 'elsewhere'), threadId: '6100000000000000009' });
    await until(() => r.messages.length === 2);
    await new Promise((res) => setTimeout(res, 20));
    expect(r.messages.map((m) => m.chatnetMessageId)).toEqual(['phone-1', 'phone-2']);
  });

  it('lists every friend in one getAllFriends call, falling back to the network name', async () => {
    const { client, api } = fakeClient([]);
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers });
    const friends = await s.listFriends();
    expect(friends).toHaveLength(230);
    expect(api.getAllFriends).toHaveBeenCalledTimes(1);
    expect(api.getAllFriends).toHaveBeenCalledWith();
    expect(friends[0]).toEqual({ chatnetUid: '6100000000000000000', displayName: 'Khách 0' });
    expect(friends[1]).toEqual({ chatnetUid: '6100000000000000001', displayName: 'Zalo 1' });
  });

  it('sender avatars (and names the message lacks) come from getUserInfo, once per user; a failed lookup never holds a message', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    const text = fx('message-user-text');
    api.listener.emit('message', text);
    api.listener.emit('message', { ...text, data: { ...text.data, msgId: 'u-2', dName: '' } });
    await until(() => r.messages.length === 2);
    expect(r.messages.map((m) => [m.chatnetMessageId, m.fromName, m.fromAvatar])).toEqual([
      ['6938394735567', 'Khách 0', 'https://s120-ava-talk.zadn.vn/a/6100000000000000000_120.jpg'],
      ['u-2', 'Khách 0', 'https://s120-ava-talk.zadn.vn/a/6100000000000000000_120.jpg'],
    ]);
    expect(api.getUserInfo).toHaveBeenCalledTimes(1);
    expect(api.getUserInfo).toHaveBeenCalledWith('6100000000000000000');

    // The network errs for another user: the message arrives as the listener gave it.
    api.getUserInfo.mockRejectedValueOnce(new ZaloApiError('Không thể lấy thông tin'));
    const other = {
      ...text,
      threadId: '6100000000000000009',
      data: { ...text.data, msgId: 'u-3', uidFrom: '6100000000000000009', dName: 'Khách 9' },
    };
    api.listener.emit('message', other);
    // A user the network does not know: no avatar either, and the message goes on.
    api.listener.emit('message', {
      ...other,
      threadId: '6100000000000000008',
      data: { ...other.data, msgId: 'u-4', uidFrom: '6100000000000000008' },
    });
    await until(() => r.messages.length === 4);
    expect(r.messages.slice(2).map((m) => [m.chatnetMessageId, m.fromName, m.fromAvatar])).toEqual([
      ['u-3', 'Khách 9', ''],
      ['u-4', 'Khách 9', ''],
    ]);
  });

  it('after a restore, asks for what arrived while disconnected (requestOldMessages) and hands each message over once, oldest first', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    await until(() => api.listener.requestOldMessages.mock.calls.length === 2);
    expect(api.listener.requestOldMessages.mock.calls).toEqual([[0], [1]]);
    // A later key (the network rotating it) asks nothing again.
    api.listener.emit('cipher_key', 'another-key');
    expect(api.listener.requestOldMessages).toHaveBeenCalledTimes(2);
    const live = fx('message-user-text');
    api.listener.emit('message', live);
    await until(() => r.messages.length === 1);
    const missed = (id: string, ts: number) => ({ ...live, data: { ...live.data, msgId: id, ts: String(ts), content: `missed ${id}` } });
    // The network's page: newest first, with the message already received live and one the account sent itself.
    api.listener.emit('old_messages', [missed('m-2', 1735689700000), live, missed('m-1', 1735689650000), fx('message-self')], 0);
    api.listener.emit('old_messages', [fx('message-group-text')], 1);
    await until(() => r.messages.length === 5);
    // In its thread, oldest first (the account's own message too); the group's message (another thread) may come in between.
    expect(r.messages.filter((m) => m.threadType === 'user').map((m) => m.chatnetMessageId)).toEqual([
      '6938394735567',
      '6938394735570',
      'm-1',
      'm-2',
    ]);
    expect(r.messages.find((m) => m.chatnetMessageId === '6938394735570')?.fromSelf).toBe(true);
    expect(r.messages.filter((m) => m.threadType === 'group').map((m) => m.chatnetMessageId)).toEqual(['6938394735568']);
    // Asked again (a second page, a repeated answer): nothing twice.
    api.listener.emit('old_messages', [missed('m-1', 1735689650000)], 0);
    await new Promise((res) => setTimeout(res, 20));
    expect(r.messages).toHaveLength(5);
  });

  it('a QR login does not ask for old messages (a fresh session has nothing it missed)', async () => {
    const { client, api } = fakeClient(['qr-generated', 'qr-scanned', 'got-login-info']);
    await driverWith(client).loginWithQr({
      accountId: 'a1',
      handlers: recorder().handlers,
      signal: new AbortController().signal,
      onQr: async () => undefined,
    });
    await new Promise((res) => setTimeout(res, 10));
    expect(api.listener.requestOldMessages).not.toHaveBeenCalled();
  });

  it('a connection closed by the network reports a drop; a duplicate login elsewhere (3000) expires the session', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    api.listener.emit('friend_event', {});
    expect(r.friendsChanged()).toBe(1);
    api.listener.emit('closed', 1006, '');
    expect(r.drops).toEqual([{ reason: 'closed_1006', sessionExpired: false }]);
    expect(s.isAlive()).toBe(false);

    const r2 = recorder();
    const second = fakeClient([]);
    await driverWith(second.client).restoreSession(stored, { accountId: 'a1', handlers: r2.handlers });
    second.api.listener.emit('closed', 3000, 'duplicate connection');
    expect(r2.drops).toEqual([{ reason: 'duplicate connection', sessionExpired: true }]);
  });

  it('disconnect() stops the listener without reporting a drop', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    await s.disconnect();
    expect(api.listener.stopped).toBe(1);
    expect(r.drops).toEqual([]);
    expect(s.isAlive()).toBe(false);
  });
});

describe('zca driver: files both ways', () => {
  const stored = JSON.stringify({
    v: 1,
    imei: fx('context').imei,
    userAgent: fx('context').userAgent,
    language: 'vi',
    cookie: fx('context').cookie.cookies,
  });
  const outbound = (fileName: string, mimeType: string, bytes: Buffer) => ({
    fileName,
    mimeType,
    size: bytes.length,
    open: async () => Readable.from([bytes]),
  });

  it('sends the text with the first file, then each further file in a call of its own (Buffers named with an extension, photo sizes)', async () => {
    const { client, api } = fakeClient([]);
    api.sendMessage
      .mockResolvedValueOnce({ message: { msgId: 7001 }, attachment: [{ msgId: 7002 }] })
      .mockResolvedValueOnce({ message: null, attachment: [{ msgId: 7003 }] });
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers });
    const pdf = Buffer.from('%PDF-1.7 price list');
    const sent = await s.sendMessage({
      threadId: '4500000000000000077',
      threadType: 'group',
      content: 'Bảng giá đây ạ',
      contentType: 'text',
      attachments: [outbound('bang-gia.pdf', 'application/pdf', pdf), outbound('catalogue', 'image/jpeg', JPEG)],
    });
    expect(sent.chatnetMessageId).toBe('7001');
    expect(api.sendMessage).toHaveBeenCalledTimes(2);
    expect(api.sendMessage).toHaveBeenNthCalledWith(
      1,
      { msg: 'Bảng giá đây ạ', attachments: [{ data: pdf, filename: 'bang-gia.pdf', metadata: { totalSize: pdf.length } }] },
      '4500000000000000077',
      1,
    );
    // No extension: one from its type, since zca-js tells photos from files by it; a JPEG's size from its header.
    expect(api.sendMessage).toHaveBeenNthCalledWith(
      2,
      { msg: '', attachments: [{ data: JPEG, filename: 'catalogue.jpg', metadata: { totalSize: JPEG.length, width: 80, height: 60 } }] },
      '4500000000000000077',
      1,
    );
  });

  it('a file message of files only returns the first file message id; a file shorter than announced is not sent', async () => {
    const { client, api } = fakeClient([]);
    api.sendMessage.mockResolvedValueOnce({ message: null, attachment: [{ msgId: 7010 }] });
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers });
    const pdf = Buffer.from('%PDF-1.7 x');
    const sent = await s.sendMessage({
      threadId: '6100000000000000000',
      threadType: 'user',
      content: '',
      contentType: 'text',
      attachments: [outbound('a.pdf', 'application/pdf', pdf)],
    });
    expect(sent.chatnetMessageId).toBe('7010');
    expect(api.sendMessage).toHaveBeenLastCalledWith(
      { msg: '', attachments: [expect.objectContaining({ filename: 'a.pdf' })] },
      '6100000000000000000',
      0,
    );
    const short = { ...outbound('b.pdf', 'application/pdf', pdf), size: pdf.length + 5 };
    await expect(
      s.sendMessage({ threadId: '6100000000000000000', threadType: 'user', content: '', contentType: 'text', attachments: [short] }),
    ).rejects.toThrow(/arrived with/);
    expect(api.sendMessage).toHaveBeenCalledTimes(1);
  });

  it('an inbound file is downloaded (directly: no proxy agent) and stored under its title; the thread keeps its order', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    const slow = fakeFiles({ [FILE_URL]: Buffer.from('%PDF-1.7 quote') }, 30);
    await driverWith(client, 2, slow.media).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    api.listener.emit('message', fx('message-user-file'));
    api.listener.emit('message', fx('message-user-text'));
    await until(() => r.messages.length === 2);
    expect(slow.asked).toEqual([FILE_URL]);
    expect(slow.via).toEqual([undefined]);
    expect(r.stored).toEqual([{ fileName: 'Báo giá tháng 1.pdf', mimeType: 'application/pdf', bytes: Buffer.from('%PDF-1.7 quote') }]);
    // The text came after the file in the thread, and is handed over after it although the download was slow.
    expect(r.messages.map((m) => m.chatnetMessageId)).toEqual(['6938394735570', '6938394735567']);
    expect(r.messages[0].attachments).toEqual([{ id: 'att-1', fileName: 'Báo giá tháng 1.pdf', mimeType: 'application/pdf', size: 14 }]);
    expect(inboundFileOf(fx('message-user-text'))).toBeUndefined();
  });

  it('a file that cannot be had (a download that fails, a stream that breaks) leaves the message without it', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    const files = fakeFiles({});
    const broken: InboundMedia = {
      download: async (url, agent) =>
        url === FILE_URL
          ? new Readable({
              read() {
                this.destroy(new Error('the file is larger than 1000 bytes'));
              },
            })
          : files.media.download(url, agent),
    };
    await driverWith(client, 2, broken).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    api.listener.emit('message', fx('message-user-photo'));
    api.listener.emit('message', fx('message-user-file'));
    await until(() => r.messages.length === 2);
    expect(r.messages.map((m) => m.attachments)).toEqual([undefined, undefined]);
    expect(r.stored).toEqual([]);
    expect(files.asked).toEqual([PHOTO_URL]);
  });

  it('a proxied account downloads through its proxy agent', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    const files = fakeFiles({ [PHOTO_URL]: JPEG });
    const proxyAgent = new Agent();
    const driver = new ZcaDriver({
      log,
      qrMaxRefreshes: 1,
      factory: () => client,
      media: files.media,
      proxy: () => ({ agent: proxyAgent, fetch: globalThis.fetch }),
    });
    await driver.restoreSession(stored, { accountId: 'a1', proxyUrl: 'socks5://proxy.example:1080', handlers: r.handlers });
    api.listener.emit('message', fx('message-user-photo'));
    await until(() => r.messages.length === 1);
    expect(files.asked).toEqual([PHOTO_URL]);
    expect(files.via[0]).toBe(proxyAgent);
    expect(r.stored).toEqual([expect.objectContaining({ bytes: JPEG })]);
  });
});

describe('zca driver: the production binding', () => {
  it('builds a zca-js client (no network until a login) with its update check off', () => {
    const client = zcaClientFactory()({}) as unknown as { options: Record<string, unknown>; loginQR: unknown; login: unknown };
    expect(typeof client.loginQR).toBe('function');
    expect(typeof client.login).toBe('function');
    expect(client.options).toMatchObject({ checkUpdate: false, selfListen: true, logging: false });
  });
});

describe('zca driver: quotes, recall (undo) and reactions (addReaction)', () => {
  const stored = JSON.stringify({
    v: 1,
    imei: fx('context').imei,
    userAgent: fx('context').userAgent,
    language: 'vi',
    cookie: fx('context').cookie.cookies,
  });
  const OWN = fx('account-info').profile.userId as string;
  const CONTACT = '6100000000000000000';
  const GROUP = '4500000000000000077';

  /** A listener frame as zca-js 2.2 builds it: its own classes, from the raw data the network sends. */
  const userMessage = (data: object) => new UserMessage(OWN, { ...fx('message-user-text').data, ...data });
  const undoFrame = (data: object, isGroup = false) =>
    new Undo(
      OWN,
      {
        actionId: '1',
        msgId: '6938394735600',
        cliMsgId: '1735689700000',
        msgType: 'chat.undo',
        uidFrom: CONTACT,
        idTo: '0',
        dName: 'Khách 0',
        ts: '1735689700000',
        status: 1,
        content: { globalMsgId: 6938394735567, cliMsgId: 1735689600123, deleteMsg: 1, srcId: 0, destId: 0 },
        notify: '1',
        ttl: 0,
        userId: '0',
        uin: '0',
        cmd: 501,
        st: 3,
        at: 5,
        realMsgId: '0',
        ...data,
      } as never,
      isGroup,
    );
  const reactionFrame = (data: object, isGroup = false) =>
    new Reaction(
      OWN,
      {
        actionId: '2',
        msgId: '6938394735601',
        cliMsgId: '1735689800000',
        msgType: 'reaction',
        uidFrom: CONTACT,
        idTo: '0',
        dName: 'Khách 0',
        content: { rMsg: [{ gMsgID: '6938394735599', cMsgID: '1735689650000', msgType: 1 }], rIcon: Reactions.HEART, rType: 5, source: 6 },
        ts: '1735689800000',
        ttl: 0,
        ...data,
      } as never,
      isGroup,
    );

  async function session() {
    const r = recorder();
    const { client, api } = fakeClient([]);
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    return { r, api, s };
  }

  it('an inbound reply names the network id of the message it quotes (zca-js TQuote.globalMsgId)', () => {
    const quote = {
      ownerId: OWN,
      cliMsgId: 1735689650000,
      globalMsgId: 6938394735599,
      cliMsgType: 1,
      ts: 1735689650000,
      msg: 'Dạ còn ạ',
      attach: '',
      fromD: 'Shop',
      ttl: 0,
    };
    expect(inboundOf(userMessage({ msgId: 'q-1', quote }), OWN).quoteChatnetMessageId).toBe('6938394735599');
    expect(inboundOf(userMessage({ msgId: 'q-2' }), OWN)).not.toHaveProperty('quoteChatnetMessageId');
    const group = new GroupMessage(OWN, { ...fx('message-group-text').data, quote: { ...quote, globalMsgId: 0 }, mentions: undefined });
    expect(inboundOf(group, OWN)).not.toHaveProperty('quoteChatnetMessageId');
  });

  it('a reply is sent with zca-js SendMessageQuote: a text as webchat with its text, the sender and both ids, the time in ms', async () => {
    const { api, s } = await session();
    const sentAt = new Date(1735689600123);
    await s.sendMessage({
      threadId: CONTACT,
      threadType: 'user',
      content: 'Dạ còn ạ',
      contentType: 'text',
      quote: {
        chatnetMessageId: '6938394735567',
        cliMsgId: '1735689600123',
        fromUid: CONTACT,
        content: 'Chào shop, còn hàng không?',
        contentType: 'text',
        sentAt,
      },
    });
    expect(api.sendMessage).toHaveBeenLastCalledWith(
      {
        msg: 'Dạ còn ạ',
        quote: {
          content: 'Chào shop, còn hàng không?',
          msgType: 'webchat',
          propertyExt: undefined,
          uidFrom: CONTACT,
          msgId: '6938394735567',
          cliMsgId: '1735689600123',
          ts: '1735689600123',
          ttl: 0,
        },
      },
      CONTACT,
      ThreadType.User,
    );
    // A photo keeps its network type and its content as the network gave it.
    const photo = inboundOf(fx('message-user-photo'), OWN);
    await s.sendMessage({
      threadId: CONTACT,
      threadType: 'user',
      content: 'this one?',
      contentType: 'text',
      quote: {
        chatnetMessageId: photo.chatnetMessageId,
        cliMsgId: photo.cliMsgId!,
        fromUid: CONTACT,
        content: photo.content,
        contentType: photo.contentType,
        sentAt,
      },
    });
    const quoted = (api.sendMessage.mock.calls.at(-1) as unknown as [{ quote: { msgType: string; content: unknown } }])[0].quote;
    expect(quoted.msgType).toBe('chat.photo');
    expect(quoted.content).toEqual(fx('message-user-photo').data.content);
  });

  it("quoting (or recalling) the account's own message takes its cliMsgId from the echo the listener brought; unknown, it fails before the network is asked", async () => {
    const { api, s } = await session();
    const echoCliMsgId = '1735689655555';
    const sent = await s.sendMessage({ threadId: CONTACT, threadType: 'user', content: 'from the CRM', contentType: 'text' });
    api.listener.emit(
      'message',
      new UserMessage(OWN, { ...fx('message-self').data, msgId: sent.chatnetMessageId, cliMsgId: echoCliMsgId, content: 'from the CRM' }),
    );
    await s.sendMessage({
      threadId: CONTACT,
      threadType: 'user',
      content: 'as I said',
      contentType: 'text',
      quote: { chatnetMessageId: sent.chatnetMessageId, cliMsgId: '', fromUid: '', content: 'from the CRM', contentType: 'text', sentAt: new Date() },
    });
    const quoted = (api.sendMessage.mock.calls.at(-1) as unknown as [{ quote: { uidFrom: string; cliMsgId: string } }])[0].quote;
    expect(quoted).toMatchObject({ uidFrom: OWN, cliMsgId: echoCliMsgId });

    await s.recall({ threadId: CONTACT, threadType: 'user', chatnetMessageId: sent.chatnetMessageId, cliMsgId: '' });
    expect(api.undo).toHaveBeenLastCalledWith({ msgId: sent.chatnetMessageId, cliMsgId: echoCliMsgId }, CONTACT, ThreadType.User);

    await expect(s.recall({ threadId: CONTACT, threadType: 'user', chatnetMessageId: 'never-seen', cliMsgId: '' })).rejects.toThrow(/cliMsgId/);
    expect(api.undo).toHaveBeenCalledTimes(1);
  });

  it('recall is zca-js undo with both ids and the thread type; a refusal of the network reaches the caller', async () => {
    const { api, s } = await session();
    await s.recall({ threadId: GROUP, threadType: 'group', chatnetMessageId: '6938394735599', cliMsgId: '1735689650000' });
    expect(api.undo).toHaveBeenCalledWith({ msgId: '6938394735599', cliMsgId: '1735689650000' }, GROUP, ThreadType.Group);
    api.undo.mockRejectedValueOnce(new ZaloApiError('Tin nhắn đã quá thời gian thu hồi'));
    await expect(s.recall({ threadId: CONTACT, threadType: 'user', chatnetMessageId: '1', cliMsgId: '2' })).rejects.toThrow(/thu hồi/);
  });

  it('a reaction is zca-js addReaction with the network code of the emoji; an empty one takes it back (Reactions.NONE); an emoji the network lacks fails', async () => {
    const { api, s } = await session();
    const ref = { threadId: CONTACT, threadType: 'user' as const, chatnetMessageId: '6938394735567', cliMsgId: '1735689600123' };
    await s.react(ref, '❤️');
    expect(api.addReaction).toHaveBeenLastCalledWith(Reactions.HEART, {
      data: { msgId: '6938394735567', cliMsgId: '1735689600123' },
      threadId: CONTACT,
      type: ThreadType.User,
    });
    await s.react({ ...ref, threadId: GROUP, threadType: 'group' }, '👍');
    expect(api.addReaction).toHaveBeenLastCalledWith(Reactions.LIKE, expect.objectContaining({ threadId: GROUP, type: ThreadType.Group }));
    await s.react(ref, '');
    expect(api.addReaction).toHaveBeenLastCalledWith(Reactions.NONE, expect.objectContaining({ threadId: CONTACT }));
    await expect(s.react(ref, '🦄')).rejects.toThrow(/no reaction/);
    expect(api.addReaction).toHaveBeenCalledTimes(3);
    // The codes both ways: a heart without its variation selector is the same heart; a code the CRM has no emoji for stays itself.
    expect(reactionCodeOf('❤')).toBe(Reactions.HEART);
    expect(reactionCodeOf(Reactions.BIRTHDAY)).toBe(Reactions.BIRTHDAY);
    expect(emojiOfReaction(Reactions.HAHA)).toBe('😆');
    expect(emojiOfReaction(Reactions.NERD)).toBe(Reactions.NERD);
    expect(emojiOfReaction(Reactions.NONE)).toBe('');
  });

  it("the listener's undo becomes a recall of the message it names, in its thread; its reaction one per message named, the account's own skipped", async () => {
    const { r, api } = await session();
    api.listener.emit('undo', undoFrame({}));
    api.listener.emit(
      'undo',
      undoFrame({ idTo: GROUP, content: { globalMsgId: 6938394735590, cliMsgId: 1, deleteMsg: 1, srcId: 0, destId: 0 } }, true),
    );
    await until(() => r.recalls.length === 2);
    expect(r.recalls).toEqual([
      { threadId: CONTACT, threadType: 'user', chatnetMessageId: '6938394735567', fromUid: CONTACT, recalledAt: new Date(1735689700000) },
      { threadId: GROUP, threadType: 'group', chatnetMessageId: '6938394735590', fromUid: CONTACT, recalledAt: new Date(1735689700000) },
    ]);
    expect(recallOf(undoFrame({ content: { globalMsgId: 0, cliMsgId: 0, deleteMsg: 1, srcId: 0, destId: 0 } }))).toBeUndefined();

    api.listener.emit('reaction', reactionFrame({}));
    api.listener.emit('reaction', reactionFrame({ uidFrom: '0', idTo: CONTACT }));
    api.listener.emit(
      'reaction',
      reactionFrame(
        {
          idTo: GROUP,
          content: {
            rMsg: [
              { gMsgID: 'g-1', cMsgID: 'c-1', msgType: 1 },
              { gMsgID: 'g-2', cMsgID: 'c-2', msgType: 1 },
            ],
            rIcon: Reactions.NONE,
            rType: -1,
            source: 6,
          },
        },
        true,
      ),
    );
    await until(() => r.reactions.length === 3);
    await new Promise((res) => setTimeout(res, 20));
    expect(r.reactions).toEqual([
      { threadId: CONTACT, threadType: 'user', chatnetMessageId: '6938394735599', fromUid: CONTACT, emoji: '❤️', at: new Date(1735689800000) },
      { threadId: GROUP, threadType: 'group', chatnetMessageId: 'g-1', fromUid: CONTACT, emoji: '', at: new Date(1735689800000) },
      { threadId: GROUP, threadType: 'group', chatnetMessageId: 'g-2', fromUid: CONTACT, emoji: '', at: new Date(1735689800000) },
    ]);
    expect(reactionsOf(reactionFrame({ uidFrom: '0' }))).toEqual([]);
  });
});

describe('zca driver: outreach (issue #26)', () => {
  const stored = JSON.stringify({
    v: 1,
    imei: fx('context').imei,
    userAgent: fx('context').userAgent,
    language: 'vi',
    cookie: fx('context').cookie.cookies,
  });

  it('finds a user by uid through getUserInfo (name and avatar), and nobody when the network leaves the uid out', async () => {
    const { client, api } = fakeClient([]);
    const s = (await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers })) as unknown as {
      findUser(q: { uid: string } | { phone: string }): Promise<unknown>;
    };
    expect(await s.findUser({ uid: '6100000000000000000' })).toEqual({
      uid: '6100000000000000000',
      displayName: 'Khách 0',
      avatarUrl: 'https://s120-ava-talk.zadn.vn/a/6100000000000000000_120.jpg',
    });
    expect(api.getUserInfo).toHaveBeenCalledWith('6100000000000000000');
    expect(await s.findUser({ uid: '6199999999999999999' })).toBeNull();
  });

  it('sends a friend request as zca-js takes it (message first, then the user) and reads where one stands', async () => {
    const { client, api } = fakeClient([]);
    const s = await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: recorder().handlers });
    await s.sendFriendRequest('6100000000000000000', 'Chào anh, shop Hoa Mai đây');
    expect(api.sendFriendRequest).toHaveBeenCalledWith('Chào anh, shop Hoa Mai đây', '6100000000000000000');
    api.sendFriendRequest.mockRejectedValueOnce(new ZaloApiError('Bạn đã gửi quá nhiều lời mời'));
    await expect(s.sendFriendRequest('6100000000000000000', 'again')).rejects.toThrow(ZaloApiError);
    expect(friendRequestStatusOf(fx('friend-request-status'))).toBe('sent');
    expect(friendRequestStatusOf({ ...fx('friend-request-status'), is_friend: 1, is_requested: 0 })).toBe('friend');
    expect(friendRequestStatusOf({ ...fx('friend-request-status'), is_requested: 0 })).toBe('none');
  });

  it('a friend_event ADD from the other side is an accepted request; the account adding someone itself is not', async () => {
    const r = recorder();
    const { client, api } = fakeClient([]);
    await driverWith(client).restoreSession(stored, { accountId: 'a1', handlers: r.handlers });
    const add = fx('friend-event-add');
    expect(add.type).toBe(FriendEventType.ADD);
    api.listener.emit('friend_event', add);
    api.listener.emit('friend_event', { ...add, isSelf: true });
    api.listener.emit('friend_event', {
      type: FriendEventType.REQUEST,
      data: { toUid: 'me', fromUid: '61', src: 1, message: 'hi' },
      threadId: '61',
      isSelf: false,
    });
    await new Promise((res) => setImmediate(res));
    expect(r.accepted).toEqual(['6100000000000000000']);
    // Every friend event still re-reads the friend list.
    expect(r.friendsChanged()).toBe(3);
    expect(acceptedFriendOf(undefined)).toBeUndefined();
  });
});
