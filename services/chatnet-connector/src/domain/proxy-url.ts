import { invalid } from '@crm/grpc-kit';

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
