/**
 * The hosts the chat network serves photos and files from (CHATNET_MEDIA_HOSTS). A message names its file by URL, and
 * a message is written by whoever sends it: only a URL on one of these hosts is downloaded, so a crafted message cannot
 * make the connector fetch an address of its own network and store the answer where the organization can read it.
 */

/** One DNS name: labels of letters, digits and inner hyphens, dot-separated; no scheme, port, path or wildcard. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A host as URLs and lists may spell it: lower case, without the trailing dot of a fully qualified name. */
const normal = (host: string) => host.trim().toLowerCase().replace(/\.$/, '');

/** `zadn.vn, zdn.vn` → ['zadn.vn', 'zdn.vn']; throws naming an entry that is not a host name. */
export function parseMediaHosts(text: string): string[] {
  const hosts = text.split(',').map(normal).filter(Boolean);
  for (const host of hosts) {
    if (!HOST_NAME.test(host)) throw new Error(`"${host}" is not a host name (write names such as zadn.vn, without scheme, port or *)`);
  }
  return [...new Set(hosts)];
}

/**
 * Whether `host` (a URL's hostname) is one of `hosts` or a subdomain of one, at a dot boundary: `zadn.vn` takes
 * `s120-ava-talk.zadn.vn` but not `evilzadn.vn` nor `zadn.vn.evil.example`.
 */
export function isMediaHost(host: string, hosts: readonly string[]): boolean {
  const h = normal(host);
  if (!h) return false;
  return hosts.some((name) => h === name || h.endsWith(`.${name}`));
}
