import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAllowList } from './address-policy';
import { AddressGuard, canonicalHost, RefusedAddressError, type Resolver } from './guard';
import { allowListEnv } from './env';

/**
 * The guard against a listener on 127.0.0.1 that counts TCP connections: a refusal must come before a
 * connection is opened. Public addresses appear only as simulated DNS answers; nothing dials them.
 */
const guard = (allow: string, resolve?: Resolver) => new AddressGuard({ allow: parseAllowList(allow), purpose: 'test requests', resolve });
const noDns: Resolver = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

describe('canonicalHost', () => {
  it.each([
    ['0x7f.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['API.Example.com', 'api.example.com'],
  ])('spells %s as %s', (host, canonical) => {
    expect(canonicalHost(host)).toBe(canonical);
  });
});

describe('AddressGuard', () => {
  it.each(['0x7f.1', '2130706433', '017700000001', '127.1', '::ffff:127.0.0.1', '[::1]', '169.254.169.254', 'fe80::1', '10.1.2.3', '0'])(
    'refuses the literal %s without asking DNS',
    async (host) => {
      const g = guard('', noDns);
      expect(() => g.assertLiteralAllowed(host)).toThrow(RefusedAddressError);
      await expect(g.resolveAllowed(host)).rejects.toThrow(/test requests are not sent there/);
    },
  );

  it('lets a name through assertLiteralAllowed (the lookup judges it) and judges what it resolves to', async () => {
    const g = guard('', async () => [{ address: '169.254.169.254', family: 4 }]);
    expect(() => g.assertLiteralAllowed('metadata.test')).not.toThrow();
    await expect(g.resolveAllowed('metadata.test')).rejects.toThrow(
      'metadata.test resolves to 169.254.169.254, a linkLocal address; test requests are not sent there',
    );
  });

  it('allows an allow-listed address in any spelling, and public answers', async () => {
    const g = guard('127.0.0.1', async () => [{ address: '93.184.216.34', family: 4 }]);
    expect(() => g.assertLiteralAllowed('0x7f.1')).not.toThrow();
    await expect(g.resolveAllowed('2130706433')).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(g.resolveAllowed('public.test')).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  describe('checkOnSave', () => {
    it('reports a refused address with the message to show', async () => {
      expect(await guard('', noDns).checkOnSave('0x7f.1', 1000)).toEqual({
        refused: '127.0.0.1 is a loopback address; test requests are not sent there',
      });
    });

    it('accepts a host that does not resolve now, saying why', async () => {
      expect(await guard('', noDns).checkOnSave('not-yet.test', 1000)).toEqual({ unresolved: 'getaddrinfo ENOTFOUND not-yet.test' });
    });

    it('gives up on a lookup that takes too long', async () => {
      const slow = guard('', () => new Promise(() => undefined));
      expect(await slow.checkOnSave('slow.test', 50)).toEqual({ unresolved: 'lookup timed out after 50 ms' });
    });

    it('returns the judged addresses of an allowed host', async () => {
      expect(await guard('', async () => [{ address: '8.8.8.8', family: 4 }]).checkOnSave('dns.test', 1000)).toEqual({
        allowed: [{ address: '8.8.8.8', family: 4 }],
      });
    });
  });

  describe('when dialling', () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    let connections = 0;
    server.on('connection', () => connections++);
    let port: number;
    beforeAll(async () => {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );

    const get = (g: AddressGuard, host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host, port, path: '/', lookup: g.lookup as never, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        g.watch(req, host);
        req.on('error', reject);
        req.end();
      });

    it('the lookup hook refuses a name that resolves to loopback before any connection', async () => {
      const before = connections;
      await expect(
        get(
          guard('', async () => [{ address: '127.0.0.1', family: 4 }]),
          'rebind.test',
        ),
      ).rejects.toThrow(/rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
      expect(connections).toBe(before);
    });

    it('the lookup hook hands the socket the judged address when it is allowed', async () => {
      expect(
        await get(
          guard('127.0.0.1', async () => [{ address: '127.0.0.1', family: 4 }]),
          'local.test',
        ),
      ).toBe(200);
    });

    it('watch destroys a request whose socket connected to a refused peer (a literal that skipped assertLiteralAllowed)', async () => {
      // Sockets do not call `lookup` for an IP literal; watch is the last line behind assertLiteralAllowed.
      await expect(get(guard(''), '127.0.0.1')).rejects.toThrow('127.0.0.1 is a loopback address; test requests are not sent there');
    });
  });
});

describe('allowListEnv', () => {
  it('parses the list and names a bad entry', () => {
    expect(allowListEnv().parse('127.0.0.1, 10.0.0.0/8').entries).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(allowListEnv().parse(undefined).entries).toEqual([]);
    const bad = allowListEnv().safeParse('intranet');
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0].message).toBe('"intranet" is not an IP address or CIDR range');
  });
});
