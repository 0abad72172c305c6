import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAllowList } from '@crm/net-guard';
import { generateSecret, secretKey } from '../domain/signing';
import { type Resolver, WebhookSender } from './sender';

/**
 * A receiver on 127.0.0.1 that counts TCP connections: the SSRF guard must refuse before a connection
 * is opened, so a refused attempt leaves the count at zero. Nothing here ever connects anywhere but
 * loopback: public addresses appear only as DNS answers that are judged and never dialled.
 */
function receiver(handler: http.RequestListener) {
  const server = http.createServer(handler);
  let connections = 0;
  const requests: http.IncomingMessage[] = [];
  server.on('connection', () => connections++);
  server.on('request', (req) => requests.push(req));
  return {
    server,
    requests,
    get connections() {
      return connections;
    },
    async listen() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return (server.address() as AddressInfo).port;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const secret = generateSecret();
const key = secretKey(secret)!;

function verify(headers: http.IncomingHttpHeaders, body: string): boolean {
  const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
  return String(headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

describe('WebhookSender', () => {
  const bodies: string[] = [];
  const rx = receiver((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      bodies.push(b);
      if (req.url === '/redirect') res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      else if (req.url === '/fail') res.writeHead(500).end('broken');
      else if (req.url === '/big') res.writeHead(200).end('x'.repeat(10_000));
      else if (req.url === '/nul') res.writeHead(200).end('a\u0000b');
      else if (req.url === '/hang')
        return; // never answers
      else res.writeHead(204).end();
    });
  });
  let port: number;
  beforeAll(async () => {
    port = await rx.listen();
  });
  afterAll(() => rx.close());

  const sender = (allow: string, resolve?: Resolver, timeoutMs = 2000) =>
    new WebhookSender({ allow: parseAllowList(allow), timeoutMs, bodyLimit: 100, resolve });
  const send = (s: WebhookSender, url: string) => s.send({ url, id: 'evt_1', body: '{"type":"contact.created"}', key });

  describe('with an empty allow-list', () => {
    const s = sender('');
    afterAll(() => s.close());

    it.each([
      ['http://127.0.0.1:PORT/hook'],
      ['http://0x7f.1:PORT/hook'],
      ['http://2130706433:PORT/hook'],
      ['http://017700000001:PORT/hook'],
      ['http://127.1:PORT/hook'],
      ['http://0x7f000001:PORT/hook'],
      ['http://127.0.0.1.:PORT/hook'],
      ['http://[::ffff:127.0.0.1]:PORT/hook'],
      ['http://[::ffff:7f00:1]:PORT/hook'],
      ['http://[::1]:PORT/hook'],
      ['http://[0:0:0:0:0:0:0:1]:PORT/hook'],
      ['http://0.0.0.0:PORT/hook'],
      ['http://0:PORT/hook'],
      ['http://[::]:PORT/hook'],
      ['http://localhost:PORT/hook'],
    ])('refuses %s before opening any connection', async (template) => {
      const before = rx.connections;
      const r = await send(s, template.replace('PORT', String(port)));
      expect(r.ok).toBe(false);
      expect(r.statusCode).toBeNull();
      expect(r.error).toMatch(/webhooks are not sent there/);
      expect(rx.connections).toBe(before);
    });

    it('judges every address a name resolves to: one private answer refuses the name', async () => {
      const mixed = sender('', async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
      const before = rx.connections;
      const r = await send(mixed, `http://mixed.test:${port}/hook`);
      expect(r.error).toMatch(/mixed\.test resolves to 127\.0\.0\.1, a loopback address/);
      expect(rx.connections).toBe(before);
      mixed.close();
    });

    it('checks the address at connect time, so DNS rebinding after validation is refused', async () => {
      const answers = ['93.184.216.34', '127.0.0.1'];
      const rebinding = sender('', async () => [{ address: answers.shift() ?? '127.0.0.1', family: 4 }]);
      // Saving the URL: the name looks public then (this only judges the answer; nothing is dialled).
      await expect(rebinding.resolveAllowed('rebind.test')).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
      // The attempt: the name now points at loopback; the lookup inside connect refuses it.
      const before = rx.connections;
      const r = await send(rebinding, `http://rebind.test:${port}/hook`);
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
      expect(rx.connections).toBe(before);
      rebinding.close();
    });

    it('refuses non-http schemes', async () => {
      expect((await send(s, `ftp://127.0.0.1:${port}/x`)).error).toMatch(/only http and https/);
    });
  });

  describe('with 127.0.0.1 allowed', () => {
    const s = sender('127.0.0.1', async (host) => (host === 'receiver.test' ? [{ address: '127.0.0.1', family: 4 }] : []));
    afterAll(() => s.close());

    it('delivers to any spelling of the allowed address, signed per Standard Webhooks', async () => {
      for (const host of ['127.0.0.1', '0x7f.1', '2130706433', '[::ffff:127.0.0.1]']) {
        const n = rx.requests.length;
        const r = await send(s, `http://${host}:${port}/hook`);
        expect(r).toEqual(expect.objectContaining({ ok: true, statusCode: 204, error: null }));
        const req = rx.requests[n];
        expect(req.headers['content-type']).toBe('application/json');
        expect(req.headers['webhook-id']).toBe('evt_1');
        expect(Number(req.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
        expect(verify(req.headers, bodies[bodies.length - 1])).toBe(true);
      }
    });

    it('resolves a hostname through the guarded lookup and sends the Host header of the URL', async () => {
      const n = rx.requests.length;
      const r = await send(s, `http://receiver.test:${port}/hook?x=1`);
      expect(r.ok).toBe(true);
      expect(rx.requests[n].headers.host).toBe(`receiver.test:${port}`);
      expect(rx.requests[n].url).toBe('/hook?x=1');
    });

    it('still refuses other loopback addresses', async () => {
      const before = rx.connections;
      expect((await send(s, `http://127.0.0.2:${port}/hook`)).error).toMatch(/loopback/);
      expect((await send(s, `http://[::1]:${port}/hook`)).error).toMatch(/loopback/);
      expect(rx.connections).toBe(before);
    });

    it('does not follow redirects: a 3xx is a failed attempt', async () => {
      const n = rx.requests.length;
      const r = await send(s, `http://127.0.0.1:${port}/redirect`);
      expect(r).toEqual(expect.objectContaining({ ok: false, statusCode: 302, error: 'HTTP 302: redirects are not followed' }));
      expect(rx.requests.length).toBe(n + 1);
    });

    it('logs a non-2xx answer with its body', async () => {
      const r = await send(s, `http://127.0.0.1:${port}/fail`);
      expect(r).toEqual(
        expect.objectContaining({ ok: false, statusCode: 500, error: 'HTTP 500', responseBody: 'broken', responseBodyTruncated: false }),
      );
    });

    it('truncates long response bodies', async () => {
      const r = await send(s, `http://127.0.0.1:${port}/big`);
      expect(r.ok).toBe(true);
      expect(r.responseBody).toBe('x'.repeat(100));
      expect(r.responseBodyTruncated).toBe(true);
    });

    it('drops NUL characters from a response body so the log can store it', async () => {
      expect((await send(s, `http://127.0.0.1:${port}/nul`)).responseBody).toBe('ab');
    });

    it('gives up on an attempt after the timeout', async () => {
      const quick = sender('127.0.0.1', undefined, 300);
      const r = await send(quick, `http://127.0.0.1:${port}/hang`);
      expect(r.ok).toBe(false);
      expect(r.error).toBe('timed out after 300 ms');
      expect(r.durationMs).toBeGreaterThanOrEqual(290);
      // /hang never answers: any bound proves the give-up; 5 s leaves room for a loaded machine.
      expect(r.durationMs).toBeLessThan(5000);
      quick.close();
    });

    it('reports a refused connection', async () => {
      const r = await send(s, 'http://127.0.0.1:1/hook');
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/ECONNREFUSED/);
    });
  });
});
