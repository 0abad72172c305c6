import { io as connect, Socket } from 'socket.io-client';
import { eventually } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

// The spec lets a client join room account:<id> before or after calling login: a socket that joins while a
// login shows a QR code gets that code at once (event `qr`), not only the codes that follow.
describe('socket.io: the pending QR code is replayed to a socket that joins after login', () => {
  let stack: Stack;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['chatnet-connector'] });
    const api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
  }, 60_000);
  afterAll(async () => {
    sockets.forEach((s) => s.disconnect());
    await stack?.stop();
  });

  function open(token: string): Promise<{ socket: Socket; qrs: any[] }> {
    return new Promise((resolve, reject) => {
      const socket = connect(stack.url, { auth: { token }, transports: ['websocket'], reconnection: false });
      sockets.push(socket);
      const qrs: any[] = [];
      socket.on('qr', (p) => qrs.push(p));
      socket.once('connect', () => resolve({ socket, qrs }));
      socket.once('connect_error', reject);
    });
  }
  const join = (socket: Socket, room: string) => new Promise<{ ok: boolean; error?: string }>((resolve) => socket.emit('join', room, resolve));

  it('a socket joining after POST /login receives the code being shown, then the room’s later events', async () => {
    const id = (await acme.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop' })).body.id;
    expect((await acme.owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);

    const late = await open(acme.token);
    expect(await join(late.socket, `account:${id}`)).toEqual({ ok: true });
    const replayed = await eventually(async () => late.qrs[0]);
    expect(replayed).toEqual({ accountId: id, qr: expect.stringMatching(/^data:image\/png;base64,/), expiresAt: expect.any(String) });
    expect(Date.parse(replayed.expiresAt)).toBeGreaterThan(Date.now());

    // A second login call re-sends the same code through the room: the joined socket hears it too.
    expect((await acme.owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
    const again = await eventually(async () => late.qrs[1]);
    expect(again.qr).toBe(replayed.qr);
  });

  it('nothing is replayed when no login is waiting for a scan (never logged in, or connected)', async () => {
    const id = (await acme.owner.post('/api/v1/chatnet-accounts', { displayName: 'Idle' })).body.id;
    const s = await open(acme.token);
    expect(await join(s.socket, `account:${id}`)).toEqual({ ok: true });

    const scanned = (await acme.owner.post('/api/v1/chatnet-accounts', { displayName: 'Scanned' })).body.id;
    expect((await acme.owner.post(`/api/v1/chatnet-accounts/${scanned}/login`)).status).toBe(200);
    expect((await acme.owner.post(`/sandbox/accounts/${scanned}/scan`, {})).body.status).toBe('connected');
    expect(await join(s.socket, `account:${scanned}`)).toEqual({ ok: true });
    // The join's ack comes after any replay, so by now a replay would have arrived.
    expect(s.qrs).toEqual([]);
  });

  it('another organization’s account cannot be joined and replays nothing', async () => {
    const id = (await acme.owner.post('/api/v1/chatnet-accounts', { displayName: 'Private' })).body.id;
    expect((await acme.owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
    const stranger = await open(globex.token);
    expect(await join(stranger.socket, `account:${id}`)).toEqual({ ok: false, error: 'account not found' });
    expect(stranger.qrs).toEqual([]);
  });
});
