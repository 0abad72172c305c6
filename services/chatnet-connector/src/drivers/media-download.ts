import type { Agent, IncomingMessage } from 'node:http';
import https from 'node:https';
import { pipeline, type Readable, Transform } from 'node:stream';
import type { AddressGuard } from '@crm/net-guard';
import { isMediaHost } from '../media-hosts';

/** Where a message's file is fetched from; `via` is the agent of a session that goes through its account's proxy. */
export interface InboundMedia {
  /** The file's bytes, streamed, never more than the limit; rejects when it is refused or cannot be had. */
  download(url: string, via?: Agent): Promise<Readable>;
}

/** A file the connector would not fetch: not HTTPS, not on a media host, or too many redirects. */
export class MediaRefusedError extends Error {
  readonly code = 'EMEDIAREFUSED';
}

export interface MediaDownloadOptions {
  /** CHATNET_MEDIA_HOSTS: a URL (the first or a redirect's) is fetched only on these hosts or their subdomains. */
  hosts: readonly string[];
  /** The SSRF guard of direct connections: it judges the address a name resolves to inside the connect. */
  guard: AddressGuard;
  /** The largest file stored (ATTACHMENT_MAX_BYTES); a larger one fails while it streams. */
  maxBytes: number;
  /** Redirects followed, each judged like the first URL. */
  maxRedirects?: number;
  /** Certificate authorities to trust instead of the system's: tests, whose media host has its own. */
  ca?: string | Buffer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** A download that sends nothing for this long is given up, so one silent host cannot hold its thread's messages. */
const IDLE_TIMEOUT_MS = 60_000;

/**
 * Downloads of inbound photos and files, on node:https (global fetch takes no `lookup` hook). Every URL, the first and
 * each redirect's `location`, must be HTTPS on a media host before anything is dialled; at most `maxRedirects` are
 * followed. A direct connection resolves its host through the guard's `lookup` (the agent's), so the address judged is
 * the address dialled, and `watch` judges the peer once more. The body is counted as it streams.
 */
export class MediaDownloads implements InboundMedia {
  private readonly direct: https.Agent;
  private readonly maxRedirects: number;

  constructor(private readonly o: MediaDownloadOptions) {
    this.maxRedirects = o.maxRedirects ?? 3;
    this.direct = new https.Agent({ keepAlive: true, lookup: o.guard.lookup as never, ...(o.ca ? { ca: o.ca } : {}) });
  }

  async download(url: string, via?: Agent): Promise<Readable> {
    let target = this.allowed(url, 'the file');
    for (let redirects = 0; ; redirects++) {
      const res = await this.get(target, via);
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        res.resume();
        if (redirects >= this.maxRedirects) throw new MediaRefusedError(`${target.hostname} redirected more than ${this.maxRedirects} times`);
        const location = res.headers.location;
        if (!location) throw new Error(`${target.hostname} answered ${status} without a location`);
        target = this.allowed(location, `the redirect from ${target.hostname}`, target);
        continue;
      }
      if (status !== 200) {
        res.resume();
        throw new Error(`${target.hostname} answered ${status}`);
      }
      const announced = Number(res.headers['content-length'] ?? 0);
      if (announced > this.o.maxBytes) {
        res.destroy();
        throw new Error(`the file is larger than ${this.o.maxBytes} bytes`);
      }
      // pipeline, not pipe: a source that fails mid-way fails the stream messaging reads.
      return pipeline(res, capped(this.o.maxBytes), () => undefined);
    }
  }

  close(): void {
    this.direct.destroy();
  }

  /** The URL when it may be fetched: HTTPS on a media host. The error names the host only (a query may hold a token). */
  private allowed(raw: string, what: string, base?: URL): URL {
    let url: URL;
    try {
      url = new URL(raw, base);
    } catch {
      throw new MediaRefusedError(`${what} is not a URL`);
    }
    if (url.protocol !== 'https:') throw new MediaRefusedError(`${what} is not HTTPS (${url.protocol})`);
    if (!isMediaHost(url.hostname, this.o.hosts))
      throw new MediaRefusedError(`${what} is on ${url.hostname}, not one of the network's media hosts (CHATNET_MEDIA_HOSTS)`);
    return url;
  }

  /**
   * One GET. Direct: the guard judges an IP literal now, a name inside the connect (the agent's lookup), the peer when
   * connected. Through a proxy the proxy dials: an HTTP(S) proxy (CONNECT) and socks4a/socks5h resolve the name
   * themselves, so no address of ours can be judged and only the host list holds (what the proxy reaches is on its
   * network, not ours); socks4/socks5 resolve here with the request's `lookup`, the guard's.
   */
  private get(url: URL, via: Agent | undefined): Promise<IncomingMessage> {
    this.o.guard.assertLiteralAllowed(url.hostname);
    return new Promise((resolve, reject) => {
      const request = https.request(
        url,
        // identity: the bytes counted are the bytes stored (fetch used to inflate a compressed answer unbounded).
        {
          method: 'GET',
          agent: via ?? this.direct,
          lookup: this.o.guard.lookup as never,
          headers: { 'accept-encoding': 'identity' },
          // A proxy agent starts TLS with the request's options, not the direct agent's.
          ...(this.o.ca ? { ca: this.o.ca } : {}),
        },
        resolve,
      );
      if (!via) this.o.guard.watch(request, url.hostname);
      request.setTimeout(IDLE_TIMEOUT_MS, () => request.destroy(new Error(`${url.hostname} sent nothing for ${IDLE_TIMEOUT_MS / 1000} s`)));
      request.on('error', reject);
      request.end();
    });
  }
}

/** Counts a download's bytes and fails it past the limit, so a file is never read beyond what may be stored. */
function capped(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > maxBytes ? new Error(`the file is larger than ${maxBytes} bytes`) : null, chunk);
    },
  });
}
