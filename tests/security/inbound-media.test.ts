import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { createLogger } from '@crm/logger';
import { AddressGuard, parseAllowList, type Resolver } from '@crm/net-guard';
import type { InboundMessage, SessionHandlers } from '../../services/chatnet-connector/src/drivers/driver';
import { MediaDownloads } from '../../services/chatnet-connector/src/drivers/media-download';
import { parseMediaHosts } from '../../services/chatnet-connector/src/media-hosts';
import { dialThrough } from '../../services/chatnet-connector/src/drivers/proxy-dialer';
import { type ZcaApi, type ZcaClient, ZcaDriver } from '../../services/chatnet-connector/src/zca/zca.driver';

// A photo message names its file by URL, and a message is written by whoever sends it. The zca driver downloads only
// HTTPS URLs on the network's media hosts (CHATNET_MEDIA_HOSTS), each redirect judged again, through the SSRF guard at
// connect time, capped while it streams: a crafted message (or a media host that redirects) cannot make the connector
// fetch its own network and store the answer as an attachment the organization reads.
//
// The stand-in media host is HTTPS on 127.0.0.2 (the one address this guard allows, as a public host would be), named
// through an injected resolver; the "secret" is HTTPS on 127.0.0.1, which the guard refuses like 169.254.169.254.
// fixtures/media-host.{crt,key}: a self-signed test-only certificate for *.media.test, *.elsewhere.test, 127.0.0.1 and
// 127.0.0.2, valid 2000-2100 (openssl ca -selfsign), trusted by the downloads under test only.
const fixture = (name: string) => readFileSync(path.join(__dirname, 'fixtures', name));
const tls = { cert: fixture('media-host.crt'), key: fixture('media-host.key') };
const MEDIA = 'cdn.media.test';
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex');
const SECRET = 'aws-secret-access-key=SECRET-CREDENTIALS';
const TOKEN = 'SECRET-TOKEN';
const MAX_BYTES = 1_000;

/** Test DNS: the media host and a host outside the list on the allowed address; a media-host name on loopback. */
const dns: Record<string, string> = { [MEDIA]: '127.0.0.2', 'rebind.media.test': '127.0.0.1', 'files.elsewhere.test': '127.0.0.2' };
const resolve: Resolver = async (host) => {
  if (!dns[host]) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return [{ address: dns[host], family: 4 }];
};

interface Server {
  server: https.Server | http.Server;
  port: number;
  paths: string[];
  connections: number;
  sockets: Set<net.Socket>;
}

async function listen(server: https.Server | http.Server, host: string): Promise<Server> {
  const s: Server = { server, port: 0, paths: [], connections: 0, sockets: new Set() };
  server.on('connection', (socket: net.Socket) => {
    s.connections++;
    s.sockets.add(socket);
    socket.on('close', () => s.sockets.delete(socket));
  });
  server.on('request', (req: http.IncomingMessage) => s.paths.push(req.url ?? ''));
  await new Promise<void>((r) => server.listen(0, host, r));
  s.port = (server.address() as AddressInfo).port;
  return s;
}

/** Close a server and every socket it took, tunnels included (closeAllConnections leaves CONNECT sockets open). */
const stop = (s: Server | undefined) =>
  new Promise<void>((r) => {
    if (!s) return r();
    s.server.close(() => r());
    for (const socket of s.sockets) socket.destroy();
  });

