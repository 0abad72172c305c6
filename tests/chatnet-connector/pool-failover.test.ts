import { status as grpcStatus } from '@grpc/grpc-js';
import { createClient } from '@redis/client';
import { SecretBox } from '@crm/crypto';
import { createTestDatabase, eventually, freePort, infra, type TestDatabase } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { captureEvents, connectorClient, grpcCtx, type ConnectorProcess, leaseHolder, spawnConnector as startConnector } from './support';
import { connectPatiently } from '../support/patient-client';

/** Far above a takeover on a loaded machine: waiting this long means it is not coming. */
const TAKEOVER_HANG_MS = 90_000;

// The session pool scales out: two connector processes share one database, Redis and exchange; each live
// session is held by exactly one of them; calls reach the holder wherever they arrive; when a holder is
// killed (SIGKILL: no goodbye) the other takes its accounts over from the stored session data. How long that
// takes (about the lease lifetime, LEASE_TTL_MS) is measured by bench/failover/run.mjs, not asserted here.
describe('session pool across two connector processes', () => {
  let stack: Stack;
  let db: TestDatabase;
  let api: Client;
  let owner: Client;
  let user: { id: string; orgId: string; role: string };
  let bus: Awaited<ReturnType<typeof captureEvents>>;
  let redis: ReturnType<typeof createClient>;
  let a: ConnectorProcess;
  let b: ConnectorProcess;
  let env: Record<string, string>;

  const spawnConnector = (port: number): Promise<ConnectorProcess> => startConnector(env, port);

  /** Which process holds an account's lease, by the address it registered. */
  const holderAddress = (id: string) => leaseHolder(redis, env.REDIS_PREFIX, id);

  beforeAll(async () => {
    db = await createTestDatabase('chatnet_pool');
    const portB = await freePort();
    // The gateway talks to process B; process A is reached directly, as a second replica behind a balancer would be.
    // The proxy below is on a private address: allowed here, as an operator allows proxies on its own network.
    stack = await startStack({ env: { CONNECTOR_ADDR: `127.0.0.1:${portB}`, CONNECTOR_ALLOWED_PRIVATE_ADDRESSES: '10.0.0.9' } });
    // Rebalancing off: this file pins which process holds which account (rebalance.test.ts covers the moves).
    env = { ...stack.env, DATABASE_URL: db.url, REBALANCE_INTERVAL_MS: '0' };
    redis = createClient({ url: infra.redisUrl });
    redis.on('error', () => undefined);
    await redis.connect();
    bus = await captureEvents(env.EVENTS_EXCHANGE);
    a = await spawnConnector(await freePort());
    b = await spawnConnector(portB);
    api = client(stack.url);
    const org = await newOrg(api, 'Pool Co');
    owner = org.owner;
    user = org.user;
  }, 90_000);

  afterAll(async () => {
    for (const i of [a, b]) if (i && i.proc.exitCode === null && i.proc.signalCode === null) i.proc.kill('SIGKILL');
    await stack?.stop();
    await bus?.stop(true);
    redis?.destroy();
    await db?.drop();
  });

  const ids: string[] = [];
  let onB: string;

  it('accounts logged in on process A are held by A; one logged in on B is held by B', async () => {
    const rpcA = connectorClient(a.address);
    const rpcB = connectorClient(b.address);
    try {
      for (let i = 0; i < 3; i++) {
        const id = (
          await owner.post('/api/v1/chatnet-accounts', { displayName: `A line ${i}`, proxyUrl: i === 0 ? 'http://px:secret@10.0.0.9:3128' : null })
        ).body.id;
        await rpcA.Login({ id }, grpcCtx(user));
        // The scan arrives at B (through the gateway) and is forwarded to A, where the QR login lives.
        const scan = await owner.post(`/sandbox/accounts/${id}/scan`, { chatnetUid: `99000000000000000${i}` });
        expect(scan.status).toBe(200);
        expect(scan.body.status).toBe('connected');
        ids.push(id);
      }
      onB = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'B line' })).body.id;
      await rpcB.Login({ id: onB }, grpcCtx(user));
      expect((await owner.post(`/sandbox/accounts/${onB}/scan`, {})).status).toBe(200);
    } finally {
      rpcA.close();
      rpcB.close();
    }
    for (const id of ids) expect(await holderAddress(id)).toBe(a.address);
    expect(await holderAddress(onB)).toBe(b.address);
  });

  it('a send or an inbound push arriving at B for an account held by A is carried out on A', async () => {
    const rpcB = connectorClient(b.address);
    try {
      const sent = await rpcB.SendChatMessage<{ chatnetMessageId: string }>(
        { accountId: ids[1], threadId: '5500000000000000001', threadType: 'user', content: 'via B', contentType: 'text', clientMessageId: '' },
        grpcCtx(user),
      );
      const log = await owner.get(`/sandbox/accounts/${ids[1]}/sent`);
      expect(log.body.data[0]).toMatchObject({ chatnetMessageId: sent.chatnetMessageId, content: 'via B' });
    } finally {
      rpcB.close();
    }
    const res = await owner.post(`/sandbox/accounts/${ids[2]}/inbound`, { fromUid: '5500000000000000002', content: 'to A through B' });
    expect(res.status).toBe(200);
    await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === res.body.chatnetMessageId);
  });

  it('session data and proxies are encrypted at rest, bound to their org and account', async () => {
    const pg = await connectPatiently(db.url);
    try {
      const { rows } = await pg.query('SELECT id, org_id, session_enc, proxy_enc FROM chatnet_accounts WHERE id = ANY($1)', [ids]);
      const box = SecretBox.fromEnv(env.ENCRYPTION_KEY);
      for (const r of rows) {
        expect(r.session_enc).toMatch(/^k[0-9a-f]{8}:/);
        const plain = box.decrypt(r.session_enc, `${r.org_id}:${r.id}`);
        expect(JSON.parse(plain)).toEqual({ v: 1, token: expect.any(String) });
        expect(r.session_enc).not.toContain(JSON.parse(plain).token);
        // Copied onto another account it does not decrypt.
        expect(() => box.decrypt(r.session_enc, `${r.org_id}:${ids.find((x) => x !== r.id)}`)).toThrow();
      }
      const proxied = rows.find((r) => r.id === ids[0]);
      expect(proxied.proxy_enc).toMatch(/^k[0-9a-f]{8}:/);
      expect(proxied.proxy_enc).not.toContain('secret');
      expect(box.decrypt(proxied.proxy_enc, `${proxied.org_id}:${proxied.id}`)).toBe('http://px:secret@10.0.0.9:3128');
    } finally {
      await pg.end();
    }
  });

  it('killing A (SIGKILL) brings its accounts back live on B, reconnected from session data', async () => {
    const rpcB = connectorClient(b.address);
    try {
      const killedAt = Date.now();
      a.proc.kill('SIGKILL');
      await a.exited;
      // Until B takes over, the accounts are not live anywhere reachable: sending is refused, not hung.
      await expect(
        rpcB.SendChatMessage(
          { accountId: ids[0], threadId: '1', threadType: 'user', content: 'too early', contentType: 'text', clientMessageId: '' },
          grpcCtx(user),
        ),
      ).rejects.toMatchObject({ code: grpcStatus.FAILED_PRECONDITION });

      await eventually(
        async () => {
          for (const id of ids) {
            if ((await holderAddress(id)) !== b.address) return false;
            const s = (await owner.get(`/api/v1/chatnet-accounts/${id}/status`)).body.liveStatus;
            if (s.state !== 'connected' || Date.parse(s.connectedAt) < killedAt) return false;
          }
          return true;
        },
        // Only a hang fails here (normally about LEASE_TTL_MS, 10 s; bench/failover/run.mjs measures it).
        TAKEOVER_HANG_MS,
        250,
      );
      // B's own account never moved.
      expect(await holderAddress(onB)).toBe(b.address);

      // Live again: sends and inbound pushes work through B.
      const sent = await rpcB.SendChatMessage<{ chatnetMessageId: string }>(
        {
          accountId: ids[0],
          threadId: '5500000000000000001',
          threadType: 'user',
          content: 'after takeover',
          contentType: 'text',
          clientMessageId: '',
        },
        grpcCtx(user),
      );
      expect(sent.chatnetMessageId).toEqual(expect.any(String));
      const res = await owner.post(`/sandbox/accounts/${ids[1]}/inbound`, { fromUid: '5500000000000000003', content: 'after takeover' });
      expect(res.status).toBe(200);
      await bus.waitFor('chatnet.inbound', (e) => e.data.chatnetMessageId === res.body.chatnetMessageId);
      const list = (await owner.get('/api/v1/chatnet-accounts')).body as Array<{ id: string; status: string }>;
      expect(list.filter((x) => ids.includes(x.id)).every((x) => x.status === 'connected')).toBe(true);
    } finally {
      rpcB.close();
    }
  }, 120_000); // TAKEOVER_HANG_MS and room for the rest

  it('delete with purge clears the session data and chatnetUid', async () => {
    expect((await owner.del(`/api/v1/chatnet-accounts/${ids[2]}?purge=true`)).status).toBe(204);
    const pg = await connectPatiently(db.url);
    try {
      const { rows } = await pg.query('SELECT session_enc, chatnet_uid, deleted_at, keep_alive FROM chatnet_accounts WHERE id = $1', [ids[2]]);
      expect(rows[0]).toEqual({ session_enc: null, chatnet_uid: null, deleted_at: expect.any(Date), keep_alive: false });
    } finally {
      await pg.end();
    }
    await eventually(async () => (await holderAddress(ids[2])) === null, 5000);
  });

  it('SIGTERM stops B gracefully: it exits 0 and hands its leases back at once', async () => {
    b.proc.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    for (const id of [ids[0], ids[1], onB]) expect(await holderAddress(id)).toBeNull();
  });
});
