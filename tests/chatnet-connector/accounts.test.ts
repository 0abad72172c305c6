import { status as grpcStatus } from '@grpc/grpc-js';
import { io as connectSocket, Socket } from 'socket.io-client';
import { eventually } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { addUser, captureEvents, connectorClient, grpcCtx, PNG_DATA_URL } from './support';

// Chat-network accounts through the gateway, driven end to end by the sandbox network: create → QR over
// the bus → scan → connected → inbound → drop → reconnect → delete; every route's errors and org isolation.
describe('chat-network accounts and the sandbox network', () => {
  let stack: Stack;
  let api: Client;
  let bus: Awaited<ReturnType<typeof captureEvents>>;
  let owner: Client;
  let ownerUser: { id: string; orgId: string; role: string; email: string; fullName: string };
  let agent: Awaited<ReturnType<typeof addUser>>;
  let other: Client;
  let ownerToken: string;
  let otherToken: string;
  let rpc: ReturnType<typeof connectorClient>;

  beforeAll(async () => {
    stack = await startStack({
      services: ['chatnet-connector'],
      serviceEnv: {
        'chatnet-connector': {
          QR_TTL_MS: '1500',
          QR_MAX_REFRESHES: '3',
          RECONNECT_DELAY_MS: '1500',
          SCAN_INTERVAL_MS: '500',
          HEARTBEAT_MS: '500',
          // The proxies these tests set live on the deployment's network (tests/chatnet-connector/proxy-guard.test.ts refuses the rest).
          CONNECTOR_ALLOWED_PRIVATE_ADDRESSES: '10.1.2.3',
        },
      },
    });
    api = client(stack.url);
    bus = await captureEvents(stack.env.EVENTS_EXCHANGE);
    const org = await newOrg(api, 'Acme');
    owner = org.owner;
    ownerUser = org.user;
    ownerToken = org.token;
    agent = await addUser(api, owner, 'agent');
    const otherOrg = await newOrg(api, 'Other Co');
    other = otherOrg.owner;
    otherToken = otherOrg.token;
    rpc = connectorClient(stack.addr('chatnet-connector'));
  });
  afterAll(async () => {
    rpc?.close();
    await stack?.stop();
    await bus?.stop(true);
  });

  const create = async (as: Client, displayName: string, extra: object = {}) => {
    const res = await as.post('/api/v1/chatnet-accounts', { displayName, ...extra });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  /** Create, log in, scan: a connected account. */
  const connected = async (displayName: string, chatnetUid?: string) => {
    const id = await create(owner, displayName);
    expect((await owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
    const scan = await owner.post(`/sandbox/accounts/${id}/scan`, chatnetUid ? { chatnetUid } : {});
    expect(scan.status).toBe(200);
    return { id, account: scan.body };
  };

  describe('POST /api/v1/chatnet-accounts', () => {
    it('creates an account in qr_pending (201) with only {id, displayName, status, createdAt}', async () => {
      const res = await owner.post('/api/v1/chatnet-accounts', { displayName: 'Sales line', proxyUrl: null });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(String), displayName: 'Sales line', status: 'qr_pending', createdAt: expect.any(String) });
      expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    });

    it('400 names displayName when it is missing or blank', async () => {
      for (const b of [{}, { displayName: '   ' }]) {
        const res = await owner.post('/api/v1/chatnet-accounts', b);
        expect(res.status).toBe(400);
        expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'displayName' })]);
      }
    });

    it('400 names proxyUrl when it is not a proxy URL', async () => {
      for (const proxyUrl of ['not a url', 'ftp://proxy.example:21', 'http://proxy.example:8080/path']) {
        const res = await owner.post('/api/v1/chatnet-accounts', { displayName: 'Bad proxy', proxyUrl });
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe('proxyUrl');
      }
    });

    it('stores a proxy without ever returning it: hasProxy only', async () => {
      const id = await create(owner, 'Proxied', { proxyUrl: 'socks5://user:secret@proxy.example:1080' });
      const res = await owner.get(`/api/v1/chatnet-accounts/${id}`);
      expect(res.body.hasProxy).toBe(true);
      expect(JSON.stringify(res.body)).not.toContain('secret');
      expect(JSON.stringify(res.body)).not.toContain('proxy.example');
    });

    it('an agent creates no account, not even their own (403: each is a live session and a QR login); an admin creates it for them', async () => {
      for (const body of [{ displayName: 'Agent line' }, { displayName: 'For the boss', ownerUserId: ownerUser.id }]) {
        const res = await agent.client.post('/api/v1/chatnet-accounts', body);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
      const id = await create(owner, 'Agent line', { ownerUserId: agent.user.id });
      expect((await agent.client.get(`/api/v1/chatnet-accounts/${id}`)).body.ownerUserId).toBe(agent.user.id);
    });

    it('an admin may name another user of the org as owner; an unknown user is 400', async () => {
      const id = await create(owner, 'Assigned', { ownerUserId: agent.user.id });
      expect((await owner.get(`/api/v1/chatnet-accounts/${id}`)).body.owner).toEqual({
        id: agent.user.id,
        fullName: 'Ada Agent',
        email: agent.user.email,
      });
      const res = await owner.post('/api/v1/chatnet-accounts', { displayName: 'Nobody', ownerUserId: '00000000-0000-4000-8000-000000000000' });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('ownerUserId');
    });
  });

  describe('GET /api/v1/chatnet-accounts', () => {
    it('returns an array of accounts with owner, liveStatus and hasProxy, and never secrets', async () => {
      const id = await create(owner, 'Listed line');
      const res = await owner.get('/api/v1/chatnet-accounts');
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      const a = res.body.find((x: { id: string }) => x.id === id);
      expect(a).toEqual({
        id,
        chatnetUid: null,
        displayName: 'Listed line',
        avatarUrl: null,
        phone: null,
        status: 'qr_pending',
        liveStatus: { state: 'disconnected', connectedAt: null, lastHeartbeat: null },
        ownerUserId: ownerUser.id,
        owner: { id: ownerUser.id, fullName: 'Olive Owner', email: ownerUser.email },
        hasProxy: false,
        lastConnectedAt: null,
        createdAt: expect.any(String),
      });
      expect(Object.keys(a)).not.toContain('sessionData');
    });

    it('filters by status, assignedTo (owner) and search (display name or phone)', async () => {
      const mine = await create(owner, 'Zebra desk');
      const agents = await create(owner, 'Zebra field', { ownerUserId: agent.user.id });
      const { id: live } = await connected('Zebra live', '8800000000000000001');

      const byStatus = await owner.get('/api/v1/chatnet-accounts?status=connected');
      expect(byStatus.body.map((a: { id: string }) => a.id)).toContain(live);
      expect(byStatus.body.every((a: { status: string }) => a.status === 'connected')).toBe(true);

      const byOwner = await owner.get(`/api/v1/chatnet-accounts?assignedTo=${agent.user.id}`);
      expect(byOwner.body.map((a: { id: string }) => a.id)).toContain(agents);
      expect(byOwner.body.every((a: { ownerUserId: string }) => a.ownerUserId === agent.user.id)).toBe(true);

      const bySearch = await owner.get('/api/v1/chatnet-accounts?search=zebra');
      expect(bySearch.body.map((a: { id: string }) => a.id).sort()).toEqual([mine, agents, live].sort());

      const noMatch = await owner.get('/api/v1/chatnet-accounts?search=%25');
      expect(noMatch.body).toEqual([]);
    });

    it('400 for an unknown status or a malformed assignedTo', async () => {
      expect((await owner.get('/api/v1/chatnet-accounts?status=archived')).status).toBe(400);
      expect((await owner.get('/api/v1/chatnet-accounts?assignedTo=bob')).status).toBe(400);
    });

    it('never shows another organization’s accounts', async () => {
      const id = await create(owner, 'Private line');
      const res = await other.get('/api/v1/chatnet-accounts');
      expect(res.status).toBe(200);
      expect(res.body.map((a: { id: string }) => a.id)).not.toContain(id);
    });

    it('401 without a bearer token', async () => {
      expect((await api.get('/api/v1/chatnet-accounts')).status).toBe(401);
    });
  });

  describe('GET /api/v1/chatnet-accounts/:id and /status', () => {
    it('404 for an unknown id, a malformed id and another org’s id', async () => {
      const id = await create(owner, 'Mine');
      for (const [as, path] of [
        [owner, '/api/v1/chatnet-accounts/00000000-0000-4000-8000-000000000000'],
        [owner, '/api/v1/chatnet-accounts/not-a-uuid'],
        [other, `/api/v1/chatnet-accounts/${id}`],
        [other, `/api/v1/chatnet-accounts/${id}/status`],
        [owner, '/api/v1/chatnet-accounts/not-a-uuid/status'],
      ] as const) {
        const res = await as.get(path);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    });
  });

  describe('QR login and the sandbox scan', () => {
    let unscanned: string;
    it('login publishes the QR as a PNG data URL (chatnet_account.qr) and refreshes it when it expires', async () => {
      const id = await create(owner, 'QR line');
      unscanned = id;
      const before = bus.count();
      const startedAt = Date.now();
      const res = await owner.post(`/api/v1/chatnet-accounts/${id}/login`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: expect.stringContaining(`account:${id}`) });

      const first = await bus.waitFor('chatnet_account.qr', (e) => e.data.accountId === id, 5000, before);
      expect(first.orgId).toBe(ownerUser.orgId);
      expect(first.data).toEqual({ accountId: id, qr: expect.stringMatching(PNG_DATA_URL), expiresAt: expect.any(String) });
      expect(Date.parse(first.data.expiresAt)).toBeGreaterThan(startedAt);

      // QR_TTL_MS is 1.5 s here: a fresh code follows the expired one.
      const second = await bus.waitFor('chatnet_account.qr', (e) => e.data.accountId === id && e.id !== first.id, 5000, before);
      expect(second.data.qr).not.toBe(first.data.qr);
      expect(Date.parse(second.data.expiresAt)).toBeGreaterThan(Date.parse(first.data.expiresAt));

      const status = await owner.get(`/api/v1/chatnet-accounts/${id}/status`);
      expect(status.body).toEqual({ accountId: id, liveStatus: { state: 'qr_pending', connectedAt: null, lastHeartbeat: expect.any(String) } });
    });

    it('a login nobody scans gives up after its last fresh code: disconnected (qr_login_expired), still qr_pending', async () => {
      // QR_TTL_MS 1.5 s and QR_MAX_REFRESHES 3: four codes, about 6 s.
      const ev = await bus.waitFor('chatnet_account.disconnected', (e) => e.data.accountId === unscanned, 15_000);
      expect(ev.data).toEqual({ accountId: unscanned, reason: 'qr_login_expired' });
      expect(bus.of('chatnet_account.qr', unscanned).length).toBe(4);
      const a = (await owner.get(`/api/v1/chatnet-accounts/${unscanned}`)).body;
      expect(a.status).toBe('qr_pending');
      expect(a.liveStatus.state).toBe('disconnected');
      expect((await owner.post(`/sandbox/accounts/${unscanned}/scan`, {})).status).toBe(422);
    });

    it('a second login while one is pending sends the current code again', async () => {
      const id = await create(owner, 'Twice');
      await owner.post(`/api/v1/chatnet-accounts/${id}/login`);
      await bus.waitFor('chatnet_account.qr', (e) => e.data.accountId === id);
      const before = bus.of('chatnet_account.qr', id).length;
      const again = await owner.post(`/api/v1/chatnet-accounts/${id}/login`);
      expect(again.status).toBe(200);
      expect(again.body.message).toMatch(/already in progress/);
      await eventually(async () => bus.of('chatnet_account.qr', id).length > before);
    });

    it('scan completes the login: connected, chatnetUid set, chatnet_account.connected emitted', async () => {
      const id = await create(owner, 'Scanned line');
      await owner.post(`/api/v1/chatnet-accounts/${id}/login`);
      const res = await owner.post(`/sandbox/accounts/${id}/scan`, {
        chatnetUid: '8800000000000000002',
        displayName: 'Shop phone',
        phone: '+84900000002',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id,
        status: 'connected',
        chatnetUid: '8800000000000000002',
        phone: '+84900000002',
        displayName: 'Scanned line',
      });
      expect(res.body.liveStatus).toEqual({ state: 'connected', connectedAt: expect.any(String), lastHeartbeat: expect.any(String) });
      expect(res.body.lastConnectedAt).toEqual(expect.any(String));
      const ev = await bus.waitFor('chatnet_account.connected', (e) => e.data.accountId === id);
      expect(ev.data).toEqual({ accountId: id, chatnetUid: '8800000000000000002', displayName: 'Scanned line' });
      expect(ev.orgId).toBe(ownerUser.orgId);

      // The heartbeat keeps the live status fresh.
      const first = res.body.liveStatus.lastHeartbeat;
      await eventually(async () => (await owner.get(`/api/v1/chatnet-accounts/${id}/status`)).body.liveStatus.lastHeartbeat > first, 5000);
      // Logging in again while connected is refused.
      const again = await owner.post(`/api/v1/chatnet-accounts/${id}/login`);
      expect(again.status).toBe(422);
      expect(again.body.error.code).toBe('already_connected');
    });

    it('scan without a pending login is 422; another org’s account is 404; an agent is 403', async () => {
      const id = await create(owner, 'Idle');
      const none = await owner.post(`/sandbox/accounts/${id}/scan`, {});
      expect(none.status).toBe(422);
      expect(none.body.error.code).toBe('no_pending_login');
      expect((await other.post(`/sandbox/accounts/${id}/scan`, {})).status).toBe(404);
      expect((await owner.post('/sandbox/accounts/not-a-uuid/scan', {})).status).toBe(404);
      const forbidden = await agent.client.post(`/sandbox/accounts/${id}/scan`, {});
      expect(forbidden.status).toBe(403);
      expect((await api.post(`/sandbox/accounts/${id}/scan`, {})).status).toBe(401);
    });

    it('one chat-network user cannot back two accounts of the same org (409)', async () => {
      await connected('First', '8800000000000000003');
      const id = await create(owner, 'Second');
      await owner.post(`/api/v1/chatnet-accounts/${id}/login`);
      const res = await owner.post(`/sandbox/accounts/${id}/scan`, { chatnetUid: '8800000000000000003' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('chatnet_uid_taken');
      expect((await owner.get(`/api/v1/chatnet-accounts/${id}`)).body.status).toBe('qr_pending');
    });

    it('login on another org’s account is 404; an agent cannot log in an account they do not own (403)', async () => {
      const id = await create(owner, 'Guarded');
      expect((await other.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(404);
      expect((await agent.client.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(403);
      expect((await owner.post('/api/v1/chatnet-accounts/nope/login')).status).toBe(404);
    });
  });

  describe('socket.io: QR and status pushed to room account:<id>', () => {
    const sockets: Socket[] = [];
    afterAll(() => sockets.forEach((x) => x.disconnect()));
    const open = (token: string) =>
      new Promise<Socket>((resolve, reject) => {
        const sock = connectSocket(stack.url, { auth: { token }, transports: ['websocket'], reconnection: false });
        sockets.push(sock);
        sock.once('connect', () => resolve(sock));
        sock.once('connect_error', reject);
      });
    const join = (sock: Socket, room: string) => new Promise<{ ok: boolean }>((resolve) => sock.emit('join', room, resolve));

    it('a client in the account room gets the QR (PNG data URL), then account_status when scanned; other orgs cannot join', async () => {
      const id = await create(owner, 'Socket line');
      const sock = await open(ownerToken);
      expect(await join(sock, `account:${id}`)).toEqual({ ok: true });
      const intruder = await open(otherToken);
      expect((await join(intruder, `account:${id}`)).ok).toBe(false);
      const leaked: unknown[] = [];
      intruder.on('qr', (q) => leaked.push(q));

      const qr = new Promise<{ accountId: string; qr: string; expiresAt: string }>((resolve) => sock.once('qr', resolve));
      expect((await owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
      expect(await qr).toEqual({ accountId: id, qr: expect.stringMatching(PNG_DATA_URL), expiresAt: expect.any(String) });

      const status = new Promise<{ accountId: string; status: string }>((resolve) =>
        sock.on('account_status', (x) => x.status === 'connected' && resolve(x)),
      );
      await owner.post(`/sandbox/accounts/${id}/scan`, {});
      expect(await status).toMatchObject({ accountId: id, status: 'connected', chatnetUid: expect.any(String) });
      expect(leaked).toEqual([]);
    });
  });

  describe('inbound messages, friends and sending', () => {
    let accountId: string;
    beforeAll(async () => {
      accountId = (await connected('Inbox line', '8800000000000000004')).id;
    });

    it('inbound delivers a message as the network would: chatnet.inbound with the contract fields', async () => {
      const res = await owner.post(`/sandbox/accounts/${accountId}/inbound`, {
        fromUid: '7700000000000000001',
        fromName: 'Carla Customer',
        content: 'Hi, is it in stock?',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        accountId,
        chatnetMessageId: expect.any(String),
        cliMsgId: expect.stringMatching(/^\d+$/),
        threadId: '7700000000000000001',
        sentAt: expect.any(String),
      });
      const ev = await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === res.body.chatnetMessageId);
      expect(ev.orgId).toBe(ownerUser.orgId);
      expect(ev.data).toEqual({
        accountId,
        chatnetMessageId: res.body.chatnetMessageId,
        threadId: '7700000000000000001',
        threadType: 'user',
        fromUid: '7700000000000000001',
        fromName: 'Carla Customer',
        fromAvatar: '',
        content: 'Hi, is it in stock?',
        contentType: 'text',
        sentAt: res.body.sentAt,
        // The sender's own id of the message: messaging keeps it to mark the message read on the network.
        cliMsgId: res.body.cliMsgId,
      });
    });

    it('a message typed on the phone (sandbox self) is chatnet.inbound from the account itself, fromSelf', async () => {
      const res = await owner.post(`/sandbox/accounts/${accountId}/self`, { threadId: '7700000000000000001', content: 'Yes, in stock' });
      expect(res.status).toBe(200);
      const ev = await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === res.body.chatnetMessageId);
      expect(ev.data).toEqual(
        expect.objectContaining({
          threadId: '7700000000000000001',
          threadType: 'user',
          fromUid: '8800000000000000004',
          content: 'Yes, in stock',
          fromSelf: true,
        }),
      );
    });

    it('group messages carry their thread id; a group message without threadId is 400', async () => {
      const res = await owner.post(`/sandbox/accounts/${accountId}/inbound`, {
        fromUid: '7700000000000000002',
        fromName: 'Gus',
        content: 'hello group',
        threadType: 'group',
        threadId: 'g-100',
      });
      expect(res.status).toBe(200);
      const ev = await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === res.body.chatnetMessageId);
      expect(ev.data).toMatchObject({ threadType: 'group', threadId: 'g-100', fromUid: '7700000000000000002' });
      // The network said no name: the event names none.
      expect(ev.data).not.toHaveProperty('groupName');
      const bad = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'x', content: 'y', threadType: 'group' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].field).toBe('threadId');
    });

    it("a group message carries the group's name; groupName on a user thread is refused by the gateway and the connector", async () => {
      const res = await owner.post(`/sandbox/accounts/${accountId}/inbound`, {
        fromUid: '7700000000000000002',
        fromName: 'Gus',
        content: 'hello again',
        threadType: 'group',
        threadId: 'g-100',
        groupName: '  Nhóm khách sỉ  ',
      });
      expect(res.status).toBe(200);
      const ev = await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === res.body.chatnetMessageId);
      expect(ev.data).toMatchObject({ threadType: 'group', threadId: 'g-100', groupName: 'Nhóm khách sỉ' });

      const user = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'x', content: 'y', groupName: 'Nope' });
      expect(user.status).toBe(400);
      expect(user.body.error.details.map((d: any) => d.field)).toEqual(['groupName']);
      // The connector's own check, for callers other than the gateway.
      const direct = await rpc
        .SandboxInbound({ id: accountId, fromUid: 'x', content: 'y', threadType: 'user', groupName: 'Nope' }, grpcCtx(ownerUser))
        .catch((e) => e);
      expect(direct.code).toBe(grpcStatus.INVALID_ARGUMENT);
      expect(direct.message).toContain('groupName');
    });

    it('400 names a missing fromUid or content; 404 cross-org; 403 for an agent', async () => {
      const noFrom = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { content: 'x' });
      expect(noFrom.status).toBe(400);
      expect(noFrom.body.error.details[0].field).toBe('fromUid');
      const noContent = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: '1' });
      expect(noContent.status).toBe(400);
      expect(noContent.body.error.details[0].field).toBe('content');
      expect((await other.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: '1', content: 'x' })).status).toBe(404);
      expect((await agent.client.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: '1', content: 'x' })).status).toBe(403);
    });

    it('inbound to an account that is not connected is 422', async () => {
      const id = await create(owner, 'Offline');
      const res = await owner.post(`/sandbox/accounts/${id}/inbound`, { fromUid: '1', content: 'x' });
      expect(res.status).toBe(422);
    });

    it('friends sets the list and emits chatnet_account.friends from the live session', async () => {
      const friends = [
        { chatnetUid: '7700000000000000001', displayName: 'Carla Customer' },
        { chatnetUid: '7700000000000000003', displayName: 'Dan' },
      ];
      const before = bus.count();
      const res = await owner.post(`/sandbox/accounts/${accountId}/friends`, { friends });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accountId, friends, delivered: true });
      const ev = await bus.waitFor('chatnet_account.friends', (e) => e.data.accountId === accountId && e.data.friends.length === 2, 5000, before);
      expect(ev.data).toEqual({ accountId, friends });
    });

    it('friends: 400 for a malformed list, 422 for an account that never connected, 404 cross-org', async () => {
      expect((await owner.post(`/sandbox/accounts/${accountId}/friends`, { friends: [{ displayName: 'no uid' }] })).status).toBe(400);
      expect((await owner.post(`/sandbox/accounts/${accountId}/friends`, { friends: 'x' })).status).toBe(400);
      const fresh = await create(owner, 'Never connected');
      const res = await owner.post(`/sandbox/accounts/${fresh}/friends`, { friends: [] });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('never_connected');
      expect((await other.post(`/sandbox/accounts/${accountId}/friends`, { friends: [] })).status).toBe(404);
    });

    it('SendChatMessage sends through the live session; a repeated clientMessageId sends once', async () => {
      const ctx = grpcCtx(ownerUser);
      const req = {
        accountId,
        threadId: '7700000000000000001',
        threadType: 'user',
        content: 'Yes, in stock!',
        contentType: 'text',
        clientMessageId: 'c-1',
      };
      const sent = await rpc.SendChatMessage<{ chatnetMessageId: string; sentAt: string }>(req, ctx);
      expect(sent).toEqual({ chatnetMessageId: expect.any(String), sentAt: expect.any(String) });
      const again = await rpc.SendChatMessage(req, ctx);
      expect(again).toEqual(sent);
      const log = await owner.get(`/sandbox/accounts/${accountId}/sent`);
      expect(log.status).toBe(200);
      expect(log.body.data.filter((m: { content: string }) => m.content === 'Yes, in stock!')).toEqual([
        {
          chatnetMessageId: sent.chatnetMessageId,
          threadId: '7700000000000000001',
          threadType: 'user',
          content: 'Yes, in stock!',
          contentType: 'text',
          sentAt: sent.sentAt,
          attachments: [],
          quote: null,
          recalledAt: null,
        },
      ]);
    });

    it('SendChatMessage: NOT_FOUND outside the org or for an unknown id, FAILED_PRECONDITION when not connected, INVALID_ARGUMENT without content', async () => {
      const base = { threadId: '1', threadType: 'user', content: 'x', contentType: 'text', clientMessageId: '' };
      const otherOrg = { id: '00000000-0000-4000-8000-000000000001', orgId: '00000000-0000-4000-8000-000000000002', role: 'owner' };
      await expect(rpc.SendChatMessage({ ...base, accountId }, grpcCtx(otherOrg))).rejects.toMatchObject({ code: grpcStatus.NOT_FOUND });
      await expect(rpc.SendChatMessage({ ...base, accountId: 'nope' }, grpcCtx(ownerUser))).rejects.toMatchObject({ code: grpcStatus.NOT_FOUND });
      const offline = await create(owner, 'Not connected');
      await expect(rpc.SendChatMessage({ ...base, accountId: offline }, grpcCtx(ownerUser))).rejects.toMatchObject({
        code: grpcStatus.FAILED_PRECONDITION,
      });
      await expect(rpc.SendChatMessage({ ...base, accountId, content: ' ' }, grpcCtx(ownerUser))).rejects.toMatchObject({
        code: grpcStatus.INVALID_ARGUMENT,
      });
    });

    describe('POST /sandbox/accounts/:id/seen: the recipient reads what the account sent', () => {
      const thread = '7700000000000000009';
      let sent: Array<{ chatnetMessageId: string }>;
      beforeAll(async () => {
        const ctx = grpcCtx(ownerUser);
        sent = [];
        for (const content of ['First offer', 'Second offer']) {
          sent.push(
            await rpc.SendChatMessage({ accountId, threadId: thread, threadType: 'user', content, contentType: 'text', clientMessageId: '' }, ctx),
          );
        }
      });

      it('without ids it is opening the chat: every message sent to the thread, published as chatnet.seen', async () => {
        const res = await owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: thread });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          accountId,
          threadId: thread,
          threadType: 'user',
          chatnetMessageIds: expect.arrayContaining(sent.map((m) => m.chatnetMessageId)),
          seenByUid: thread,
          seenAt: expect.any(String),
        });
        expect(res.body.chatnetMessageIds).toHaveLength(2);
        const ev = await bus.waitFor('chatnet.seen', (e) => e.data.accountId === accountId && e.data.seenAt === res.body.seenAt);
        expect(ev.orgId).toBe(ownerUser.orgId);
        expect(ev.data).toEqual({
          accountId,
          threadId: thread,
          threadType: 'user',
          chatnetMessageIds: res.body.chatnetMessageIds,
          seenByUid: thread,
          seenAt: res.body.seenAt,
        });
      });

      it('named ids are the receipt; the same receipt again enters the outbox once', async () => {
        const one = [sent[0].chatnetMessageId];
        const first = await owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: thread, chatnetMessageIds: one });
        expect(first.status).toBe(200);
        expect(first.body.chatnetMessageIds).toEqual(one);
        expect((await owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: thread, chatnetMessageIds: one })).status).toBe(200);
        // A group member's receipt, published after those two.
        const group = await owner.post(`/sandbox/accounts/${accountId}/seen`, {
          threadId: 'g-100',
          threadType: 'group',
          chatnetMessageIds: ['net-g-1'],
          seenByUid: '7700000000000000002',
        });
        expect(group.body).toEqual(
          expect.objectContaining({ threadType: 'group', seenByUid: '7700000000000000002', chatnetMessageIds: ['net-g-1'] }),
        );
        await bus.waitFor('chatnet.seen', (e) => e.data.threadId === 'g-100');
        const forOne = bus.of('chatnet.seen', accountId).filter((e) => JSON.stringify(e.data.chatnetMessageIds) === JSON.stringify(one));
        expect(forOne).toHaveLength(1);
        expect(forOne[0].data.seenAt).toBe(first.body.seenAt);
      });

      it('400 names threadId, threadType and chatnetMessageIds; 422 when nothing was sent to the thread or the account is not live', async () => {
        const noThread = await owner.post(`/sandbox/accounts/${accountId}/seen`, {});
        expect(noThread.status).toBe(400);
        expect(noThread.body.error.details[0].field).toBe('threadId');
        const badType = await owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: thread, threadType: 'channel' });
        expect(badType.status).toBe(400);
        expect(badType.body.error.details[0].field).toBe('threadType');
        const badIds = await owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: thread, chatnetMessageIds: 'all' });
        expect(badIds.status).toBe(400);
        expect(badIds.body.error.details[0].field).toBe('chatnetMessageIds');
        const nothing = await owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: 'nobody-we-wrote-to' });
        expect(nothing.status).toBe(422);
        expect(nothing.body.error.code).toBe('nothing_sent');
        const offline = await create(owner, 'Offline reader');
        expect((await owner.post(`/sandbox/accounts/${offline}/seen`, { threadId: thread, chatnetMessageIds: ['1'] })).status).toBe(422);
      });

      it('404 for another org’s or an unknown account; 403 for an agent', async () => {
        expect((await other.post(`/sandbox/accounts/${accountId}/seen`, { threadId: thread })).status).toBe(404);
        expect((await owner.post('/sandbox/accounts/00000000-0000-4000-8000-000000000009/seen', { threadId: thread })).status).toBe(404);
        expect((await agent.client.post(`/sandbox/accounts/${accountId}/seen`, { threadId: thread })).status).toBe(403);
      });
    });
  });

  describe('drop and reconnect', () => {
    it('drop: disconnected (event), then the pool reconnects from session data by itself (event)', async () => {
      const { id } = await connected('Flaky line');
      const before = bus.count();
      const res = await owner.post(`/sandbox/accounts/${id}/drop`, { reason: 'network_blip' });
      expect(res.status).toBe(200);
      expect(res.body.message).toMatch(/reconnects/);
      const down = await bus.waitFor('chatnet_account.disconnected', (e) => e.data.accountId === id, 5000, before);
      expect(down.data).toEqual({ accountId: id, reason: 'network_blip' });
      expect((await owner.get(`/api/v1/chatnet-accounts/${id}`)).body.status).toBe('disconnected');
      await bus.waitFor('chatnet_account.connected', (e) => e.data.accountId === id, 10_000, before);
      await eventually(async () => (await owner.get(`/api/v1/chatnet-accounts/${id}`)).body.status === 'connected', 5000);
      expect((await owner.get(`/api/v1/chatnet-accounts/${id}/status`)).body.liveStatus.state).toBe('connected');
    });

    it('reconnect right after a drop connects again from the stored session', async () => {
      const { id } = await connected('Manual line');
      await owner.post(`/sandbox/accounts/${id}/drop`, {});
      const res = await owner.post(`/api/v1/chatnet-accounts/${id}/reconnect`);
      expect(res.status).toBe(200);
      expect(res.body.message).toMatch(/reconnected|already connected/i);
      expect((await owner.get(`/api/v1/chatnet-accounts/${id}`)).body.status).toBe('connected');
      const again = await owner.post(`/api/v1/chatnet-accounts/${id}/reconnect`);
      expect(again.body).toEqual({ message: 'The account is already connected' });
    });

    it('a drop that expires the session leaves the account disconnected; reconnect is then 422 session_expired', async () => {
      const { id } = await connected('Expired line');
      const res = await owner.post(`/sandbox/accounts/${id}/drop`, { expireSession: true, reason: 'logged_out' });
      expect(res.status).toBe(200);
      const rc = await owner.post(`/api/v1/chatnet-accounts/${id}/reconnect`);
      expect(rc.status).toBe(422);
      expect(rc.body.error.code).toBe('session_expired');
      await new Promise((r) => setTimeout(r, 2500));
      const a = (await owner.get(`/api/v1/chatnet-accounts/${id}`)).body;
      expect(a.status).toBe('disconnected');
      expect(a.liveStatus.state).toBe('disconnected');
      // A new QR login brings it back.
      await owner.post(`/api/v1/chatnet-accounts/${id}/login`);
      expect((await owner.post(`/sandbox/accounts/${id}/scan`, { chatnetUid: a.chatnetUid })).body.status).toBe('connected');
    });

    it('reconnect without stored session data is 422; drop of an unconnected account is 422; cross-org 404; agent 403', async () => {
      const id = await create(owner, 'Fresh');
      const rc = await owner.post(`/api/v1/chatnet-accounts/${id}/reconnect`);
      expect(rc.status).toBe(422);
      expect(rc.body.error.code).toBe('no_session');
      expect((await owner.post(`/sandbox/accounts/${id}/drop`, {})).status).toBe(422);
      expect((await other.post(`/api/v1/chatnet-accounts/${id}/reconnect`)).status).toBe(404);
      expect((await other.post(`/sandbox/accounts/${id}/drop`, {})).status).toBe(404);
      expect((await agent.client.post(`/api/v1/chatnet-accounts/${id}/reconnect`)).status).toBe(403);
      expect((await agent.client.post(`/sandbox/accounts/${id}/drop`, {})).status).toBe(403);
      expect((await owner.post(`/sandbox/accounts/${id}/drop`, { expireSession: 'yes' })).status).toBe(400);
    });
  });

  describe('PUT /api/v1/chatnet-accounts/:id/proxy', () => {
    it('sets and clears the proxy; the URL is never echoed', async () => {
      const id = await create(owner, 'Proxy line');
      const set = await owner.put(`/api/v1/chatnet-accounts/${id}/proxy`, { proxyUrl: 'http://u:p4ss@10.1.2.3:3128' });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ message: expect.stringMatching(/^Proxy set/), hasProxy: true });
      expect(JSON.stringify(set.body)).not.toContain('p4ss');
      expect((await owner.get(`/api/v1/chatnet-accounts/${id}`)).body.hasProxy).toBe(true);
      const cleared = await owner.put(`/api/v1/chatnet-accounts/${id}/proxy`, { proxyUrl: null });
      expect(cleared.body).toEqual({ message: expect.stringMatching(/^Proxy cleared/), hasProxy: false });
      expect((await owner.get(`/api/v1/chatnet-accounts/${id}`)).body.hasProxy).toBe(false);
      const empty = await owner.put(`/api/v1/chatnet-accounts/${id}/proxy`, { proxyUrl: '' });
      expect(empty.body.hasProxy).toBe(false);
    });

    it('a live account is re-established through the new proxy and comes back connected', async () => {
      const { id } = await connected('Live proxy line');
      const res = await owner.put(`/api/v1/chatnet-accounts/${id}/proxy`, { proxyUrl: 'socks5://10.1.2.3:1080' });
      expect(res.body.message).toMatch(/re-established/);
      await eventually(async () => (await owner.get(`/api/v1/chatnet-accounts/${id}/status`)).body.liveStatus.state === 'connected', 10_000);
    });

    it('400 for a missing key or a bad URL, 404 cross-org, 403 for an agent on an account they do not own', async () => {
      const id = await create(owner, 'Proxy errors');
      expect((await owner.put(`/api/v1/chatnet-accounts/${id}/proxy`, {})).body.error.details[0].field).toBe('proxyUrl');
      const bad = await owner.put(`/api/v1/chatnet-accounts/${id}/proxy`, { proxyUrl: 'gopher://x' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].field).toBe('proxyUrl');
      expect((await other.put(`/api/v1/chatnet-accounts/${id}/proxy`, { proxyUrl: null })).status).toBe(404);
      expect((await agent.client.put(`/api/v1/chatnet-accounts/${id}/proxy`, { proxyUrl: null })).status).toBe(403);
    });
  });

  describe('DELETE /api/v1/chatnet-accounts/:id', () => {
    it('soft-deletes (204): gone from the API; a connected account is disconnected (event) and its session closed', async () => {
      const { id } = await connected('Doomed line');
      const before = bus.count();
      const res = await owner.del(`/api/v1/chatnet-accounts/${id}?purge=true`);
      expect(res.status).toBe(204);
      expect(res.body).toBeUndefined();
      expect((await owner.get(`/api/v1/chatnet-accounts/${id}`)).status).toBe(404);
      expect((await owner.get('/api/v1/chatnet-accounts')).body.map((a: { id: string }) => a.id)).not.toContain(id);
      const ev = await bus.waitFor('chatnet_account.disconnected', (e) => e.data.accountId === id, 5000, before);
      expect(ev.data.reason).toBe('deleted');
      expect((await owner.post(`/sandbox/accounts/${id}/inbound`, { fromUid: '1', content: 'x' })).status).toBe(404);
      await expect(
        rpc.SendChatMessage(
          { accountId: id, threadId: '1', threadType: 'user', content: 'x', contentType: 'text', clientMessageId: '' },
          grpcCtx(ownerUser),
        ),
      ).rejects.toMatchObject({ code: grpcStatus.NOT_FOUND });
    });

    it('purge frees the chat-network user for a fresh connection', async () => {
      const { id } = await connected('Old phone', '8800000000000000005');
      expect((await owner.del(`/api/v1/chatnet-accounts/${id}?purge=true`)).status).toBe(204);
      const again = await connected('New phone', '8800000000000000005');
      expect(again.account.status).toBe('connected');
    });

    it('404 twice, cross-org and malformed; 403 for an agent on an account they do not own; 400 for a bad purge', async () => {
      const id = await create(owner, 'Keep');
      expect((await other.del(`/api/v1/chatnet-accounts/${id}`)).status).toBe(404);
      expect((await agent.client.del(`/api/v1/chatnet-accounts/${id}`)).status).toBe(403);
      expect((await owner.del(`/api/v1/chatnet-accounts/${id}?purge=maybe`)).status).toBe(400);
      expect((await owner.del('/api/v1/chatnet-accounts/not-a-uuid')).status).toBe(404);
      expect((await owner.del(`/api/v1/chatnet-accounts/${id}`)).status).toBe(204);
      expect((await owner.del(`/api/v1/chatnet-accounts/${id}`)).status).toBe(404);
      // An account an admin made for the agent is theirs to delete.
      const own = await create(owner, 'Agent owned', { ownerUserId: agent.user.id });
      expect((await agent.client.del(`/api/v1/chatnet-accounts/${own}`)).status).toBe(204);
    });
  });

  it('GET /sandbox/accounts/:id/sent: 404 cross-org, 403 for an agent', async () => {
    const id = await create(owner, 'Sent log');
    expect((await owner.get(`/sandbox/accounts/${id}/sent`)).body).toEqual({ data: [] });
    expect((await other.get(`/sandbox/accounts/${id}/sent`)).status).toBe(404);
    expect((await agent.client.get(`/sandbox/accounts/${id}/sent`)).status).toBe(403);
  });
});

describe('sandbox control when the connector runs another driver', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ services: ['chatnet-connector'], serviceEnv: { 'chatnet-connector': { CHATNET_DRIVER: 'zca' } } });
  });
  afterAll(() => stack?.stop());

  it('the sandbox routes do not exist (404)', async () => {
    const api = client(stack.url);
    const { owner } = await newOrg(api);
    const id = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Real line' })).body.id;
    for (const action of ['scan', 'inbound', 'seen', 'drop', 'friends']) {
      const res = await owner.post(`/sandbox/accounts/${id}/${action}`, { fromUid: '1', content: 'x', friends: [], threadId: '1' });
      expect(res.status).toBe(404);
    }
  });
});
