import ipaddr from 'ipaddr.js';

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

export interface AllowList {
  /** The entries as written, for logs. */
  readonly entries: string[];
  readonly ranges: Array<[Addr, number]>;
}

/**
 * `127.0.0.1, 10.0.0.0/8, ::1` → ranges. A bare address is a /32 (/128). IPv4-mapped IPv6 entries are
 * turned into IPv4 so `::ffff:127.0.0.1` and `127.0.0.1` mean the same thing here too.
 */
export function parseAllowList(text: string): AllowList {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const ranges = entries.map((entry): [Addr, number] => {
    try {
      if (entry.includes('/')) {
        const [addr, bits] = ipaddr.parseCIDR(entry);
        if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
          return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
        }
        return [addr, bits];
      }
      const addr = normalise(ipaddr.parse(entry));
      return [addr, addr.kind() === 'ipv4' ? 32 : 128];
    } catch {
      throw new Error(`"${entry}" is not an IP address or CIDR range`);
    }
  });
  return { entries, ranges };
}

function normalise(addr: Addr): Addr {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

/** The first 96 bits are zero: `::`, `::1` and the deprecated IPv4-compatible `::a.b.c.d`. */
function isIpv4Compatible(addr: ipaddr.IPv6): boolean {
  const p = addr.parts;
  return p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0;
}

/** `addr` is in `net/bits`; both are of the same kind. */
function matches(addr: Addr, net: Addr, bits: number): boolean {
  return addr.kind() === 'ipv4' ? (addr as ipaddr.IPv4).match(net as ipaddr.IPv4, bits) : (addr as ipaddr.IPv6).match(net as ipaddr.IPv6, bits);
}

export type AddressVerdict = { allowed: true; address: string } | { allowed: false; address: string; reason: string };

/**
 * May a connection chosen by a tenant (a webhook URL, an AI base URL, a proxy) go to this IP? Only global
 * unicast addresses may, unless the address is in the operator's allow-list. Everything ipaddr.js classifies otherwise is refused: loopback, private, link-local, unique
 * local, multicast, broadcast, unspecified, carrier-grade NAT, reserved and documentation ranges, and the
 * IPv6 ranges that embed an IPv4 address (NAT64, 6to4, Teredo, IPv4-compatible), whose IPv4 part could
 * be anything. An IPv4-mapped IPv6 address is judged as the IPv4 address it is.
 *
 * `ip` must be a literal address as a resolver or the WHATWG URL parser produces it; hostnames and
 * unusual spellings (`0x7f.1`, `2130706433`) are turned into one before this is asked.
 */
export function judgeAddress(ip: string, allow: AllowList): AddressVerdict {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return { allowed: false, address: ip, reason: 'not an IP address' };
  const addr = normalise(ipaddr.parse(bare));
  const address = addr.toString();
  for (const [net, bits] of allow.ranges) {
    if (net.kind() === addr.kind() && matches(addr, net, bits)) return { allowed: true, address };
  }
  const range = addr.range();
  if (addr.kind() === 'ipv6' && isIpv4Compatible(addr as ipaddr.IPv6)) {
    return { allowed: false, address, reason: range === 'unicast' ? 'ipv4Compatible' : range };
  }
  if (range !== 'unicast') return { allowed: false, address, reason: range };
  return { allowed: true, address };
}

/** An IP address as written in a URL or returned by a resolver (brackets and a zone allowed), not a name. */
export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}
