import { createClient } from '@redis/client';
import { io as connect, type Socket } from 'socket.io-client';
import { eventually, infra } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// socket.io admits what the gateway trusts (issue #27 item 8): pages of its own origin (or CORS_ORIGINS), a bounded
// number of connections per user across gateways, and joins at a bounded pace.
describe('socket.io admission', () => {
  let stack: Stack;
  let token: string;
  let userId: string;
  const redis = createClient({ url: infra.redisUrl });
  const sockets: Socket[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { SIGNUP_ENABLED: 'true', SOCKETS_PER_USER: '3', SOCKET_JOINS_PER_10S: '4' } });
    let user: { id: string };
    ({ token, user } = await newOrg(client(stack.url), 'Socket Org'));
    userId = user.id;
    redis.on('error', () => undefined);
    await redis.connect();
  }, 60_000);
  afterAll(async () => {
    sockets.forEach((s) => s.disconnect());
    redis.destroy();
    await stack?.stop();
  });

  /**
   * Resolves once the gateway counts `n` live sockets of the user: the places it keeps in Redis (a sorted set per
   * user), which a disconnect releases a moment after the client has closed.
   */
  const placesTaken = (n: number) => eventually(async () => (await redis.zCard(`${stack.env.REDIS_PREFIX}sockets:${userId}`)) === n || undefined);

  function open(opts: { token?: string; origin?: string } = {}): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = connect(stack.url, {
        auth: { token: opts.token ?? token },
        transports: ['websocket'],
        reconnection: false,
        ...(opts.origin ? { extraHeaders: { origin: opts.origin } } : {}),
      });
      sockets.push(s);
      s.once('connect', () => resolve(s));
      s.once('connect_error', (err) => reject(err));
    });
  }

  it("a page of another site cannot open a socket; the gateway's own origin and clients without an Origin can", async () => {
    await expect(open({ origin: 'https://evil.example' })).rejects.toThrow();
    const own = await open({ origin: stack.url });
    own.disconnect();
    const script = await open();
    script.disconnect();
  });

  it('a user holds at most SOCKETS_PER_USER sockets; closing one frees its place', async () => {
    await placesTaken(0); // the sockets above have left their places
    const held = [await open(), await open(), await open()];
    const refused = await open().catch((err: Error & { data?: { reason?: string } }) => err);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toBe('too_many_connections');
    held[0].disconnect();
    await placesTaken(2);
    const again = await open();
    expect(again.connected).toBe(true);
    held.slice(1).forEach((s) => s.disconnect());
    again.disconnect();
  });

  it('joins beyond the pace are refused without a lookup', async () => {
    await placesTaken(0);
    const s = await open();
    const answers: Array<{ ok: boolean; error?: string }> = [];
    for (let i = 0; i < 6; i++) answers.push(await new Promise((r) => s.emit('join', `account:00000000-0000-4000-8000-00000000000${i}`, r)));
    expect(answers.slice(0, 4).map((a) => a.error)).toEqual(Array(4).fill('account not found'));
    expect(answers.slice(4)).toEqual([
      { ok: false, error: 'too many joins; slow down' },
      { ok: false, error: 'too many joins; slow down' },
    ]);
    s.disconnect();
  });
});
