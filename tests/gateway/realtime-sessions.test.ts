import { createClient } from '@redis/client';
import { io as connect, Socket } from 'socket.io-client';
import { authKeys, createTokenSigner } from '@crm/auth';
import { createLogger } from '@crm/logger';
import { infra } from '@crm/testing';
import * as gateway from '@crm/gateway';
import { client, Client, email, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

/**
 * Live sockets end with access: logout, deactivation, role change and token expiry disconnect the user's sockets
 * within seconds, on every gateway instance, and a revoked token cannot open a new one.
 *
 * The stack's gateway re-checks its sockets only every five minutes, so a disconnect within seconds here can
 * only come from the pushed revocation (or the expiry timer); the periodic re-check has its own gateway below.
 */
describe('realtime sessions end when access ends', () => {
  const SLOW_RESYNC = { SOCKET_SESSION_RESYNC_MS: '300000' };
  const PASSWORD = 'correct horse battery';
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  const sockets: Socket[] = [];
  const extraGateways: gateway.RunningGateway[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: SLOW_RESYNC });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
  });
  afterAll(async () => {
    sockets.forEach((s) => s.disconnect());
    for (const g of extraGateways) await g.stop();
    await stack.stop();
  });

  async function startGateway(env: Record<string, string>) {
    const config = gateway.loadConfig({ ...stack.env, HOST: '127.0.0.1', PORT: '0', ...env });
    const g = await gateway.startGateway(config, createLogger('test', 'silent'));
    extraGateways.push(g);
    return g;
  }

  function open(token: string, url = stack.url): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = connect(url, { auth: { token }, transports: ['websocket'], reconnection: false });
      sockets.push(s);
      s.once('connect', () => resolve(s));
      s.once('connect_error', (err) => reject(err));
    });
  }

  /** Resolves with the `session_ended` reason once the server has also disconnected the socket. */
  function ended(s: Socket, withinMs = 4000): Promise<{ reason: string; disconnect: string }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`socket still connected after ${withinMs} ms`)), withinMs);
      let reason = '';
      s.once('session_ended', (e: { reason: string }) => (reason = e.reason));
      s.once('disconnect', (disconnect) => {
        clearTimeout(timer);
        resolve({ reason, disconnect });
      });
    });
  }

  /** The server still answers this socket (not merely "connected" on the client's side). */
  async function expectLive(s: Socket) {
    expect(s.connected).toBe(true);
    await expect(s.timeout(2000).emitWithAck('leave', 'account:none')).resolves.toEqual({ ok: true });
  }

  /** A user of Acme with the given role, signed in: their id and access token. */
  async function newUser(role = 'agent') {
    const address = email(role);
    const created = await acme.owner.post('/api/v1/users', { email: address, fullName: 'Sam Staff', role, password: PASSWORD });
    expect(created.status).toBe(201);
    return { id: created.body.id as string, address, token: await signIn(address) };
  }

  async function signIn(address: string): Promise<string> {
    const res = await api.post('/api/v1/auth/login', { email: address, password: PASSWORD });
    expect(res.status).toBe(200);
    return res.body.token;
  }

  it('POST /auth/logout ends the sockets opened with that token only', async () => {
    const user = await newUser();
    const otherSessionToken = await signIn(user.address);
    const loggedOut = await open(user.token);
    const sameUserOtherSession = await open(otherSessionToken);
    const bystander = await open(acme.token);

    const gone = ended(loggedOut);
    expect((await api.as(user.token).post('/api/v1/auth/logout', {})).status).toBe(200);
    expect(await gone).toEqual({ reason: 'logged_out', disconnect: 'io server disconnect' });
    await expectLive(sameUserOtherSession);
    await expectLive(bystander);
  });

  it('DELETE /users/:id ends the deactivated user’s sockets', async () => {
    const user = await newUser();
    const s = await open(user.token);
    const bystander = await open(acme.token);

    const gone = ended(s);
    expect((await acme.owner.del(`/api/v1/users/${user.id}`)).status).toBe(204);
    expect(await gone).toEqual({ reason: 'access_changed', disconnect: 'io server disconnect' });
    await expectLive(bystander);
  });

  it('PUT /users/:id {role} ends the user’s sockets; a token issued afterwards connects with the new role', async () => {
    const user = await newUser('agent');
    const s = await open(user.token);
    const bystander = await open(acme.token);

    const gone = ended(s);
    expect((await acme.owner.put(`/api/v1/users/${user.id}`, { role: 'team_lead' })).status).toBe(200);
    expect(await gone).toEqual({ reason: 'access_changed', disconnect: 'io server disconnect' });
    await expectLive(bystander);
    await expectLive(await open(await signIn(user.address)));
  });

  it('a socket is disconnected when its token expires', async () => {
    // identity refuses ACCESS_TOKEN_TTL below 60 s, so sign a 2-second token with the stack's key exactly as it would.
    const sign = createTokenSigner(stack.env.JWT_SECRET, 2);
    const { token } = sign({ id: acme.user.id, orgId: acme.user.orgId, role: acme.user.role });
    const s = await open(token);
    const bystander = await open(acme.token);

    expect(await ended(s, 5000)).toEqual({ reason: 'token_expired', disconnect: 'io server disconnect' });
    await expectLive(bystander);
  });

  it('refuses a handshake with a logged-out token or one issued before a role change', async () => {
    const user = await newUser();
    expect((await api.as(user.token).post('/api/v1/auth/logout', {})).status).toBe(200);
    await expect(open(user.token)).rejects.toMatchObject({ message: 'unauthorized', data: { reason: 'logged_out' } });

    const demoted = await newUser('admin');
    expect((await acme.owner.put(`/api/v1/users/${demoted.id}`, { role: 'agent' })).status).toBe(200);
    await expect(open(demoted.token)).rejects.toMatchObject({ message: 'unauthorized', data: { reason: 'access_changed' } });
  });

  it('a revocation made through one gateway disconnects the user’s socket held by another instance', async () => {
    const second = await startGateway(SLOW_RESYNC);
    const user = await newUser();
    const onSecond = await open(user.token, second.url);
    const bystanderOnSecond = await open(acme.token, second.url);

    const gone = ended(onSecond);
    expect((await acme.owner.del(`/api/v1/users/${user.id}`)).status).toBe(204);
    expect(await gone).toEqual({ reason: 'access_changed', disconnect: 'io server disconnect' });
    await expectLive(bystanderOnSecond);
  });

  it('a revocation whose message was missed is caught by the periodic re-check', async () => {
    const resyncing = await startGateway({ SOCKET_SESSION_RESYNC_MS: '300' });
    const user = await newUser();
    const s = await open(user.token, resyncing.url);
    const bystander = await open(acme.token, resyncing.url);

    // Write the deny-list entry as identity does but publish nothing, as if this gateway missed the message.
    const redis = await createClient({ url: infra.redisUrl }).connect();
    try {
      const gone = ended(s);
      const jti = JSON.parse(Buffer.from(user.token.split('.')[1], 'base64url').toString()).jti;
      await redis.set(authKeys(stack.env.REDIS_PREFIX).revokedJti(jti), '1', { expiration: { type: 'EX', value: 60 } });
      expect(await gone).toEqual({ reason: 'logged_out', disconnect: 'io server disconnect' });
      await expectLive(bystander);
    } finally {
      redis.destroy();
    }
  });
});
