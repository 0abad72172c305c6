import { judgeAddress, parseAllowList } from './address-policy';

const none = parseAllowList('');

describe('address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::7f00:1', 'ipv4Compatible'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
    ['[::1]', 'loopback'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(judgeAddress(ip, none)).toEqual(expect.objectContaining({ allowed: false, reason }));
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8'])('allows the public address %s', (ip) => {
    expect(judgeAddress(ip, none).allowed).toBe(true);
  });

  it('refuses what is not an address at all', () => {
    expect(judgeAddress('localhost', none)).toEqual(expect.objectContaining({ allowed: false }));
  });

  it('lets an allow-listed private address through, in every spelling of it', () => {
    const allow = parseAllowList('127.0.0.1');
    expect(judgeAddress('127.0.0.1', allow).allowed).toBe(true);
    expect(judgeAddress('::ffff:127.0.0.1', allow).allowed).toBe(true);
    expect(judgeAddress('::ffff:7f00:1', allow).allowed).toBe(true);
    expect(judgeAddress('127.0.0.2', allow).allowed).toBe(false);
    expect(judgeAddress('::1', allow).allowed).toBe(false);
  });

  it('takes CIDR ranges and IPv6 entries', () => {
    const allow = parseAllowList(' 10.0.0.0/8 , ::1, ::ffff:192.168.0.0/112');
    expect(judgeAddress('10.20.30.40', allow).allowed).toBe(true);
    expect(judgeAddress('::1', allow).allowed).toBe(true);
    expect(judgeAddress('192.168.7.7', allow).allowed).toBe(true);
    expect(judgeAddress('172.16.0.1', allow).allowed).toBe(false);
  });

  it('rejects a malformed allow-list entry by name', () => {
    expect(() => parseAllowList('127.0.0.1,not-an-ip')).toThrow('"not-an-ip" is not an IP address or CIDR range');
  });
});
