import http from 'node:http';
import https from 'node:https';
import type { LookupAddress } from 'node:dns';
import { performance } from 'node:perf_hooks';
import { TRACEPARENT } from '@crm/grpc-kit';
import { AddressGuard, type AllowList, RefusedAddressError, type Resolver } from '@crm/net-guard';
import { signedHeaders } from '../domain/signing';

export type { Resolver } from '@crm/net-guard';

/** What the guard's refusals say: "… is a loopback address; webhooks are not sent there". */
const PURPOSE = 'webhooks';

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
  /** HMAC key: the base64-decoded part of a `whsec_` secret, or a typed secret's UTF-8 bytes (domain/signing.ts). */
  key: Buffer;
  timeoutMs?: number;
  /**
   * The request's `traceparent` header: the span of a delivery attempt (the event's trace) or the test send's API
   * call. Passed explicitly, since the service runs without an active context (main.ts); none, no header.
   */
  traceparent?: string;
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
 * Sends one signed attempt through the shared SSRF guard (@crm/net-guard): an IP literal is judged
 * before the request is made, and a hostname is resolved and judged by the guard's `lookup` inside the
 * socket's connect, so the address dialled is always the address checked, on every attempt (DNS
 * rebinding cannot slip through). The remote address is checked once more when the socket connects.
 * Redirects are never followed: a 3xx is a failed attempt. Each request carries the active span's
 * `traceparent` (W3C trace context), so receivers can join it to their own traces.
 */
export class WebhookSender {
  readonly guard: AddressGuard;
  private readonly timeoutMs: number;
  private readonly bodyLimit: number;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(opts: SenderOptions) {
    this.guard = new AddressGuard({ allow: opts.allow, purpose: PURPOSE, resolve: opts.resolve });
    this.timeoutMs = opts.timeoutMs;
    this.bodyLimit = opts.bodyLimit;
    // The guarded lookup is part of the agents, so no socket they open can skip it.
    const agentOptions = {
      keepAlive: true,
      maxSockets: opts.maxSockets ?? 256,
      maxFreeSockets: 64,
      scheduling: 'lifo' as const,
      timeout: 30_000,
      lookup: this.guard.lookup as never,
    };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent(agentOptions);
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** Resolve a host and judge every address; throws RefusedAddressError when any is not allowed. */
  resolveAllowed(host: string): Promise<LookupAddress[]> {
    return this.guard.resolveAllowed(host);
  }

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
    try {
      this.guard.assertLiteralAllowed(host);
    } catch (err) {
      return done({ error: (err as Error).message });
    }

    const headers: Record<string, string> = {
      ...signedHeaders(req.key, req.id, req.body),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(req.body)),
      'user-agent': USER_AGENT,
    };
    if (req.traceparent) headers[TRACEPARENT] = req.traceparent;
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
          lookup: this.guard.lookup as never,
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
              error:
                status >= 200 && status < 300
                  ? null
                  : status >= 300 && status < 400
                    ? `HTTP ${status}: redirects are not followed`
                    : `HTTP ${status}`,
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
      this.guard.watch(request, host);
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
