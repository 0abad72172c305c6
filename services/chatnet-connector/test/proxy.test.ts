import http from 'node:http';
import net, { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { AddressGuard, parseAllowList, RefusedAddressError, type Resolver } from '@crm/net-guard';
import { connectorRules } from '@crm/validation';
import { dialThrough } from '../src/drivers/proxy-dialer';

const guard = (allow: string, resolve?: Resolver) => new AddressGuard({ allow: parseAllowList(allow), purpose: 'proxy connections', resolve });
/** The test proxies are on loopback, which the operator's allow-list must name. */
const loopbackAllowed = guard('127.0.0.1');

// The URL's form is a contract rule shared with the gateway (@crm/validation); the connector adds where its host may be.
const normalizeProxyUrl = connectorRules.proxyUrl;

describe('proxy URL validation', () => {
  it('accepts http(s) and socks proxies with optional credentials and port, normalized', () => {
    expect(normalizeProxyUrl(' http://user:p%40ss@proxy.example:3128/ ')).toBe('http://user:p%40ss@proxy.example:3128');
    expect(normalizeProxyUrl('socks5://10.0.0.1:1080')).toBe('socks5://10.0.0.1:1080');
    expect(normalizeProxyUrl('https://proxy.example')).toBe('https://proxy.example');
    expect(normalizeProxyUrl('socks5h://u@[::1]:9050')).toBe('socks5h://u@[::1]:9050');
  });

  it('refuses anything else with a 400 naming proxyUrl', () => {
    for (const bad of [
      'proxy.example:3128',
      'ftp://proxy.example',
      'http://proxy.example/path',
      'http://proxy.example?x=1',
      'http://',
      'x'.repeat(2001),
    ]) {
      expect(() => normalizeProxyUrl(bad)).toThrow(
        expect.objectContaining({ kind: 'invalid_argument', details: [expect.objectContaining({ field: 'proxyUrl' })] }),
      );
    }
  });
});

// zca-js sends every request through the fetch it is given and opens its WebSocket with the agent: both
// must go through the account's proxy. Loopback only: a CONNECT proxy and a target server on 127.0.0.1.
describe('dialing through a proxy', () => {
  let target: http.Server;
  let proxy: http.Server;
  const tunnels: string[] = [];
  let proxyConnections = 0;

  beforeAll(async () => {
    target = http.createServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, {
          location: 'http://127.0.0.1:1/elsewhere',
          'set-cookie': ['a=1; Path=/', 'b=2; Expires=Wed, 18 Mar 2026 10:00:00 GMT; Path=/'],
        });
        return res.end();
      }
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const json = JSON.stringify({ method: req.method, url: req.url, body, ua: req.headers['user-agent'], enc: req.headers['accept-encoding'] });
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(zlib.gzipSync(json));
      });
    });
    proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connection', () => proxyConnections++);
    proxy.on('connect', (req, socket, head) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = net.connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
    });
    await Promise.all([new Promise<void>((r) => target.listen(0, '127.0.0.1', r)), new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))]);
  });
  afterAll(async () => {
    await new Promise((r) => target.close(r));
    await new Promise((r) => proxy.close(r));
  });

  it('sends requests through the proxy tunnel and decodes the response', async () => {
    const targetPort = (target.address() as AddressInfo).port;
    const { fetch, agent } = dialThrough(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, loopbackAllowed);
    const res = await fetch(`http://127.0.0.1:${targetPort}/api/login/getLoginInfo?x=1`, {
      method: 'POST',
      headers: { 'user-agent': 'zca-test', 'accept-encoding': 'gzip, deflate, br, zstd' },
      body: new URLSearchParams({ params: 'abc' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      method: 'POST',
      url: '/api/login/getLoginInfo?x=1',
      body: 'params=abc',
      ua: 'zca-test',
      enc: 'gzip, deflate, br',
    });
    expect(tunnels).toContain(`127.0.0.1:${targetPort}`);
    (agent as unknown as { destroy?: () => void }).destroy?.();
  });

  it('does not follow redirects and keeps every Set-Cookie header (zca-js handles both itself)', async () => {
    const targetPort = (target.address() as AddressInfo).port;
    const { fetch } = dialThrough(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, loopbackAllowed);
    const res = await fetch(`http://127.0.0.1:${targetPort}/redirect`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://127.0.0.1:1/elsewhere');
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Expires=Wed, 18 Mar 2026 10:00:00 GMT; Path=/']);
  });

  it('builds a SOCKS agent for socks URLs', () => {
    const { agent } = dialThrough('socks5://127.0.0.1:1', loopbackAllowed);
    expect(agent.constructor.name).toBe('SocksProxyAgent');
  });

  // The proxy is the tenant-chosen destination: with an empty allow-list no spelling of loopback or
  // link-local may be dialled, and a refusal comes before any connection is opened.
  describe('the SSRF guard on the proxy address', () => {
    const proxyPort = () => (proxy.address() as AddressInfo).port;
    const targetPort = () => (target.address() as AddressInfo).port;

    it.each([
      'http://127.0.0.1:PORT',
      'http://0x7f.1:PORT',
      'socks5://0x7f.1:PORT',
      'socks5://2130706433:PORT',
      'socks5h://017700000001:PORT',
      'http://[::ffff:127.0.0.1]:PORT',
      'socks5://[::1]:PORT',
      'http://169.254.169.254:80',
    ])('refuses the proxy %s before dialling', (template) => {
      const before = proxyConnections;
      expect(() => dialThrough(template.replace('PORT', String(proxyPort())), guard(''))).toThrow(RefusedAddressError);
      expect(proxyConnections).toBe(before);
    });

    it('judges the address a proxy host name resolves to when the socket connects (http proxy)', async () => {
      const before = proxyConnections;
      const { fetch } = dialThrough(
        `http://proxy.test:${proxyPort()}`,
        guard('', async () => [{ address: '127.0.0.1', family: 4 }]),
      );
      await expect(fetch(`http://127.0.0.1:${targetPort()}/`)).rejects.toThrow(
        'proxy.test resolves to 127.0.0.1, a loopback address; proxy connections are not sent there',
      );
      expect(proxyConnections).toBe(before);
    });

    it('judges the address a proxy host name resolves to when the socket connects (socks proxy)', async () => {
      const socks = net.createServer((s) => s.destroy());
      let socksConnections = 0;
      socks.on('connection', () => socksConnections++);
      await new Promise<void>((r) => socks.listen(0, '127.0.0.1', r));
      try {
        const port = (socks.address() as AddressInfo).port;
        const { fetch } = dialThrough(
          `socks5://socks.test:${port}`,
          guard('', async () => [
            { address: '169.254.169.254', family: 4 },
            { address: '127.0.0.1', family: 4 },
          ]),
        );
        await expect(fetch(`http://127.0.0.1:${targetPort()}/`)).rejects.toThrow(/socks\.test resolves to 169\.254\.169\.254, a linkLocal address/);
        expect(socksConnections).toBe(0);
      } finally {
        await new Promise((r) => socks.close(r));
      }
    });

    it('dials a host name through the guard when its address is allowed', async () => {
      const { fetch } = dialThrough(
        `http://proxy.test:${proxyPort()}`,
        guard('127.0.0.1', async () => [{ address: '127.0.0.1', family: 4 }]),
      );
      expect((await fetch(`http://127.0.0.1:${targetPort()}/`)).status).toBe(200);
    });
  });
});
