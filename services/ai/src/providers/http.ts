import http from 'node:http';
import https from 'node:https';
import { type AddressGuard, RefusedAddressError } from '@crm/net-guard';
import type { ProviderInfo } from './catalog';

/** What a call to a vendor needs: where, and with which key. The key never goes into a message or log. */
export interface Connection {
  provider: ProviderInfo;
  baseUrl: string;
  apiKey: string;
  /**
   * Set for an organization's own base URL: every connection is judged by the SSRF guard at the moment
   * its address is chosen. The deployment's base URLs (environment, vendor default) are the operator's.
   */
  guard?: AddressGuard;
}

export type FailureReason = 'bad_key' | 'timeout' | 'unreachable' | 'refused_address' | 'http' | 'bad_response';

/**
 * A vendor call that did not work, with a message meant for the person configuring the provider.
 * Messages are built here from facts we choose (status, error class, the vendor's own short message
 * with the key scrubbed out), so they are safe to return and to log.
 */
export class ProviderError extends Error {
  constructor(
    readonly reason: FailureReason,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name could not be resolved',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate could not be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
};

/** Replace every occurrence of the key (and of its URL-encoded form) in text that may be shown. */
export function scrub(text: string, apiKey: string): string {
  if (!apiKey) return text;
  let out = text.split(apiKey).join('[redacted]');
  const encoded = encodeURIComponent(apiKey);
  if (encoded !== apiKey) out = out.split(encoded).join('[redacted]');
  return out;
}

function networkCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  let e: any = err;
  while (e && !seen.has(e)) {
    seen.add(e);
    if (typeof e.code === 'string' && e.code) return e.code;
    if (Array.isArray(e.errors) && e.errors[0]?.code) return e.errors[0].code;
    e = e.cause;
  }
  return undefined;
}

class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** The vendor's own error text, from the shapes OpenAI, Anthropic and Google use. */
function vendorMessage(body: unknown, raw: string): string {
  const b = body as { error?: { message?: unknown } | string; message?: unknown } | undefined;
  let msg = '';
  if (b && typeof b === 'object') {
    if (typeof b.error === 'string') msg = b.error;
    else if (b.error && typeof b.error.message === 'string') msg = b.error.message;
    else if (typeof b.message === 'string') msg = b.message;
  }
  if (!msg && raw && !raw.trimStart().startsWith('<')) msg = raw;
  msg = msg.replace(/\s+/g, ' ').trim();
  return msg.length > 200 ? `${msg.slice(0, 200)}…` : msg.replace(/[.\s]+$/, '');
}

export interface VendorRequest {
  method: 'GET' | 'POST';
  /** Path after the base URL, starting with '/'. */
  path: string;
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  /** The whole budget when this request is one of several (pages), for the timeout message. */
  budgetMs?: number;
}

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * Node's global agents for the deployment's own base URLs; for organizations' base URLs, one pair of
 * agents per guard, so a socket opened without the guard is never reused for them.
 */
const guardedAgents = new WeakMap<AddressGuard, Agents>();

function agentsFor(guard: AddressGuard | undefined): Agents {
  if (!guard) return { http: http.globalAgent, https: https.globalAgent };
  let agents = guardedAgents.get(guard);
  if (!agents) {
    // The guard's lookup is part of the agents, so no socket they open (a reused one included) skipped it.
    const options = { keepAlive: true, lookup: guard.lookup as never };
    agents = { http: new http.Agent(options), https: new https.Agent(options) };
    guardedAgents.set(guard, agents);
  }
  return agents;
}

interface RawResponse {
  status: number;
  raw: string;
}

/**
 * One HTTP exchange on node:http (global fetch cannot take a lookup hook): for a guarded connection an IP
 * literal is judged before anything is dialled, a hostname inside the socket's connect, and the peer once
 * more when the socket connects. The whole exchange, body included, has `timeoutMs`.
 */
function exchange(url: URL, conn: Connection, req: VendorRequest): Promise<RawResponse> {
  conn.guard?.assertLiteralAllowed(url.hostname);
  const tls = url.protocol === 'https:';
  const agents = agentsFor(conn.guard);
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise<RawResponse>((resolve, reject) => {
    const request = (tls ? https : http).request(url, { method: req.method, headers, agent: tls ? agents.https : agents.http }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, raw: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', fail);
    });
    const timer = setTimeout(() => request.destroy(new TimeoutError('timed out')), Math.max(1, req.timeoutMs));
    function fail(err: Error) {
      clearTimeout(timer);
      reject(err);
    }
    conn.guard?.watch(request, url.hostname.replace(/^\[|\]$/g, ''));
    request.on('error', fail);
    request.end(body);
  });
}

/**
 * One JSON request to a vendor. Redirects are not followed: a redirect would carry the key's header to
 * an address nobody configured. Every failure becomes a ProviderError with a readable message.
 */
export async function vendorRequest<T = unknown>(conn: Connection, req: VendorRequest): Promise<T> {
  const name = conn.provider.name;
  let res: RawResponse;
  try {
    res = await exchange(new URL(conn.baseUrl.replace(/\/+$/, '') + req.path), conn, req);
  } catch (err) {
    if (err instanceof TimeoutError) {
      throw new ProviderError('timeout', `${name} did not answer within ${formatSeconds(req.budgetMs ?? req.timeoutMs)} (${hostOf(conn.baseUrl)})`);
    }
    if (err instanceof RefusedAddressError)
      throw new ProviderError('refused_address', `Could not reach ${name} at ${hostOf(conn.baseUrl)}: ${err.message}`);
    const code = networkCode(err);
    const why = (code && NETWORK_CODES[code]) ?? (code ? code.toLowerCase() : 'the request failed');
    throw new ProviderError('unreachable', `Could not reach ${name} at ${hostOf(conn.baseUrl)}: ${why}`);
  }
  const { status, raw } = res;
  let body: unknown;
  try {
    body = raw ? JSON.parse(raw) : undefined;
  } catch {
    body = undefined;
  }
  if (status >= 300 && status < 400) {
    throw new ProviderError('http', `${name} answered with a redirect (HTTP ${status}); set the base URL to the final address`, status);
  }
  if (status < 200 || status >= 300) {
    const detail = scrub(vendorMessage(body, raw), conn.apiKey);
    const keyRejected =
      status === 401 ||
      status === 403 ||
      // Google answers 400 INVALID_ARGUMENT with reason API_KEY_INVALID for a wrong key.
      (status === 400 && /API_KEY_INVALID|api key not valid/i.test(raw));
    if (keyRejected) {
      const what = status === 403 ? 'refused the API key or the key lacks access' : 'rejected the API key';
      throw new ProviderError('bad_key', `${name} ${what} (HTTP ${status})${detail ? `: ${detail}` : ''}. Check the key in AI settings.`, status);
    }
    throw new ProviderError('http', `${name} answered HTTP ${status}${detail ? `: ${detail}` : ''}`, status);
  }
  if (body === undefined) throw new ProviderError('bad_response', `${name} answered with something that is not JSON`);
  return body as T;
}

function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
