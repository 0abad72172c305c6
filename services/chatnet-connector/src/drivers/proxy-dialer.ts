import http, { Agent, IncomingMessage } from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import type { AddressGuard } from '@crm/net-guard';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';

/**
 * One agent per session from the account's proxy URL (never a process-wide proxy variable): http(s)
 * proxies through CONNECT, socks4/5 natively. The proxy is a tenant-chosen destination, so the SSRF guard
 * judges the address actually dialled: an IP literal here (sockets skip `lookup` for those; this throws
 * RefusedAddressError), a host name in the guard's `lookup`, which both agents use for the proxy's socket.
 */
export function proxyAgent(proxyUrl: string, guard: AddressGuard): Agent {
  const url = new URL(proxyUrl);
  guard.assertLiteralAllowed(url.hostname);
  const lookup = guard.lookup as never;
  if (url.protocol === 'http:' || url.protocol === 'https:') return new HttpsProxyAgent(proxyUrl, { keepAlive: true, lookup }) as unknown as Agent;
  return new SocksProxyAgent(proxyUrl, { keepAlive: true, socketOptions: { lookup } }) as unknown as Agent;
}

const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * A `fetch` that dials through `agent`. Node's built-in fetch ignores agents, and zca-js sends all HTTP
 * through the `fetch` it is given, so without this a proxied account would leak its real address. It never
 * follows redirects (zca-js follows `location` itself, carrying cookies) and asks only for encodings Node
 * can decode.
 */
export function fetchVia(agent: Agent): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers = new Headers(init.headers);
    headers.set('accept-encoding', 'gzip, deflate, br');
    let body: Buffer | undefined;
    if (init.body !== undefined && init.body !== null) {
      if (typeof init.body === 'string' || init.body instanceof URLSearchParams) body = Buffer.from(String(init.body));
      else if (init.body instanceof ArrayBuffer || ArrayBuffer.isView(init.body)) body = Buffer.from(init.body as ArrayBuffer);
      else {
        // Uploads (FormData, streams) go through a Request so their multipart encoding is done for us.
        const req = new Request(url, { method: init.method ?? 'POST', body: init.body as RequestInit['body'], headers });
        body = Buffer.from(await req.arrayBuffer());
        headers.set('content-type', req.headers.get('content-type') ?? 'application/octet-stream');
      }
      headers.set('content-length', String(body.length));
    }
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        { method: init.method ?? 'GET', headers: Object.fromEntries(headers.entries()), agent },
        resolve,
      );
      request.on('error', reject);
      init.signal?.addEventListener('abort', () => request.destroy(new Error('aborted')), { once: true });
      request.end(body);
    });
    const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
    const stream = DECODERS[encoding] ? res.pipe(DECODERS[encoding]()) : res;
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const out = new Headers();
    for (let i = 0; i < res.rawHeaders.length; i += 2) {
      const name = res.rawHeaders[i].toLowerCase();
      if (name === 'content-encoding' || name === 'content-length') continue;
      out.append(name, res.rawHeaders[i + 1]);
    }
    const status = res.statusCode ?? 502;
    const noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
    return new Response(noBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers: out });
  }) as typeof fetch;
}

/** What the zca driver needs for a proxied session. */
export function dialThrough(proxyUrl: string, guard: AddressGuard): { agent: Agent; fetch: typeof fetch } {
  const agent = proxyAgent(proxyUrl, guard);
  return { agent, fetch: fetchVia(agent) };
}
