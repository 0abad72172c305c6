import { createClient } from '@redis/client';
import { type ClientFor, createServiceClient, loadProto, serviceDefinition, status as grpcStatus } from '@crm/grpc-kit';
import { createTestDatabase, eventually, freePort, infra, testAuth, type TestDatabase } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { connectorClient, type ConnectorProcess, leaseHolder, spawnConnector as startConnector, userRequestCtx } from './support';

type Connector = ClientFor<'connector.v1.ConnectorService'>;
type User = { id: string; orgId: string; role: string };

// The peer path for read marks and phone lookups (issue #15): the account's session is held by process B, and
// MarkThreadSeen (messaging's call after an agent read a conversation) and LookupPhone (crm's hasChatnet check)
// arrive at process A, which forwards them to B (PeerMarkSeen, PeerLookupPhone) and passes B's answer back. When
// B stops, the lease moves to A or C, and the same calls work at either of them: one runs it on its own session,
// the other forwards it to the new holder.
describe('peer path: mark seen and phone lookup reach the session holder', () => {
  let stack: Stack;
  let db: TestDatabase;
  let owner: Client;
  let user: User;
  let other: { owner: Client; user: User };
  let redis: ReturnType<typeof createClient>;
  let env: Record<string, string>;
  let a: ConnectorProcess;
  let b: ConnectorProcess;
  let c: ConnectorProcess;
  let accountId: string;
  const made: Connector[] = [];

  const spawnConnector = (port: number): Promise<ConnectorProcess> => startConnector(env, port);

  /** ConnectorService at one process, signed as the service that makes the call in production. */
  const as = (caller: 'messaging' | 'crm', at: ConnectorProcess): Connector => {
    const proto = loadProto('connector/v1/connector.proto');
    const rpc = createServiceClient(serviceDefinition(proto, 'connector.v1.ConnectorService'), at.address, testAuth(caller), 10_000);
    made.push(rpc);
    return rpc;
  };

  /** Which process holds an account's lease, by the address it registered. */
  const holderAddress = (id: string) => leaseHolder(redis, env.REDIS_PREFIX, id);

  /** A customer writes to the account (pushed through the gateway, so it too arrives at A); its ids as the network gave them. */
  const inbound = async (fromUid: string, content: string) => {
    const res = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid, content });
    expect(res.status).toBe(200);
    return {
      chatnetMessageId: res.body.chatnetMessageId as string,
      cliMsgId: res.body.cliMsgId as string,
      fromUid,
      contentType: 'text',
      sentAt: res.body.sentAt as string,
    };
  };

  const markSeen = (at: ConnectorProcess, who: User, m: Awaited<ReturnType<typeof inbound>>) =>
    as('messaging', at).MarkThreadSeen<{ ok: boolean }>({ accountId, threadId: m.fromUid, threadType: 'user', messages: [m] }, userRequestCtx(who));

  const lookup = (at: ConnectorProcess, who: User, phone: string) =>
    as('crm', at).LookupPhone<{ found: boolean; chatnetUid?: string; displayName?: string; accountId: string }>({ phone }, userRequestCtx(who));

  let lastRead: Awaited<ReturnType<typeof inbound>>;

  const seenByAgent = async () => {
    const res = await owner.get(`/sandbox/accounts/${accountId}/seen-by-agent`);
    expect(res.status).toBe(200);
    return res.body.data as Array<{ threadId: string; messages: Array<{ chatnetMessageId: string; cliMsgId: string }> }>;
  };

  beforeAll(async () => {
    db = await createTestDatabase('chatnet_peer');
    const portA = await freePort();
    // The gateway talks to A only; B and C are the other replicas behind a balancer.
    stack = await startStack({ env: { CONNECTOR_ADDR: `127.0.0.1:${portA}` } });
    // Rebalancing off: the test pins the session on B. Short scans so a released account is taken within a second,
    // and an 8 s lease: a killed holder's account is taken over within seconds, yet its lease outlasts the calls that
    // must fail while it runs, even on a loaded CI machine (a 3 s lease could lapse under them).
    env = { ...stack.env, DATABASE_URL: db.url, REBALANCE_INTERVAL_MS: '0', LEASE_TTL_MS: '8000', HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' };
    redis = createClient({ url: infra.redisUrl });
    redis.on('error', () => undefined);
    await redis.connect();
    a = await spawnConnector(portA);
    b = await spawnConnector(await freePort());
    c = await spawnConnector(await freePort());
    const api = client(stack.url);
    ({ owner, user } = await newOrg(api, 'Peer Co'));
    other = await newOrg(api, 'Other Co');

    accountId = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Held by B' })).body.id;
    const rpcB = connectorClient(b.address);
    try {
      await rpcB.Login({ id: accountId }, userRequestCtx(user));
    } finally {
      rpcB.close();
    }
    // The scan arrives at A (through the gateway) and is forwarded to B, where the QR login lives.
    expect((await owner.post(`/sandbox/accounts/${accountId}/scan`, { chatnetUid: '9100000000000000001' })).status).toBe(200);
    expect(
      (await owner.post('/sandbox/network/phones', { phones: [{ phone: '+84912000001', chatnetUid: 'uid-on-net', displayName: 'On The Net' }] }))
        .status,
    ).toBe(200);
  }, 120_000);

  afterAll(async () => {
    for (const rpc of made) rpc.close();
    for (const i of [a, b, c]) if (i && i.proc.exitCode === null && i.proc.signalCode === null) i.proc.kill('SIGKILL');
    await stack?.stop();
    redis?.destroy();
    await db?.drop();
  });

  it('the session is held by B, not by A where the calls arrive', async () => {
    expect(await holderAddress(accountId)).toBe(b.address);
  });

  it('MarkThreadSeen at A is carried out on B: the network records the read, with both ids of the message', async () => {
    const m = await inbound('5500000000000000001', 'read me through B');
    expect(await markSeen(a, user, m)).toMatchObject({ ok: true });
    const [rec] = await seenByAgent();
    expect(rec).toMatchObject({ threadId: m.fromUid, messages: [{ chatnetMessageId: m.chatnetMessageId, cliMsgId: m.cliMsgId }] });
    expect(await holderAddress(accountId)).toBe(b.address);
  });

  it('MarkThreadSeen: another org gets NOT_FOUND and nothing reaches the network; a bad message is INVALID_ARGUMENT', async () => {
    const m = await inbound('5500000000000000002', 'not yours');
    const before = (await seenByAgent()).length;
    await expect(markSeen(a, other.user, m)).rejects.toMatchObject({ code: grpcStatus.NOT_FOUND });
    await expect(markSeen(a, user, { ...m, cliMsgId: '' })).rejects.toMatchObject({ code: grpcStatus.INVALID_ARGUMENT });
    expect(await seenByAgent()).toHaveLength(before);
  });

  it("RecallChatMessage and ReactToChatMessage at A are carried out on B (PeerRecall, PeerReact); the sandbox's recall and react reach B too", async () => {
    const m = await inbound('5500000000000000003', 'quote me');
    const rpc = as('messaging', a);
    const sent = await rpc.SendChatMessage<{ chatnetMessageId: string; sentAt: string }>(
      {
        accountId,
        threadId: m.fromUid,
        threadType: 'user',
        content: 'a reply through B',
        contentType: 'text',
        clientMessageId: '',
        quote: {
          chatnetMessageId: m.chatnetMessageId,
          cliMsgId: m.cliMsgId,
          fromUid: m.fromUid,
          content: 'quote me',
          contentType: 'text',
          sentAt: m.sentAt,
        },
      },
      userRequestCtx(user),
    );
    const ref = { accountId, threadId: m.fromUid, threadType: 'user', chatnetMessageId: sent.chatnetMessageId, cliMsgId: '' };
    await expect(rpc.RecallChatMessage(ref, userRequestCtx(other.user))).rejects.toMatchObject({ code: grpcStatus.NOT_FOUND });
    expect(await rpc.RecallChatMessage(ref, userRequestCtx(user))).toMatchObject({ ok: true });
    const item = (await owner.get(`/sandbox/accounts/${accountId}/sent`)).body.data.find((x: any) => x.chatnetMessageId === sent.chatnetMessageId);
    expect(item).toMatchObject({ quote: { chatnetMessageId: m.chatnetMessageId }, recalledAt: expect.any(String) });
    // The network recalls a message once: B's session refuses the second, and A passes that on.
    await expect(rpc.RecallChatMessage(ref, userRequestCtx(user))).rejects.toMatchObject({ code: grpcStatus.UNAVAILABLE });
    expect(
      await rpc.ReactToChatMessage({ ...ref, chatnetMessageId: m.chatnetMessageId, cliMsgId: m.cliMsgId, emoji: '👍' }, userRequestCtx(user)),
    ).toMatchObject({ ok: true });
    await expect(rpc.ReactToChatMessage({ ...ref, chatnetMessageId: '', emoji: '👍' }, userRequestCtx(user))).rejects.toMatchObject({
      code: grpcStatus.INVALID_ARGUMENT,
    });

    const recalled = await owner.post(`/sandbox/accounts/${accountId}/recall`, { chatnetMessageId: m.chatnetMessageId });
    expect(recalled.status).toBe(200);
    const reacted = await owner.post(`/sandbox/accounts/${accountId}/react`, {
      chatnetMessageId: sent.chatnetMessageId,
      fromUid: m.fromUid,
      emoji: '😮',
    });
    expect(reacted.status).toBe(200);
    expect(await holderAddress(accountId)).toBe(b.address);
  });

  it('LookupPhone at A asks through the account held by B: a known number is found, an unknown one is not', async () => {
    expect(await lookup(a, user, '+84 912 000 001')).toEqual({ found: true, chatnetUid: 'uid-on-net', displayName: 'On The Net', accountId });
    expect(await lookup(a, user, '+84912000999')).toEqual({ found: false, accountId });
  });

  it('FindUser (messaging starting a conversation) at A asks through the account held by B (PeerFindUser): by phone in any spelling, and by uid', async () => {
    const find = (req: { accountId: string; phone?: string; chatnetUid?: string }) =>
      as('messaging', a).FindUser<{ found: boolean; chatnetUid?: string; displayName?: string; accountId: string }>(req, userRequestCtx(user));
    expect(await find({ accountId, phone: '0912 000 001' })).toEqual(
      expect.objectContaining({ found: true, chatnetUid: 'uid-on-net', displayName: 'On The Net', accountId }),
    );
    expect(await find({ accountId, chatnetUid: 'uid-on-net' })).toEqual(expect.objectContaining({ found: true, displayName: 'On The Net' }));
    expect(await find({ accountId, phone: '0912000998' })).toEqual(expect.objectContaining({ found: false, accountId }));
    // Another org's caller never reaches the account.
    await expect(as('messaging', a).FindUser({ accountId, phone: '0912000001' }, userRequestCtx(other.user))).rejects.toMatchObject({
      code: grpcStatus.NOT_FOUND,
    });
  });

  it('LookupPhone: a malformed number is INVALID_ARGUMENT; an org without a connected account FAILED_PRECONDITION', async () => {
    await expect(lookup(a, user, '12')).rejects.toMatchObject({ code: grpcStatus.INVALID_ARGUMENT });
    await expect(lookup(a, other.user, '+84912000001')).rejects.toMatchObject({ code: grpcStatus.FAILED_PRECONDITION });
  });

  it('B stops: the lease moves to A or C, and both calls work at A and at C (locally on the holder, forwarded by the other)', async () => {
    b.proc.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    const holder = await eventually(
      async () => {
        const at = await holderAddress(accountId);
        const live = (await owner.get(`/api/v1/chatnet-accounts/${accountId}/status`)).body.liveStatus?.state === 'connected';
        return at && at !== b.address && live ? at : undefined;
      },
      20_000,
      250,
    );
    expect([a.address, c.address]).toContain(holder);

    for (const at of [a, c]) {
      const m = await inbound('5500000000000000003', `read at ${at.address}`);
      expect(await markSeen(at, user, m)).toMatchObject({ ok: true });
      const [rec] = await seenByAgent();
      expect(rec.messages).toEqual([expect.objectContaining({ chatnetMessageId: m.chatnetMessageId, cliMsgId: m.cliMsgId })]);
      expect(await lookup(at, user, '+84912000001')).toEqual({ found: true, chatnetUid: 'uid-on-net', displayName: 'On The Net', accountId });
      lastRead = m;
    }
    expect(await holderAddress(accountId)).toBe(holder);
  }, 60_000);

  it('the new holder is killed (SIGKILL): until its lease lapses both calls fail at once with FAILED_PRECONDITION, then the survivor serves them', async () => {
    const holder = await holderAddress(accountId);
    const [dead, survivor] = holder === a.address ? [a, c] : [c, a];
    dead.proc.kill('SIGKILL');
    await dead.exited;
    // The lease still names the dead process (its 8 s have not run out): the survivor cannot reach it, and says so.
    const started = Date.now();
    await expect(markSeen(survivor, user, lastRead)).rejects.toMatchObject({ code: grpcStatus.FAILED_PRECONDITION });
    await expect(lookup(survivor, user, '+84912000001')).rejects.toMatchObject({ code: grpcStatus.FAILED_PRECONDITION });
    // "At once": both answered within 5 s, under the 8 s a peer call would wait for the dead holder (its deadline)
    // and under the lease, which still named the dead process when they answered (they failed, not served).
    expect(Date.now() - started).toBeLessThan(5_000);

    await eventually(async () => (await holderAddress(accountId)) === survivor.address && (await markSeen(survivor, user, lastRead)).ok, 20_000, 250);
    expect(await lookup(survivor, user, '+84912000001')).toEqual({ found: true, chatnetUid: 'uid-on-net', displayName: 'On The Net', accountId });
    // Read at the survivor itself: the gateway may have been talking to the process that was killed.
    const rpc = connectorClient(survivor.address);
    try {
      const { data } = await rpc.SandboxSeenByAgent<{ data: Array<{ messages: Array<{ chatnetMessageId: string }> }> }>(
        { id: accountId },
        userRequestCtx(user),
      );
      expect(data[0].messages.map((m) => m.chatnetMessageId)).toEqual([lastRead.chatnetMessageId]);
    } finally {
      rpc.close();
    }
  }, 60_000);
});
