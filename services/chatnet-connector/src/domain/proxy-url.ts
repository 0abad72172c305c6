import { invalid } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { AddressGuard } from '@crm/net-guard';

const SCHEMES = new Set(['http:', 'https:', 'socks4:', 'socks4a:', 'socks5:', 'socks5h:']);

/**
 * A proxy the account's connection dials through: scheme http(s) or socks4/5, a host, an optional port
 * and credentials, nothing else. Returns the normalized URL; a 400 naming `proxyUrl` otherwise.
 */
export function normalizeProxyUrl(raw: string): string {
  const value = raw.trim();
  if (value.length > 2000) throw invalid('proxyUrl', 'must be at most 2000 characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('proxyUrl', 'must be a URL such as http://user:pass@host:port or socks5://host:port');
  }
  if (!SCHEMES.has(url.protocol)) throw invalid('proxyUrl', 'scheme must be http, https, socks4, socks4a, socks5 or socks5h');
  if (!url.hostname) throw invalid('proxyUrl', 'must name a host');
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash) throw invalid('proxyUrl', 'must not have a path, query or fragment');
  return `${url.protocol}//${url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : ''}${url.host}`;
}

/** How long saving a proxy waits for its host to resolve. */
const RESOLVE_TIMEOUT_MS = 3_000;

/**
 * The proxy's host must be a public address (or one in CONNECTOR_ALLOWED_PRIVATE_ADDRESSES): a proxy on a
 * private, loopback or link-local address would make the connector dial into its own network for a tenant.
 * Checked when saved (400 naming `proxyUrl`) and, for the real driver, again when dialling (proxy-dialer.ts).
 * A host that does not resolve now is accepted: DNS may not be set up yet.
 */
export async function checkProxyHost(guard: AddressGuard, log: Logger, proxyUrl: string): Promise<void> {
  const host = new URL(proxyUrl).hostname;
  const check = await guard.checkOnSave(host, RESOLVE_TIMEOUT_MS);
  if ('refused' in check) throw invalid('proxyUrl', check.refused);
  if ('unresolved' in check) log.info({ host, err: check.unresolved }, 'proxy host does not resolve now; accepted');
}
