import http from 'node:http';
import https from 'node:https';
import { AddressGuard, type AllowList, RefusedAddressError } from '@crm/net-guard';
import { signedHeaders } from './signing';

/** What the guard's refusals say: "… is a loopback address; automation HTTP steps are not sent there". */
const PURPOSE = 'automation HTTP steps';
/** The bound on one request: a slow system holds one run slot at most this long. */
export const HTTP_STEP_TIMEOUT_MS = 10_000;
/** Of an answer, this much is read and kept for later steps (a JSON body larger than this is not parsed). */
const BODY_LIMIT = 64 * 1024;
const USER_AGENT = 'crm-automation/1.0';

export interface HttpStepRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** `webhook-id`: the same on every attempt of the step, so a receiver can tell a retry from a new request. */
  id: string;
  secret: string;
}

/** Why a request got no answer: `refused` (the SSRF guard) is final, anything else is worth another attempt. */
export class HttpStepError extends Error {
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(message);
  }
}

/**
 * Sends http_request steps through the shared SSRF guard (@crm/net-guard) with its own allow-list
 * (AUTOMATION_ALLOWED_PRIVATE_ADDRESSES), as webhooks do with theirs: an IP literal is judged before the request, a
 * name is resolved and judged inside the socket's connect (the address dialled is the address checked, every
 * attempt), the peer is judged again on connect, and redirects are not followed (a 3xx is the answer).
 */
export class HttpStepClient {
  readonly guard: AddressGuard;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(allow: AllowList) {
    this.guard = new AddressGuard({ allow, purpose: PURPOSE });
    const agentOptions = { keepAlive: true, maxSockets: 64, timeout: 30_000, lookup: this.guard.lookup as never };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent(agentOptions);
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** The answer's status and body (parsed when it is JSON, else null). */
  send(req: HttpStepRequest): Promise<{ status: number; body: unknown }> {
    const url = new URL(req.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    try {
      this.guard.assertLiteralAllowed(host);
    } catch (err) {
      return Promise.reject(new HttpStepError((err as Error).message, true));
    }
    const body = req.body ?? '';
    const headers: Record<string, string> = {
      ...req.headers,
      ...signedHeaders(req.secret, req.id, body),
      'user-agent': USER_AGENT,
    };
    if (req.body !== undefined) {
      headers['content-type'] ??= looksLikeJson(body) ? 'application/json' : 'text/plain; charset=utf-8';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const secure = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err instanceof HttpStepError ? err : new HttpStepError(describe(err), err instanceof RefusedAddressError));
      };
      const request = (secure ? https : http).request(
        {
          protocol: url.protocol,
          hostname: host,
          port: url.port || (secure ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method: req.method,
          headers,
          agent: secure ? this.httpsAgent : this.httpAgent,
          lookup: this.guard.lookup as never,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          let tooBig = false;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size <= BODY_LIMIT) chunks.push(chunk);
            else tooBig = true;
            if (size > 4 * BODY_LIMIT) res.destroy();
          });
          const done = () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, body: tooBig ? null : parseJson(Buffer.concat(chunks).toString('utf8')) });
          };
          res.on('end', done);
          res.on('close', done);
          res.on('error', (err) => fail(err));
        },
      );
      const timer = setTimeout(
        () => request.destroy(Object.assign(new Error(`no answer within ${HTTP_STEP_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })),
        HTTP_STEP_TIMEOUT_MS,
      );
      this.guard.watch(request, host);
      request.on('error', (err) => fail(err));
      request.end(req.body === undefined ? undefined : body);
    });
  }
}

function looksLikeJson(text: string): boolean {
  return parseJson(text) !== null;
}

function parseJson(text: string): unknown {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function describe(err: NodeJS.ErrnoException): string {
  if (err instanceof RefusedAddressError || err.code === 'ETIMEDOUT') return err.message;
  return err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message;
}
