import { createLogger } from '@crm/logger';
import { clearRedisPrefix, freePort, infra, uniqueName } from '@crm/testing';
import type { InboundMessage, SessionHandlers } from '../src/drivers/driver';
import { SessionExpiredError } from '../src/drivers/driver';
import { RemoteSandboxDriver } from '../src/drivers/remote-sandbox.driver';
import { RemoteSandboxLive } from '../src/drivers/sandbox-live';
import { startSandboxNetwork } from '../src/sandbox-network/app';
import { loadSandboxConfig } from '../src/sandbox-network/config';

// The remote sandbox driver against the standalone network (in this process, real Redis): how a login ends, how a
// restore is refused, and that a message the connector did not record is never answered as delivered.
describe('RemoteSandboxDriver against the standalone sandbox network', () => {
  const prefix = `${uniqueName('t')}:`;
  let network: Awaited<ReturnType<typeof startSandboxNetwork>>;
  let url: string;
  let driver: RemoteSandboxDriver;
  let live: RemoteSandboxLive;

  const handlers = (onMessage: (m: InboundMessage) => Promise<void>, disconnects: string[] = []): SessionHandlers => ({
    onMessage,
    storeFile: () => Promise.reject(new Error('no files here')),
    onSeen: async () => undefined,
    onRecall: async () => undefined,
    onReaction: async () => undefined,
    onDisconnect: (info) => void disconnects.push(info.reason),
    onFriendsChanged: () => undefined,
    onFriendRequestAccepted: async () => undefined,
  });

  beforeAll(async () => {
    network = await startSandboxNetwork(
      // Parsed as its process parses its environment; the bind address is the default, loopback.
      loadSandboxConfig({ NODE_ENV: 'test', SANDBOX_PORT: '0', REDIS_URL: infra.redisUrl, REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' }),
      createLogger('test', 'silent'),
    );
    url = `http://127.0.0.1:${network.port}`;
    driver = new RemoteSandboxDriver(url, 1000, 0);
    live = new RemoteSandboxLive(url, (id) => driver.cutOf(id));
  });
  afterAll(async () => {
    await driver?.close();
    live?.close();
    await network?.stop();
    await clearRedisPrefix(prefix);
  });

  it('a restore with a token the network does not know is SessionExpiredError', async () => {
    await expect(
      driver.restoreSession(JSON.stringify({ v: 1, token: 'nope' }), { accountId: 'acc-x', handlers: handlers(async () => undefined) }),
    ).rejects.toBeInstanceOf(SessionExpiredError);
  });

  it('a QR login nobody scans shows its code, then fails as qr_expired', async () => {
    const codes: string[] = [];
    const login = driver.loginWithQr({
      accountId: 'acc-expire',
      handlers: handlers(async () => undefined),
      signal: new AbortController().signal,
      onQr: async (qr) => void codes.push(qr.code ?? ''),
    });
    await expect(login).rejects.toEqual(expect.objectContaining({ name: 'LoginFailedError', reason: 'qr_expired' }));
    expect(codes).toEqual([expect.stringMatching(/^chatnet-sandbox:\/\/login\//)]);
  });

  it('an unreachable network fails a login as network_error and a restore as a plain (retried) error', async () => {
    const nowhere = new RemoteSandboxDriver(`http://127.0.0.1:${await freePort()}`, 300, 0);
    const opts = { accountId: 'acc-y', handlers: handlers(async () => undefined) };
    await expect(nowhere.loginWithQr({ ...opts, signal: new AbortController().signal, onQr: async () => undefined })).rejects.toEqual(
      expect.objectContaining({ reason: 'network_error' }),
    );
    const restore = nowhere.restoreSession('{}', opts);
    await expect(restore).rejects.toThrow();
    await expect(restore).rejects.not.toBeInstanceOf(SessionExpiredError);
  });

  it('scanned, the session takes pushes; one the connector refuses is not answered as delivered; a restore gets the same profile', async () => {
    const received: InboundMessage[] = [];
    let refuse = false;
    const disconnects: string[] = [];
    const h = handlers(async (m) => {
      if (refuse) throw new Error('broker and outbox down');
      received.push(m);
    }, disconnects);
    let shown!: () => void;
    const qrShown = new Promise<void>((resolve) => (shown = resolve));
    const login = driver.loginWithQr({ accountId: 'acc-ok', handlers: h, signal: new AbortController().signal, onQr: async () => shown() });
    // The network shows the code once it waits for the scan.
    await qrShown;
    expect(await live.scan('acc-ok', { uid: 'u-1', displayName: 'Shop', avatarUrl: '', phone: '' })).toBe(true);
    const session = await login;
    expect(session.profile.uid).toBe('u-1');

    const message = {
      chatnetMessageId: 'n-1',
      cliMsgId: 'c-1',
      threadId: 't',
      threadType: 'user' as const,
      fromUid: 't',
      fromName: 'T',
      fromAvatar: '',
      content: 'hi',
      contentType: 'text',
      sentAt: new Date('2026-01-01T00:00:00.000Z'),
    };
    expect(await live.deliver('acc-ok', message)).toBe(true);
    expect(received).toEqual([message]);
    refuse = true;
    await expect(live.deliver('acc-ok', { ...message, chatnetMessageId: 'n-2' })).rejects.toThrow(/500/);
    expect(received).toHaveLength(1);

    // The connector closes it (a hand-over): the handlers hear nothing; a restore elsewhere is the same account.
    await session.disconnect();
    expect(await live.deliver('acc-ok', message)).toBe(false);
    const again = await driver.restoreSession(session.sessionData, { accountId: 'acc-ok', handlers: h });
    expect(again.profile).toEqual(session.profile);
    expect(disconnects).toEqual([]);
    // Dropped by the network: the handlers are told, with the reason.
    expect(await live.drop('acc-ok', { reason: 'network_hiccup', sessionExpired: false })).toBe(true);
    expect(disconnects).toEqual(['network_hiccup']);
    expect(again.isAlive()).toBe(false);
  });
});
