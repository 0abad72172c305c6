import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAllowList } from '@crm/net-guard';
import { HttpStepClient, HttpStepError } from './http-step';
import { generateSecret } from './signing';

/** A receiver on 127.0.0.1 that counts TCP connections: a refusal must come before any connection is opened. */
async function counter() {
  let connections = 0;
  const server = http.createServer((_req, res) => res.end('{"ok":true}'));
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('HttpStepClient (the SSRF guard at request time)', () => {
  let receiver: Awaited<ReturnType<typeof counter>>;
  beforeAll(async () => (receiver = await counter()));
  afterAll(() => receiver.close());

  it.each(['127.0.0.1', '0x7f.1', '2130706433', '[::ffff:127.0.0.1]', 'localhost'])(
    'refuses %s without an allow-list before opening any connection',
    async (host) => {
      const client = new HttpStepClient(parseAllowList(''));
      try {
        const sent = client.send({
          url: `http://${host}:${receiver.port}/x`,
          method: 'POST',
          headers: {},
          body: '{}',
          id: 'id-1',
          secret: generateSecret(),
        });
        await expect(sent).rejects.toBeInstanceOf(HttpStepError);
        await expect(sent).rejects.toMatchObject({ refused: true });
        expect(receiver.connections).toBe(0);
      } finally {
        client.close();
      }
    },
  );

  it('reaches an allow-listed address and reads its JSON answer', async () => {
    const client = new HttpStepClient(parseAllowList('127.0.0.1'));
    try {
      const answer = await client.send({
        url: `http://127.0.0.1:${receiver.port}/x`,
        method: 'GET',
        headers: {},
        id: 'id-2',
        secret: generateSecret(),
      });
      expect(answer).toEqual({ status: 200, body: { ok: true } });
    } finally {
      client.close();
    }
  });
});
