import { createClient } from '@redis/client';
import { clearRedisPrefix, eventually, freePort, infra, uniqueName } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { captureEvents, type ConnectorProcess, spawnSandboxNetwork } from './support';

// The sandbox network as its own process (issue #28 item 5): the connector (CHATNET_SANDBOX_URL) holds a WebSocket per
// session to it, as it would to the real network, and a contact's message enters at the network's own HTTP port, not
// through the gateway. The gateway's /sandbox control routes keep working through the connector.
describe('standalone sandbox network: the connector reaches it as it reaches a real network', () => {
  const prefix = `${uniqueName('t')}:`;
  let network: ConnectorProcess & { url: string };
  let stack: Stack;
  let owner: Client;
  let events: Awaited<ReturnType<typeof captureEvents>>;
  let redis: ReturnType<typeof createClient>;
  let accountId: string;

  /** A contact writes to the account at the network's own port (what benchmarks do). */
  const contactWrites = (body: Record<string, unknown>, id = accountId) =>
    fetch(`${network.url}/accounts/${id}/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  const inboundEvents = (contentPrefix: string) =>
    events.of('chatnet.inbound', accountId).filter((e) => String(e.data.content).startsWith(contentPrefix));

  /** The stored messages of the account's conversation with a contact, oldest first. */
  const storedContents = async (threadId: string): Promise<string[]> => {
    const conv = (await owner.get('/api/v1/conversations')).body.data.find((c: any) => c.threadId === threadId);
    if (!conv) return [];
    // The API lists newest first (by the network's time).
    return (await owner.get(`/api/v1/conversations/${conv.id}`)).body.messages.map((m: any) => m.content).reverse();
  };

  const heldCount = () => redis.lLen(`${prefix}sandbox:held:${accountId}`);

  beforeAll(async () => {
    network = await spawnSandboxNetwork({ REDIS_URL: infra.redisUrl, REDIS_PREFIX: prefix }, await freePort());
    stack = await startStack({
      services: ['crm', 'messaging', 'chatnet-connector'],
      env: { REDIS_PREFIX: prefix },
      serviceEnv: {
        'chatnet-connector': { CHATNET_SANDBOX_URL: network.url, HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500', RECONNECT_DELAY_MS: '100' },
      },
    });
    events = await captureEvents(stack.env.EVENTS_EXCHANGE);
    owner = (await newOrg(client(stack.url), 'Standalone network')).owner;
    redis = createClient({ url: infra.redisUrl });
    redis.on('error', () => undefined);
    await redis.connect();
  }, 120_000);

  afterAll(async () => {
    await events?.stop();
    await stack?.stop();
    network?.proc.kill('SIGTERM');
    await network?.exited;
    await redis?.quit().catch(() => undefined);
    await clearRedisPrefix(prefix).catch(() => undefined);
  });

  it('the QR login is held by the network process and the scan through the gateway completes it', async () => {
    const created = await owner.post('/api/v1/chatnet-accounts', { displayName: 'Standalone line' });
    expect(created.status).toBe(201);
    accountId = created.body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    const scan = await owner.post(`/sandbox/accounts/${accountId}/scan`, { chatnetUid: '4000000000000000001', displayName: 'Shop' });
    expect(scan.status).toBe(200);
    expect(scan.body.status).toBe('connected');
  });

  it('a contact writing at the network port arrives as chatnet.inbound and a stored message, the gateway not involved', async () => {
    const res = await contactWrites({ fromUid: 'uid-outside', fromName: 'Lan Pham', content: 'direct-1 hello from outside' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ accountId, threadId: 'uid-outside', held: false, chatnetMessageId: expect.any(String) }));
    // Answered once the connector recorded it (published with confirms): the event is there.
    const event = await events.waitFor('chatnet.inbound', (e) => e.data.content === 'direct-1 hello from outside');
    expect(event.data).toEqual(
      expect.objectContaining({ accountId, fromUid: 'uid-outside', fromName: 'Lan Pham', chatnetMessageId: res.body.chatnetMessageId }),
    );
    expect(await eventually(async () => (await storedContents('uid-outside')).length === 1 && storedContents('uid-outside'))).toEqual([
      'direct-1 hello from outside',
    ]);
  });

  it('the network port refuses an account it never saw log in (404) and a body without a sender, naming the field (400)', async () => {
    const unknown = await contactWrites({ fromUid: 'uid-x', content: 'nobody' }, '00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    const bad = await contactWrites({ content: 'no sender' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ field: 'fromUid' })]);
  });

  it("a reply from the CRM goes out over the session's socket and the network records it", async () => {
    const conv = (await owner.get('/api/v1/conversations')).body.data.find((c: any) => c.threadId === 'uid-outside');
    const sent = await owner.post(
      `/api/v1/conversations/${conv.id}/messages`,
      { content: 'reply over the socket' },
      { 'idempotency-key': 'standalone-1' },
    );
    expect(sent.status).toBe(201);
    expect(sent.body.status).toBe('sent');
    const onNetwork = await owner.get(`/sandbox/accounts/${accountId}/sent`);
    expect(onNetwork.body.data).toEqual([expect.objectContaining({ threadId: 'uid-outside', content: 'reply over the socket' })]);
  });

  it("a receipt and a contact's recall pushed through the gateway reach the connector over the socket", async () => {
    const seen = await owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: 'uid-outside' });
    expect(seen.status).toBe(200);
    const receipt = await events.waitFor('chatnet.seen', (e) => e.data.accountId === accountId);
    expect(receipt.data.chatnetMessageIds).toEqual(seen.body.chatnetMessageIds);
    const first = inboundEvents('direct-1')[0].data.chatnetMessageId;
    const recall = await owner.post(`/sandbox/accounts/${accountId}/recall`, { chatnetMessageId: first });
    expect(recall.status).toBe(200);
    await events.waitFor('chatnet.recalled', (e) => e.data.chatnetMessageId === first && e.data.fromUid === 'uid-outside');
  });

  it("a phone lookup asks the network over the session's socket; a stranger-shy user refuses a send (friend_required)", async () => {
    const directory = await owner.post('/sandbox/network/phones', {
      phones: [
        { phone: '0912000111', chatnetUid: 'u-known', displayName: 'Chị Hoa' },
        { phone: '0912000222', chatnetUid: 'u-shy', displayName: 'Anh Lâm', acceptsStrangers: false },
      ],
    });
    expect(directory.status).toBe(200);
    const found = await owner.post(`/api/v1/chatnet-accounts/${accountId}/lookup`, { phone: '+84912000111' });
    expect(found.body).toEqual({ found: true, chatnetUid: 'u-known', displayName: 'Chị Hoa', avatarUrl: null });
    expect((await contactWrites({ fromUid: 'u-shy', content: 'shy-1 hi' })).status).toBe(200);
    const conv = await eventually(async () => (await owner.get('/api/v1/conversations')).body.data.find((c: any) => c.threadId === 'u-shy'));
    const refused = await owner.post(
      `/api/v1/conversations/${conv.id}/messages`,
      { content: 'not a friend yet' },
      { 'idempotency-key': 'standalone-shy' },
    );
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('friend_required');
  });

  it('the gateway route still delivers through the connector to the network process', async () => {
    const res = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-outside', content: 'via-gateway 1' });
    expect(res.status).toBe(200);
    await events.waitFor('chatnet.inbound', (e) => e.data.content === 'via-gateway 1');
  });

  it('messages written while no connector is connected are kept, then handed over in order at the next connection', async () => {
    await stack.stopService('chatnet-connector');
    const contents = ['held-1 first', 'held-2 second', 'held-3 third'];
    for (const content of contents) {
      const res = await contactWrites({ fromUid: 'uid-offline', fromName: 'Offline Oanh', content });
      expect(res.status).toBe(200);
      expect(res.body.held).toBe(true);
    }
    expect(await heldCount()).toBe(3);
    expect(inboundEvents('held-')).toHaveLength(0);

    await stack.startService('chatnet-connector');
    // The pool restores the session from its stored data; the network hands the kept messages over, oldest first.
    await eventually(async () => inboundEvents('held-').length === 3, 30_000);
    expect(inboundEvents('held-').map((e) => e.data.content)).toEqual(contents);
    await eventually(async () => (await heldCount()) === 0);
    expect(await eventually(async () => (await storedContents('uid-offline')).length === 3 && storedContents('uid-offline'), 15_000)).toEqual(
      contents,
    );
    // Live again: the next message is delivered at once.
    const after = await contactWrites({ fromUid: 'uid-offline', content: 'held-4 live again' });
    expect(after.body.held).toBe(false);
  }, 60_000);

  it('a drop through the gateway cuts the socket; the pool reconnects and messages flow again', async () => {
    const drop = await owner.post(`/sandbox/accounts/${accountId}/drop`, { reason: 'network_hiccup' });
    expect(drop.status).toBe(200);
    await events.waitFor('chatnet_account.disconnected', (e) => e.data.accountId === accountId && e.data.reason === 'network_hiccup');
    await eventually(async () => (await owner.get(`/api/v1/chatnet-accounts/${accountId}`)).body.liveStatus.state === 'connected', 20_000);
    const res = await contactWrites({ fromUid: 'uid-outside', content: 'after-drop 1' });
    expect(res.status).toBe(200);
    await events.waitFor('chatnet.inbound', (e) => e.data.content === 'after-drop 1');
  }, 40_000);
});
