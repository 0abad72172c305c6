import type { ProviderInfo } from './catalog';

/** What a call to a vendor needs: where, and with which key. The key never goes into a message or log. */
export interface Connection {
  provider: ProviderInfo;
  baseUrl: string;
  apiKey: string;
}

export type FailureReason = 'bad_key' | 'timeout' | 'unreachable' | 'http' | 'bad_response';

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
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed unexpectedly',
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

function isTimeout(err: unknown): boolean {
  const e = err as { name?: string; cause?: { name?: string } };
  return e?.name === 'TimeoutError' || e?.cause?.name === 'TimeoutError';
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

/**
 * One JSON request to a vendor. Redirects are not followed: a redirect would carry the key's header to
 * an address nobody configured. Every failure becomes a ProviderError with a readable message.
 */
export async function vendorRequest<T = unknown>(conn: Connection, req: VendorRequest): Promise<T> {
  const name = conn.provider.name;
  const url = conn.baseUrl.replace(/\/+$/, '') + req.path;
  let res: Response;
  let raw: string;
  try {
    res = await fetch(url, {
      method: req.method,
      headers: { accept: 'application/json', ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}), ...req.headers },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      redirect: 'manual',
      signal: AbortSignal.timeout(Math.max(1, req.timeoutMs)),
    });
    raw = await res.text();
  } catch (err) {
    if (isTimeout(err)) {
      throw new ProviderError('timeout', `${name} did not answer within ${formatSeconds(req.budgetMs ?? req.timeoutMs)} (${hostOf(conn.baseUrl)})`);
    }
    const code = networkCode(err);
    const why = (code && NETWORK_CODES[code]) ?? (code ? code.toLowerCase() : 'the request failed');
    throw new ProviderError('unreachable', `Could not reach ${name} at ${hostOf(conn.baseUrl)}: ${why}`);
  }
  let body: unknown;
  try {
    body = raw ? JSON.parse(raw) : undefined;
  } catch {
    body = undefined;
  }
  if (res.status >= 300 && res.status < 400) {
    throw new ProviderError('http', `${name} answered with a redirect (HTTP ${res.status}); set the base URL to the final address`, res.status);
  }
  if (!res.ok) {
    const detail = scrub(vendorMessage(body, raw), conn.apiKey);
    const keyRejected =
      res.status === 401 ||
      res.status === 403 ||
      // Google answers 400 INVALID_ARGUMENT with reason API_KEY_INVALID for a wrong key.
      (res.status === 400 && /API_KEY_INVALID|api key not valid/i.test(raw));
    if (keyRejected) {
      const what = res.status === 403 ? 'refused the API key or the key lacks access' : 'rejected the API key';
      throw new ProviderError('bad_key', `${name} ${what} (HTTP ${res.status})${detail ? `: ${detail}` : ''}. Check the key in AI settings.`, res.status);
    }
    throw new ProviderError('http', `${name} answered HTTP ${res.status}${detail ? `: ${detail}` : ''}`, res.status);
  }
  if (body === undefined) throw new ProviderError('bad_response', `${name} answered with something that is not JSON`);
  return body as T;
}

function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
