import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type AllowList, isIpLiteral, judgeAddress } from '../domain/address-policy';
import { signedHeaders } from '../domain/signing';

/** Hostname → addresses. The system resolver by default; tests inject one to simulate DNS answers. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;
const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** Raised before a connection is opened when the destination is not a public address. */
export class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
  constructor(host: string, address: string, reason: string) {
    super(host === address ? `${address} is a ${reason} address; webhooks are not sent there` : `${host} resolves to ${address}, a ${reason} address; webhooks are not sent there`);
  }
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string;
  responseBodyTruncated: boolean;
  startedAt: Date;
}

export interface SendRequest {
  url: string;
  /** `webhook-id`: the event id, the same on every attempt. */
  id: string;
  body: string;
  /** HMAC key: the base64-decoded part of the `whsec_` secret. */
  key: Buffer;
  timeoutMs?: number;
}

export interface SenderOptions {
  allow: AllowList;
  timeoutMs: number;
  bodyLimit: number;
  resolve?: Resolver;
  maxSockets?: number;
}

/** Past the logged part, a response body is read (to keep the connection reusable) up to this, then dropped. */
const DRAIN_LIMIT = 256 * 1024;
const USER_AGENT = 'crm-webhooks/1.0 (+https://www.standardwebhooks.com)';

/**
 * Sends one signed attempt. The SSRF guard sits where the address is chosen: an IP literal is judged
 * before the request is made, and a hostname is resolved by `lookup` inside the socket's connect, which
 * judges every address the name resolves to and hands the socket only a judged one. So the address
 * dialled is always the address checked, on every attempt (a DNS answer that changes between a check and
 * the connect, DNS rebinding, cannot slip through). The remote address is checked once more when the
 * socket connects. Redirects are never followed: a 3xx is a failed attempt.
 */
export class WebhookSender {
  private readonly allow: AllowList;
  private readonly timeoutMs: number;
  private readonly bodyLimit: number;
  private readonly resolve: Resolver;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(opts: SenderOptions) {
    this.allow = opts.allow;
    this.timeoutMs = opts.timeoutMs;
    this.bodyLimit = opts.bodyLimit;
    this.resolve = opts.resolve ?? systemResolver;
    // The guarded lookup is part of the agents, so no socket they open can skip it.
    const agentOptions = { keepAlive: true, maxSockets: opts.maxSockets ?? 256, maxFreeSockets: 64, scheduling: 'lifo' as const, timeout: 30_000, lookup: this.lookup as never };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent(agentOptions);
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /**
   * Resolve a hostname (or take an IP literal) and judge every address; throws RefusedAddressError when
   * any is not allowed. Used to validate a URL when it is saved and inside every connect.
   */
  async resolveAllowed(host: string): Promise<LookupAddress[]> {
    const bare = host.replace(/^\[|\]$/g, '');
    const addresses = isIpLiteral(bare) ? [{ address: bare, family: bare.includes(':') ? 6 : 4 }] : await this.resolve(bare);
    if (addresses.length === 0) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
    // One refused address refuses the name: a name that mixes public and private answers is an attack.
    for (const a of addresses) {
      const v = judgeAddress(a.address, this.allow);
      if (!v.allowed) throw new RefusedAddressError(bare, v.address, v.reason);
    }
    return addresses;
  }

  /** net's `lookup` hook: the connect uses exactly the addresses judged here. */
  private readonly lookup = (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    this.resolveAllowed(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '');
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      },
      (err) => callback(err, ''),
    );
  };

  async send(req: SendRequest): Promise<AttemptResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const done = (r: Partial<AttemptResult>): AttemptResult => ({
      ok: false,
      statusCode: null,
      responseBodyTruncated: false,
      ...r,
      // Whatever a receiver sends must be storable: PostgreSQL text cannot hold NUL.
      responseBody: (r.responseBody ?? '').replace(/\u0000/g, ''),
      error: r.error ? r.error.replace(/\u0000/g, '').slice(0, 1000) : null,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
    });

    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return done({ error: 'invalid URL' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return done({ error: 'only http and https URLs are supported' });
    // The WHATWG parser has already turned every IPv4 spelling (0x7f.1, 2130706433, 017700000001, 127.1)
    // into dotted decimal and compressed IPv6, so this sees the address that would be dialled.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIpLiteral(host)) {
      const v = judgeAddress(host, this.allow);
      if (!v.allowed) return done({ error: new RefusedAddressError(host, v.address, v.reason).message });
    }

    const headers = {
      ...signedHeaders(req.key, req.id, req.body),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(req.body)),
      'user-agent': USER_AGENT,
    };
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const https_ = url.protocol === 'https:';

    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const settle = (r: Partial<AttemptResult>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(r));
      };
      const request = (https_ ? https : http).request(
        {
          protocol: url.protocol,
          hostname: host,
          port: url.port || (https_ ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers,
          agent: https_ ? this.httpsAgent : this.httpAgent,
          lookup: this.lookup as never,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const kept: Buffer[] = [];
          let keptBytes = 0;
          let seen = 0;
          let truncated = false;
          const finish = () =>
            settle({
              ok: status >= 200 && status < 300,
              statusCode: status,
              error: status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`,
              responseBody: Buffer.concat(kept).toString('utf8'),
              responseBodyTruncated: truncated,
            });
          res.on('data', (chunk: Buffer) => {
            seen += chunk.length;
            if (keptBytes < this.bodyLimit) {
              const take = chunk.subarray(0, this.bodyLimit - keptBytes);
              kept.push(take);
              keptBytes += take.length;
            }
            if (seen > this.bodyLimit) truncated = true;
            if (seen > DRAIN_LIMIT) {
              // Not worth reading on; the socket is not reused.
              res.destroy();
              finish();
            }
          });
          res.on('end', finish);
          res.on('error', (err) => settle({ statusCode: status, error: describe(err) }));
        },
      );
      const timer = setTimeout(() => request.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
      request.on('socket', (socket: Socket) => {
        if (!socket.connecting) return;
        socket.once('connect', () => {
          const v = judgeAddress(socket.remoteAddress ?? '', this.allow);
          if (!v.allowed) request.destroy(new RefusedAddressError(host, v.address, v.reason));
        });
      });
      request.on('error', (err) => settle({ error: describe(err) }));
      request.end(req.body);
    });
  }
}

function describe(err: NodeJS.ErrnoException): string {
  if (err instanceof RefusedAddressError) return err.message;
  if (err.code === 'ETIMEDOUT') return err.message;
  return err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message;
}
