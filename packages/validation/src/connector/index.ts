import { invalid } from '@crm/grpc-kit';

// chatnet-connector's contract rules: the gateway's schemas are built from these, and the connector applies the
// same ones to a caller that does not come through the gateway. The proxy host's address policy (the connector's
// resolver) and owners that must exist stay in the connector.

export const ACCOUNT_STATUSES = ['qr_pending', 'connected', 'disconnected'] as const;
export const DISPLAY_NAME_MAX = 100;
export const ACCOUNT_SEARCH_MAX = 200;

export const PROXY_URL_MAX = 2000;
const PROXY_SCHEMES = new Set(['http:', 'https:', 'socks4:', 'socks4a:', 'socks5:', 'socks5h:']);

/**
 * A proxy the account's connection dials through: scheme http(s) or socks4/5, a host, an optional port and
 * credentials, nothing else. Returns the normalised URL ("" stays "": no proxy); a 400 naming `proxyUrl` otherwise.
 */
export function proxyUrl(raw: string): string {
  const value = raw.trim();
  if (value === '') return '';
  if (value.length > PROXY_URL_MAX) throw invalid('proxyUrl', `must be at most ${PROXY_URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('proxyUrl', 'must be a URL such as http://user:pass@host:port or socks5://host:port');
  }
  if (!PROXY_SCHEMES.has(url.protocol)) throw invalid('proxyUrl', 'scheme must be http, https, socks4, socks4a, socks5 or socks5h');
  if (!url.hostname) throw invalid('proxyUrl', 'must name a host');
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash) throw invalid('proxyUrl', 'must not have a path, query or fragment');
  return `${url.protocol}//${url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : ''}${url.host}`;
}
