import { randomBytes } from 'node:crypto';
import { createLogger } from '@crm/logger';
import { createServiceClient } from './client';
import { devInternalAuth } from './internal-auth';
import { loadProto, serviceDefinition } from './proto';
import { GrpcServer } from './server';

// With GRPC_LB_POLICY=round_robin clients balance over every address their target resolves to (a headless
// Service's pods); pick_first, the default, sends every call to the first address.
describe('createServiceClient load balancing', () => {
  const auth = devInternalAuth('connector', randomBytes(32).toString('hex'));
  const ctor = serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorPeerService');
  const servers: GrpcServer[] = [];
  const ports: number[] = [];

  beforeAll(async () => {
    for (const name of ['first', 'second']) {
      // Every method of the service needs a handler; only PeerSandbox is called (it says which server answered).
      const unused = async () => ({});
      const handlers = {
        PeerLookupPhone: unused,
        PeerFindUser: unused,
        PeerSendFriendRequest: unused,
        PeerRecall: unused,
        PeerReact: unused,
        PeerMarkSeen: unused,
        PeerRelease: unused,
        PeerSend: unused,
        PeerSandbox: async () => ({ resultJson: name }),
      };
      const server = new GrpcServer(createLogger('test', 'silent'), auth).add(ctor, handlers);
      ports.push(await server.listen('127.0.0.1', 0));
      servers.push(server);
    }
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop(100)));
  });

  it('spreads calls over both addresses of a target that resolves to two servers', async () => {
    const client = createServiceClient(ctor, `ipv4:127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}`, auth, 5000, 'round_robin');
    const ask = async () =>
      (await client.PeerSandbox<{ resultJson: string }>({ accountId: 'a', action: 'scan', payloadJson: '{}' }, { orgId: 'o' })).resultJson;
    try {
      // Until both connections are ready, round-robin uses the ready one; give the second a moment.
      for (let i = 0; i < 20; i++) await ask();
      const counts: Record<string, number> = {};
      for (let i = 0; i < 20; i++) {
        const name = await ask();
        counts[name] = (counts[name] ?? 0) + 1;
      }
      expect(counts).toEqual({ first: 10, second: 10 });
    } finally {
      client.close();
    }
  });

  it('with pick_first (the default) every call goes to one address', async () => {
    const client = createServiceClient(ctor, `ipv4:127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}`, auth);
    try {
      const names = new Set<string>();
      for (let i = 0; i < 20; i++)
        names.add(
          (await client.PeerSandbox<{ resultJson: string }>({ accountId: 'a', action: 'scan', payloadJson: '{}' }, { orgId: 'o' })).resultJson,
        );
      expect(names.size).toBe(1);
    } finally {
      client.close();
    }
  });
});