describe('inbound media: only the network media hosts, through the SSRF guard, redirects judged, size capped', () => {
  let media: Server;
  let secret: Server;
  let proxy: Server;
  const tunnels: string[] = [];
  let downloads: MediaDownloads;
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger('inbound-media-test', 'warn', { write: (line: string) => void lines.push(JSON.parse(line)) });

  const at = (p: string) => `https://${MEDIA}:${media.port}${p}`;
  const secretUrl = () => `https://127.0.0.1:${secret.port}/secret`;

  beforeAll(async () => {
    secret = await listen(
      https.createServer(tls, (_req, res) => res.end(SECRET)),
      '127.0.0.1',
    );
    media = await listen(
      https.createServer(tls, (req, res) => {
        const p = (req.url ?? '').split('?')[0];
        const redirect = (location: string) => res.writeHead(302, { location }).end();
        if (p === '/photo.jpg' || p === '/elsewhere.jpg')
          return res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': JPEG.length }).end(JPEG);
        if (p === '/moved') return redirect('/photo.jpg');
        if (p.startsWith('/hops/')) {
          const n = Number(p.slice('/hops/'.length));
          return redirect(n > 1 ? `${at(`/hops/${n - 1}`)}?${TOKEN}` : '/photo.jpg');
        }
        if (p === '/to-secret') return redirect(secretUrl());
        if (p === '/to-metadata') return redirect('https://169.254.169.254/latest/meta-data/iam/security-credentials/');
        if (p === '/to-rebind') return redirect(`https://rebind.media.test:${secret.port}/secret`);
        if (p === '/to-elsewhere') return redirect(`https://files.elsewhere.test:${media.port}/elsewhere.jpg`);
        if (p === '/to-http') return redirect(`http://${MEDIA}:${media.port}/photo.jpg`);
        if (p === '/to-big') return redirect('/big');
        // No content-length: only the count while streaming can stop it.
        if (p === '/big') {
          res.writeHead(200, { 'content-type': 'image/jpeg' });
          for (let i = 0; i < 10; i++) res.write(Buffer.alloc(500, 1));
          return res.end();
        }
        res.writeHead(404).end();
      }),
      '127.0.0.2',
    );
    // An HTTP CONNECT proxy on loopback; it resolves the name it is asked for itself (the test DNS).
    proxy = await listen(
      http.createServer((_req, res) => res.writeHead(405).end()),
      '127.0.0.1',
    );
    proxy.server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = net.connect(Number(port), dns[host] ?? host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
    });
    const guard = new AddressGuard({ allow: parseAllowList('127.0.0.2'), purpose: 'inbound file downloads', resolve });
    downloads = new MediaDownloads({ hosts: parseMediaHosts('media.test'), guard, maxBytes: MAX_BYTES, ca: tls.cert });
  });
  afterAll(async () => {
    downloads?.close();
    await Promise.all([stop(media), stop(secret), stop(proxy)]);
  });

  /** A live zca session on a fake network api: messages are emitted on its listener, what it hands over is recorded. */
  async function session(proxyUrl?: string) {
    const listener = Object.assign(new EventEmitter(), {
      start: () => setImmediate(() => listener.emit('connected')),
      stop: () => listener.emit('closed', 1000, ''),
      requestOldMessages: () => undefined,
    });
    const api = {
      listener,
      getOwnId: () => '8421930000000000001',
      fetchAccountInfo: async () => ({ profile: { userId: '8421930000000000001', displayName: 'Shop', avatar: '', phoneNumber: '' } }),
      getUserInfo: async () => ({ changed_profiles: {} }),
      getGroupInfo: async () => ({ gridInfoMap: {} }),
    } as unknown as ZcaApi;
    const client = { login: async () => api, loginQR: async () => api } as unknown as ZcaClient;
    const messages: InboundMessage[] = [];
    const stored: Buffer[] = [];
    const handlers = {
      onMessage: async (m: InboundMessage) => void messages.push(m),
      storeFile: async (f: { body: NodeJS.ReadableStream }) => {
        const chunks: Buffer[] = [];
        for await (const c of f.body) chunks.push(c as Buffer);
        stored.push(Buffer.concat(chunks));
        return { id: `att-${stored.length}`, fileName: 'photo.jpg', mimeType: 'image/jpeg', size: stored[stored.length - 1].length };
      },
      onSeen: async () => undefined,
      onRecall: async () => undefined,
      onReaction: async () => undefined,
      onDisconnect: () => undefined,
      onFriendsChanged: () => undefined,
      onFriendRequestAccepted: async () => undefined,
    } as unknown as SessionHandlers;
    // The proxy is on loopback, which the proxies' own guard (CONNECTOR_ALLOWED_PRIVATE_ADDRESSES) must name.
    const proxyGuard = new AddressGuard({ allow: parseAllowList('127.0.0.1'), purpose: 'proxy connections' });
    const driver = new ZcaDriver({ log, qrMaxRefreshes: 1, factory: () => client, media: downloads, proxy: (url) => dialThrough(url, proxyGuard) });
    const sessionData = JSON.stringify({ v: 1, imei: 'imei', userAgent: 'ua', cookie: [] });
    await driver.restoreSession(sessionData, { accountId: 'a1', handlers, ...(proxyUrl ? { proxyUrl } : {}) });

    let n = 0;
    /** A contact sends a photo whose file is at `href`; resolves with the message as handed over and the warnings it caused. */
    async function photo(href: string) {
      const msgId = `${Date.now()}${++n}`;
      const from = lines.length;
      listener.emit('message', {
        type: 0,
        threadId: `61000000000${msgId}`,
        isSelf: false,
        data: {
          msgId,
          cliMsgId: `c${msgId}`,
          msgType: 'chat.photo',
          uidFrom: `61000000000${msgId}`,
          dName: 'Mai',
          ts: String(Date.now()),
          content: { title: '', href, thumb: '' },
        },
      });
      for (const end = Date.now() + 20_000; !messages.some((m) => m.chatnetMessageId === msgId); await new Promise((r) => setTimeout(r, 10))) {
        if (Date.now() > end) throw new Error(`message ${msgId} was not handed over`);
      }
      const warnings = lines.slice(from).filter((l) => l.level === 40 && l.chatnetMessageId === msgId);
      return { message: messages.find((m) => m.chatnetMessageId === msgId)!, warnings };
    }
    return { photo, stored };
  }

  /** Nothing reached messaging, the message went on without a file, one warning said why and held no token. */
  function expectRefused(got: { message: InboundMessage; warnings: Array<Record<string, unknown>> }, stored: Buffer[], warning: RegExp) {
    expect(got.message.attachments).toBeUndefined();
    expect(stored).toEqual([]);
    expect(got.warnings).toHaveLength(1);
    expect(String((got.warnings[0].err as { message: string }).message)).toMatch(warning);
    expect(JSON.stringify(got.warnings)).not.toContain(TOKEN);
  }

  it('a photo on a media host is stored, directly or after redirects (relative ones too), up to 3', async () => {
    const s = await session();
    for (const href of [at(`/photo.jpg?${TOKEN}`), at('/moved'), at('/hops/3')]) {
      const got = await s.photo(href);
      expect(got.message.attachments).toEqual([expect.objectContaining({ id: expect.stringMatching(/^att-/), size: JPEG.length })]);
      expect(got.warnings).toEqual([]);
    }
    expect(s.stored).toEqual([JPEG, JPEG, JPEG]);
  });

  it('a redirect to 127.0.0.1 or to 169.254.169.254 is refused before anything is dialled; the secret is never fetched', async () => {
    const s = await session();
    expectRefused(
      await s.photo(at(`/to-secret?${TOKEN}`)),
      s.stored,
      /redirect from cdn\.media\.test is on 127\.0\.0\.1, not one of the network's media hosts/,
    );
    expectRefused(
      await s.photo(at('/to-metadata')),
      s.stored,
      /redirect from cdn\.media\.test is on 169\.254\.169\.254, not one of the network's media hosts/,
    );
    expect(secret.connections).toBe(0);
  });

  it('a redirect to a media-host name that resolves to 127.0.0.1 is refused by the guard at connect time', async () => {
    const s = await session();
    expectRefused(
      await s.photo(at('/to-rebind')),
      s.stored,
      /^rebind\.media\.test resolves to 127\.0\.0\.1, a loopback address; inbound file downloads are not sent there$/,
    );
    expect(secret.connections).toBe(0);
  });

  it('a URL whose media-host name resolves to 127.0.0.1 is refused by the guard; nothing connects to it', async () => {
    const s = await session();
    expectRefused(
      await s.photo(`https://rebind.media.test:${secret.port}/secret?${TOKEN}`),
      s.stored,
      /rebind\.media\.test resolves to 127\.0\.0\.1, a loopback address/,
    );
    expect(secret.connections).toBe(0);
  });

  it('a host not in the list is refused though its address is allowed: as the URL or as a redirect', async () => {
    const s = await session();
    expectRefused(
      await s.photo(`https://files.elsewhere.test:${media.port}/elsewhere.jpg?${TOKEN}`),
      s.stored,
      /^the file is on files\.elsewhere\.test, not one of the network's media hosts/,
    );
    expectRefused(await s.photo(at('/to-elsewhere')), s.stored, /redirect from cdn\.media\.test is on files\.elsewhere\.test/);
    expect(media.paths).not.toContain('/elsewhere.jpg');
  });

  it('plain http (as the URL or a redirect) and a fourth redirect are refused', async () => {
    const s = await session();
    expectRefused(await s.photo(`http://${MEDIA}:${media.port}/photo.jpg`), s.stored, /^the file is not HTTPS \(http:\)$/);
    expectRefused(await s.photo(at('/to-http')), s.stored, /redirect from cdn\.media\.test is not HTTPS/);
    const before = media.paths.length;
    expectRefused(await s.photo(at('/hops/4')), s.stored, /^cdn\.media\.test redirected more than 3 times$/);
    // Four hops asked, the fourth redirect never followed.
    expect(media.paths.slice(before).map((p) => p.split('?')[0])).toEqual(['/hops/4', '/hops/3', '/hops/2', '/hops/1']);
  });

  it('the size cap counts the stream after a redirect (no content-length)', async () => {
    const s = await session();
    expectRefused(await s.photo(at('/to-big')), s.stored, new RegExp(`^the file is larger than ${MAX_BYTES} bytes$`));
  });

  it('through a proxy (which resolves the name itself) the host list still holds: only a media host is asked for', async () => {
    const s = await session(`http://127.0.0.1:${proxy.port}`);
    const got = await s.photo(at('/moved'));
    expect(got.message.attachments).toEqual([expect.objectContaining({ size: JPEG.length })]);
    expect(s.stored).toEqual([JPEG]);
    expect(new Set(tunnels)).toEqual(new Set([`${MEDIA}:${media.port}`]));

    const refused = await s.photo(at('/to-secret'));
    expect(refused.message.attachments).toBeUndefined();
    expect(refused.warnings).toHaveLength(1);
    expect(tunnels.filter((t) => !t.startsWith(`${MEDIA}:`))).toEqual([]);
    expect(secret.connections).toBe(0);
  });
});
