import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Services } from '@crm/proto-types';
import { createLogger } from '@crm/logger';
import { callBatchMethod, MAX_CALLS_PER_BATCH } from './call-batch';
import { createServiceClient } from './client';
import { AppError } from './errors';
import type { CallContext } from './context';
import { devInternalAuth } from './internal-auth';
import { loadProto, serviceDefinition } from './proto';
import { GrpcServer } from './server';
import type { ServiceClient } from './typed';

type PeerClient = ServiceClient<Services['connector.v1.ConnectorPeerService']>;

// Calls a client makes in the same turn of the event loop travel as one (call-batch.ts); each must still get exactly
// what it would have got alone: its own answer or error, its own credential check, its own deadline.
describe('calls made together travel in one batch', () => {
  const auth = devInternalAuth('connector', randomBytes(32).toString('hex'));
  const ctor = serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorPeerService');
  const sandboxPath = ctor.service.PeerSandbox.path;
  let server: GrpcServer;
  let address = '';
  const bare = new grpc.Server();
  let bareAddress = '';
  const seenRequestIds: string[] = [];

  beforeAll(async () => {
    const empty = async () => ({});
    const sandbox = async (req: { action: string; payloadJson: string }, ctx: CallContext) => {
      seenRequestIds.push(ctx.requestId);
      if (req.action === 'fail') throw new AppError('not_found', `no ${req.payloadJson}`, { code: 'contact_missing' });
      if (req.action === 'slow') await new Promise((r) => setTimeout(r, Number(req.payloadJson)));
      if (req.action === 'big') return { resultJson: 'x'.repeat(Number(req.payloadJson)) };
      return { resultJson: `${req.action}:${req.payloadJson}:${ctx.orgId}:${ctx.requestId}` };
    };
    const handlers = {
      PeerLookupPhone: empty,
      PeerRecall: empty,
      PeerReact: empty,
      PeerFindUser: empty,
      PeerSendFriendRequest: empty,
      PeerMarkSeen: empty,
      PeerSend: empty,
      PeerRelease: async () => ({ ok: true, message: '' }),
      PeerSandbox: sandbox,
    };
    server = new GrpcServer(createLogger('test', 'silent'), auth).add(ctor, handlers as never);
    address = `127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
    // A server from before batches: it answers UNIMPLEMENTED to one.
    const impl: grpc.UntypedServiceImplementation = {};
    for (const m of Object.keys(ctor.service)) impl[m] = (_c: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, {});
    impl.PeerSandbox = (call: grpc.ServerUnaryCall<{ action: string }, unknown>, cb: grpc.sendUnaryData<unknown>) =>
      cb(null, { resultJson: `bare:${call.request.action}` });
    bare.addService(ctor.service, impl);
    const port = await new Promise<number>((resolve, reject) =>
      bare.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    bareAddress = `127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await server.stop(100);
    bare.forceShutdown();
  });
  beforeEach(() => {
    seenRequestIds.length = 0;
  });

  /** A client, and the paths of the calls its channel makes (a batch's, or a method's for a call sent alone). */
  function clientAt(at: string): { client: PeerClient; paths: string[] } {
    const client = createServiceClient(ctor, at, auth);
    const channel = client.raw.getChannel();
    const paths: string[] = [];
    const createCall = channel.createCall.bind(channel);
    jest.spyOn(channel, 'createCall').mockImplementation((method, ...rest) => {
      paths.push(method);
      return createCall(method, ...rest);
    });
    return { client, paths };
  }
  const sandbox = (client: PeerClient, action: string, payloadJson: string, ctx: Partial<CallContext> = { orgId: 'org-1' }, deadlineMs?: number) =>
    client.PeerSandbox<{ resultJson: string }>({ accountId: 'a', action, payloadJson }, ctx, deadlineMs ? { deadlineMs } : {});

  it('sends the calls of one turn as one batch, each answered with its own result and metadata', async () => {
    const { client, paths } = clientAt(address);
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => sandbox(client, 'scan', String(i), { orgId: `org-${i}`, requestId: `req-${i}` })),
      );
      expect(results.map((r) => r.resultJson)).toEqual(Array.from({ length: 10 }, (_, i) => `scan:${i}:org-${i}:req-${i}`));
      expect(paths).toEqual([callBatchMethod().path]);
      expect([...seenRequestIds].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `req-${i}`).sort());
    } finally {
      client.close();
    }
  });

  it('sends a call alone in its turn as a plain call, and calls of later turns in batches of their own', async () => {
    const { client, paths } = clientAt(address);
    try {
      expect(await sandbox(client, 'scan', 'alone')).toEqual({ resultJson: 'scan:alone:org-1:' });
      await Promise.all([sandbox(client, 'scan', 'a'), sandbox(client, 'scan', 'b')]);
      await Promise.all([sandbox(client, 'scan', 'c'), sandbox(client, 'scan', 'd')]);
      expect(paths).toEqual([sandboxPath, callBatchMethod().path, callBatchMethod().path]);
    } finally {
      client.close();
    }
  });

  it('fails one call with its own status, details and metadata while the others succeed', async () => {
    const { client } = clientAt(address);
    try {
      const [ok, failed, alsoOk] = await Promise.allSettled([
        sandbox(client, 'scan', '1'),
        sandbox(client, 'fail', 'contact 7'),
        sandbox(client, 'scan', '3'),
      ]);
      expect(ok).toEqual({ status: 'fulfilled', value: { resultJson: 'scan:1:org-1:' } });
      expect(alsoOk).toEqual({ status: 'fulfilled', value: { resultJson: 'scan:3:org-1:' } });
      expect(failed.status).toBe('rejected');
      const err = (failed as PromiseRejectedResult).reason as grpc.ServiceError;
      expect(err).toBeInstanceOf(Error);
      expect(err.message).toBe('5 NOT_FOUND: no contact 7');
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      expect(err.metadata.get('x-error-code')).toEqual(['contact_missing']);
    } finally {
      client.close();
    }
  });

  it("checks each call's credential: one without an org is refused before its handler runs, the others served", async () => {
    const { client, paths } = clientAt(address);
    try {
      const [refused, served] = await Promise.allSettled([
        sandbox(client, 'scan', 'x', { requestId: 'no-org' }),
        sandbox(client, 'scan', 'y', { orgId: 'org-2', requestId: 'with-org' }),
      ]);
      expect(paths).toEqual([callBatchMethod().path]);
      expect(refused).toMatchObject({
        status: 'rejected',
        reason: { code: grpc.status.UNAUTHENTICATED, details: 'No organization in call metadata' },
      });
      expect(served).toEqual({ status: 'fulfilled', value: { resultJson: 'scan:y:org-2:with-org' } });
      expect(seenRequestIds).toEqual(['with-org']);
    } finally {
      client.close();
    }
  });

  it('runs a forged batched call through the credential check: a batch grants nothing a call alone would not', async () => {
    const channel = new grpc.Client(address, grpc.credentials.createInsecure());
    const method = callBatchMethod();
    try {
      const request = ctor.service.PeerSandbox.requestSerialize({ accountId: 'a', action: 'scan', payloadJson: '' });
      const results = await new Promise<unknown[]>((resolve, reject) => {
        const out: unknown[] = [];
        const stream = channel.makeServerStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, {
          calls: [
            { method: sandboxPath, request, metadata: [{ key: 'authorization', value: 'Bearer forged' }] },
            { method: '/connector.v1.ConnectorPeerService/Nope', request },
          ],
        });
        stream.on('data', (d: { results: unknown[] }) => out.push(...d.results));
        stream.on('error', reject);
        stream.on('end', () => resolve(out));
      });
      expect(results).toHaveLength(2);
      expect(results).toContainEqual(expect.objectContaining({ index: 0, code: grpc.status.UNAUTHENTICATED }));
      expect(results).toContainEqual(expect.objectContaining({ index: 1, code: grpc.status.UNIMPLEMENTED }));
      expect(seenRequestIds).toEqual([]);
    } finally {
      channel.close();
    }
  });

  it('answers a quick call without waiting for a slow one of the same batch', async () => {
    const { client, paths } = clientAt(address);
    try {
      const order: string[] = [];
      await Promise.all([
        sandbox(client, 'slow', '400').then(() => order.push('slow')),
        sandbox(client, 'scan', 'quick').then(() => order.push('quick')),
      ]);
      expect(paths).toEqual([callBatchMethod().path]);
      expect(order).toEqual(['quick', 'slow']);
    } finally {
      client.close();
    }
  });

  it("fails the calls still running at the batch's deadline with DEADLINE_EXCEEDED, after the others succeeded", async () => {
    const { client, paths } = clientAt(address);
    try {
      const [slow, quick] = await Promise.allSettled([sandbox(client, 'slow', '1000', undefined, 200), sandbox(client, 'scan', 'q', undefined, 200)]);
      expect(paths).toEqual([callBatchMethod().path]);
      expect(slow).toMatchObject({ status: 'rejected', reason: { code: grpc.status.DEADLINE_EXCEEDED } });
      expect(quick).toEqual({ status: 'fulfilled', value: { resultJson: 'scan:q:org-1:' } });
    } finally {
      client.close();
    }
  });

  it('keeps calls with different time budgets in different batches (each keeps its own deadline)', async () => {
    const { client, paths } = clientAt(address);
    try {
      await Promise.all([
        sandbox(client, 'scan', '1', undefined, 1000),
        sandbox(client, 'scan', '2', undefined, 1000),
        sandbox(client, 'scan', '3', undefined, 3000),
        sandbox(client, 'scan', '4', undefined, 3000),
      ]);
      expect(paths).toEqual([callBatchMethod().path, callBatchMethod().path]);
    } finally {
      client.close();
    }
  });

  it(`splits more than ${MAX_CALLS_PER_BATCH} calls over several batches; answers bigger than a batch's request travel whole`, async () => {
    const { client, paths } = clientAt(address);
    try {
      const n = MAX_CALLS_PER_BATCH * 2 + 3;
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) => sandbox(client, i % 10 === 0 ? 'big' : 'scan', i % 10 === 0 ? String(3 * 1024 * 1024) : String(i))),
      );
      results.forEach((r, i) => expect(r.resultJson.length).toBe(i % 10 === 0 ? 3 * 1024 * 1024 : `scan:${i}:org-1:`.length));
      expect(paths).toEqual([callBatchMethod().path, callBatchMethod().path, callBatchMethod().path]);
    } finally {
      client.close();
    }
  });

  it('falls back to calls made alone for a server without batches, for this call and every later one', async () => {
    const { client, paths } = clientAt(bareAddress);
    try {
      expect((await Promise.all([sandbox(client, 'scan', '1'), sandbox(client, 'open', '2')])).map((r) => r.resultJson)).toEqual([
        'bare:scan',
        'bare:open',
      ]);
      expect(paths).toEqual([callBatchMethod().path, sandboxPath, sandboxPath]);
      await Promise.all([sandbox(client, 'scan', '3'), sandbox(client, 'scan', '4')]);
      expect(paths.slice(3)).toEqual([sandboxPath, sandboxPath]);
    } finally {
      client.close();
    }
  });

  it('fails every call of a batch with UNAVAILABLE when the server cannot be reached', async () => {
    const { client, paths } = clientAt('127.0.0.1:1');
    try {
      const settled = await Promise.allSettled([sandbox(client, 'scan', '1'), sandbox(client, 'scan', '2')]);
      expect(paths).toEqual([callBatchMethod().path]);
      for (const s of settled) expect(s).toMatchObject({ status: 'rejected', reason: { code: grpc.status.UNAVAILABLE } });
    } finally {
      client.close();
    }
  });
});
