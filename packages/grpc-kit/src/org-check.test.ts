import { randomBytes } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { createLogger } from '@crm/logger';
import { createServiceClient } from './client';
import type { CallContext } from './context';
import { devInternalAuth } from './internal-auth';
import { isOrgFree } from './org-free';
import { loadProto, serviceDefinition } from './proto';
import { GrpcServer } from './server';

// The server wrapper checks the org once per call (issue #14): a method acting inside an org is refused without
// one before its handler runs; an org-free method (PeerRelease) is served without one.
describe('GrpcServer org check', () => {
  const auth = devInternalAuth('connector', randomBytes(32).toString('hex'));
  const ctor = serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorPeerService');
  const seen: { method: string; orgId: string }[] = [];
  let server: GrpcServer;
  let port: number;

  beforeAll(async () => {
    const record = (method: string) => async (_req: unknown, ctx: CallContext) => {
      seen.push({ method, orgId: ctx.orgId });
      return {};
    };
    const handlers = {
      PeerLookupPhone: record('PeerLookupPhone'),
      PeerRecall: record('PeerRecall'),
      PeerReact: record('PeerReact'),
      PeerFindUser: record('PeerFindUser'),
      PeerSendFriendRequest: record('PeerSendFriendRequest'),
      PeerMarkSeen: record('PeerMarkSeen'),
      PeerSend: record('PeerSend'),
      PeerSandbox: async (_req: unknown, ctx: CallContext) => ({ resultJson: JSON.stringify({ orgId: ctx.orgId }) }),
      PeerRelease: async (_req: unknown, ctx: CallContext) => {
        seen.push({ method: 'PeerRelease', orgId: ctx.orgId });
        return { ok: true, message: '' };
      },
    };
    server = new GrpcServer(createLogger('test', 'silent'), auth).add(ctor, handlers);
    port = await server.listen('127.0.0.1', 0);
  });
  afterAll(() => server.stop(100));
  beforeEach(() => {
    seen.length = 0;
  });

  it('refuses a method that needs an org when the call names none, before the handler runs', async () => {
    const client = createServiceClient(ctor, `127.0.0.1:${port}`, auth);
    try {
      const call = client.PeerSandbox({ accountId: 'a', action: 'scan', payloadJson: '{}' }, { requestId: 'r1' });
      await expect(call).rejects.toMatchObject({ code: status.UNAUTHENTICATED, details: 'No organization in call metadata' });
      await expect(client.PeerMarkSeen({ accountId: 'a' }, { orgId: '' })).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
      expect(seen).toEqual([]);
    } finally {
      client.close();
    }
  });

  it('passes the org to a method that needs one when the call names it', async () => {
    const client = createServiceClient(ctor, `127.0.0.1:${port}`, auth);
    try {
      const res = await client.PeerSandbox<{ resultJson: string }>({ accountId: 'a', action: 'scan', payloadJson: '{}' }, { orgId: 'org-1' });
      expect(JSON.parse(res.resultJson)).toEqual({ orgId: 'org-1' });
    } finally {
      client.close();
    }
  });

  it('serves an org-free method without an org', async () => {
    expect(isOrgFree('connector.v1.ConnectorPeerService/PeerRelease')).toBe(true);
    expect(isOrgFree('connector.v1.ConnectorPeerService/PeerSandbox')).toBe(false);
    const client = createServiceClient(ctor, `127.0.0.1:${port}`, auth);
    try {
      await expect(client.PeerRelease<{ ok: boolean }>({ accountId: 'a', restart: false })).resolves.toMatchObject({ ok: true });
      expect(seen).toEqual([{ method: 'PeerRelease', orgId: '' }]);
    } finally {
      client.close();
    }
  });
});
