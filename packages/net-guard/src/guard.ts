import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import type { ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { type AllowList, isIpLiteral, judgeAddress } from './address-policy';

/** Hostname → addresses. The system resolver by default; tests inject one to simulate DNS answers. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;
export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** Raised before a connection is opened (or as soon as it opens) when the destination is not a public address. */
export class RefusedAddressError extends Error {
  readonly code = 'EADDRESSREFUSED';
  constructor(host: string, address: string, reason: string, purpose: string) {
    super(
      host === address
        ? `${address} is a ${reason} address; ${purpose} are not sent there`
        : `${host} resolves to ${address}, a ${reason} address; ${purpose} are not sent there`,
    );
  }
}

/** The callback of net's `lookup` hook. */
export type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export interface GuardOptions {
  allow: AllowList;
  /** What is being sent, for messages: "webhooks" → "…; webhooks are not sent there". */
  purpose: string;
  resolve?: Resolver;
}

/** What a host looks like when a URL is saved. */
export type SaveCheck = { refused: string } | { unresolved: string } | { allowed: LookupAddress[] };

/**
 * The host in the form the WHATWG URL parser gives http(s) URLs: every IPv4 spelling (`0x7f.1`,
 * `2130706433`, `017700000001`, `127.1`) becomes dotted decimal and IPv6 is compressed. URLs of other
 * schemes (socks5://) keep their host as written, so their host is passed through here before it is judged.
 */
export function canonicalHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '');
  try {
    return new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return bare;
  }
}

/**
 * The SSRF guard for connections whose destination a tenant chooses. It sits where the address is
 * chosen: an IP literal is judged before anything is dialled, and a hostname is resolved by `lookup`
 * inside the socket's connect, which judges every address the name resolves to and hands the socket only
 * a judged one. So the address dialled is always the address checked (a DNS answer that changes between
 * a check and the connect, DNS rebinding, cannot slip through). `watch` checks the peer once more when
 * the socket connects.
 */
export class AddressGuard {
  readonly allow: AllowList;
  private readonly purpose: string;
  private readonly resolve: Resolver;

  constructor(opts: GuardOptions) {
    this.allow = opts.allow;
    this.purpose = opts.purpose;
    this.resolve = opts.resolve ?? systemResolver;
  }

  /**
   * Resolve a hostname (or take an IP literal) and judge every address; throws RefusedAddressError when
   * any is not allowed. Used to validate a URL when it is saved and inside every connect.
   */
  async resolveAllowed(host: string): Promise<LookupAddress[]> {
    const bare = canonicalHost(host);
    const addresses = isIpLiteral(bare) ? [{ address: bare, family: bare.includes(':') ? 6 : 4 }] : await this.resolve(bare);
    if (addresses.length === 0) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
    // One refused address refuses the name: a name that mixes public and private answers is an attack.
    for (const a of addresses) {
      const v = judgeAddress(a.address, this.allow);
      if (!v.allowed) throw new RefusedAddressError(bare, v.address, v.reason, this.purpose);
    }
    return addresses;
  }

  /**
   * Throws RefusedAddressError when `host` is an IP literal that may not be dialled. Sockets skip the
   * `lookup` hook for IP literals, so a caller asks this before dialling one; names pass (they are
   * judged by `lookup`).
   */
  assertLiteralAllowed(host: string): void {
    const bare = canonicalHost(host);
    if (!isIpLiteral(bare)) return;
    const v = judgeAddress(bare, this.allow);
    if (!v.allowed) throw new RefusedAddressError(bare, v.address, v.reason, this.purpose);
  }

  /**
   * Validate a host when a URL naming it is saved, within `timeoutMs`. A refused address is reported;
   * a host that does not resolve at the moment is not an error (DNS may not be set up yet), because every
   * connection judges the address again, which is where the guard really holds.
   */
  async checkOnSave(host: string, timeoutMs: number): Promise<SaveCheck> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const allowed = await Promise.race([
        this.resolveAllowed(host),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`lookup timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return { allowed };
    } catch (err) {
      if (err instanceof RefusedAddressError) return { refused: err.message };
      return { unresolved: (err as Error).message };
    } finally {
      clearTimeout(timer);
    }
  }

  /** net's `lookup` hook (for agents, `http.request`, `net.connect`): the connect uses exactly the addresses judged here. */
  readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    this.resolveAllowed(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0)
          return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '');
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      },
      (err) => callback(err, ''),
    );
  };

  /** Judge the peer of the request's socket once it connects, and destroy the request if it is refused. */
  watch(request: ClientRequest, host: string): void {
    request.on('socket', (socket: Socket) => {
      if (!socket.connecting) return;
      socket.once('connect', () => {
        const v = judgeAddress(socket.remoteAddress ?? '', this.allow);
        if (!v.allowed) request.destroy(new RefusedAddressError(host, v.address, v.reason, this.purpose));
      });
    });
  }
}
