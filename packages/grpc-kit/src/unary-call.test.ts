import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Services } from '@crm/proto-types';
import { createServiceClient } from './client';
import { devInternalAuth } from './internal-auth';
import { loadProto, serviceDefinition } from './proto';
import type { ServiceClient } from './typed';

// grpc-kit's clients make unary calls straight on the channel (unary-call.ts); what callers see must stay what
// grpc-js's own client gave them: the response, or an Error with the status code, details and metadata.
describe('createServiceClient unary calls', () => {
  const auth = devInternalAuth('connector', randomBytes(32).toString('hex'));
  const ctor = serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorPeerService');
  const server = new grpc.Server();
  let address = '';

  beforeAll(async () => {
    // A bare grpc-js server, so the test sees exactly the metadata the client sent.
    const impl: grpc.UntypedServiceImplementation = {};
    for (const m of Object.keys(ctor.service)) impl[m] = (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, {});
    impl.PeerSandbox = (call: grpc.ServerUnaryCall<{ action: string; payloadJson: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const { action, payloadJson } = call.request;
      if (action === 'echo') return cb(null, { resultJson: JSON.stringify(call.metadata.getMap()) });
      if (action === 'fail') {
        const md = new grpc.Metadata();
        md.set('x-error-code', 'contact_missing');
        return cb({ code: grpc.status.NOT_FOUND, details: `no ${payloadJson}`, metadata: md });
      }
      if (action === 'slow') return void setTimeout(() => cb(null, { resultJson: 'late' }), 500);
      cb(null, { resultJson: `${action}:${payloadJson}` });
    };
    server.addService(ctor.service, impl);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    address = `127.0.0.1:${port}`;
  });
  afterAll(() => server.forceShutdown());

  const call = (client: ServiceClient<Services['connector.v1.ConnectorPeerService']>, action: string, payloadJson = '', ...rest: unknown[]) =>
    client.PeerSandbox<{ resultJson: string }>({ accountId: 'a', action, payloadJson }, ...(rest as []));

  it('answers with the decoded response', async () => {
    const client = createServiceClient(ctor, address, auth);
    try {
      expect(await call(client, 'scan', '{"x":1}')).toEqual({ resultJson: 'scan:{"x":1}' });
    } finally {
      client.close();
    }
  });

  it("sends the credential, the request id, and the caller's explicit traceparent", async () => {
    const client = createServiceClient(ctor, address, auth);
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    try {
      const { resultJson } = await client.PeerSandbox<{ resultJson: string }>({ action: 'echo' }, { orgId: 'o', requestId: 'req-1', traceparent });
      const md = JSON.parse(resultJson) as Record<string, string>;
      // The signed token, then the call's proof: id, expiry, HMAC.
      expect(md.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+~[\w-]+~\d+~[\w-]+$/);
      expect(md['x-request-id']).toBe('req-1');
      expect(md.traceparent).toBe(traceparent);
    } finally {
      client.close();
    }
  });

  it("rejects with grpc-js's error shape: message '<code> <NAME>: <details>', code, details, metadata", async () => {
    const client = createServiceClient(ctor, address, auth);
    try {
      const err = await call(client, 'fail', 'contact 7').then(
        () => Promise.reject(new Error('the call succeeded')),
        (e: unknown) => e as grpc.ServiceError,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err.message).toBe('5 NOT_FOUND: no contact 7');
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      expect(err.details).toBe('no contact 7');
      expect(err.metadata.get('x-error-code')).toEqual(['contact_missing']);
    } finally {
      client.close();
    }
  });

  it('a call past its deadline fails with DEADLINE_EXCEEDED; an unreachable server with UNAVAILABLE', async () => {
    const client = createServiceClient(ctor, address, auth);
    const nowhere = createServiceClient(ctor, '127.0.0.1:1', auth);
    try {
      await expect(call(client, 'slow', '', {}, { deadlineMs: 50 })).rejects.toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
      await expect(call(nowhere, 'scan')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    } finally {
      client.close();
      nowhere.close();
    }
  });

  it('a value metadata refuses rejects the promise rather than throwing', async () => {
    const client = createServiceClient(ctor, address, auth);
    try {
      let promise: Promise<unknown> | undefined;
      expect(() => (promise = call(client, 'scan', '', { requestId: 'bad\nid' }))).not.toThrow();
      await expect(promise).rejects.toThrow();
    } finally {
      client.close();
    }
  });
});
