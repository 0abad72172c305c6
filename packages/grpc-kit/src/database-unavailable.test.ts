import { randomBytes } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { Pool } from 'pg';
import { createLogger } from '@crm/logger';
import type { Services } from '@crm/proto-types';
import { createServiceClient } from './client';
import { decodeRemoteError } from './errors';
import { devInternalAuth } from './internal-auth';
import { loadProto, serviceDefinition } from './proto';
import { GrpcServer } from './server';
import type { ServiceClient } from './typed';

// A handler whose database refuses connections (too many clients) or whose pool has none free in time answers
// UNAVAILABLE with a retry hint (503 + Retry-After at the gateway), not INTERNAL: the same call works once the
// database has room, and an overloaded machine is not a bug to report with an errorId. Real PostgreSQL: a role
// allowed no connections gets the server's own 53300, as max_connections would.
describe('GrpcServer: the database unavailable', () => {
  const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const role = `grpckit_noconn_${randomBytes(4).toString('hex')}`;
  const auth = devInternalAuth('connector', randomBytes(32).toString('hex'));
  const ctor = serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorPeerService');
  const admin = new Pool({ connectionString: baseUrl, max: 1 });
  const refused = new Pool({ connectionString: Object.assign(new URL(baseUrl), { username: role, password: '' }).toString(), max: 1 });
  // One connection, held by the test while a call waits for it.
  // 1 s, not less: opening the held connection itself must not time out on a loaded machine (CI beside npm start).
  const busy = new Pool({ connectionString: baseUrl, max: 1, connectionTimeoutMillis: 1000 });
  let server: GrpcServer;
  let client: ServiceClient<Services['connector.v1.ConnectorPeerService']>;

  beforeAll(async () => {
    await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 0`);
    const handlers = {
      PeerLookupPhone: async () => ({}),
      PeerRecall: async () => ({}),
      PeerReact: async () => ({}),
      PeerFindUser: async () => ({}),
      PeerSendFriendRequest: async () => ({}),
      PeerMarkSeen: async () => ({}),
      PeerSend: async () => ({}),
      PeerRelease: async () => ({ ok: true, message: '' }),
      PeerSandbox: async (req: { action: string }) => {
        if (req.action === 'refused') await refused.query('SELECT 1');
        if (req.action === 'busy') await busy.query('SELECT 1');
        if (req.action === 'bug') throw new Error('not a database error');
        return { resultJson: 'ok' };
      },
    };
    server = new GrpcServer(createLogger('test', 'silent'), auth).add(ctor, handlers);
    client = createServiceClient(ctor, `127.0.0.1:${await server.listen('127.0.0.1', 0)}`, auth);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop(100);
    await Promise.all([refused.end(), busy.end()]);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.end();
  });

  const call = (action: string) => client.PeerSandbox({ accountId: 'a', action, payloadJson: '' }, { orgId: 'org-1' }).catch((e: unknown) => e);

  it('PostgreSQL refusing the connection (53300) is UNAVAILABLE with Retry-After 1: a 503, not a 500', async () => {
    const err = (await call('refused')) as { code: number; details: string; metadata: unknown };
    expect(err).toMatchObject({ code: status.UNAVAILABLE, details: 'The service cannot reach its database right now; retry shortly' });
    expect(decodeRemoteError(err as never)).toMatchObject({ httpStatus: 503, code: 'unavailable', retryAfter: 1 });
  });

  it("the pool's wait for a free connection timing out is UNAVAILABLE too", async () => {
    const held = await busy.connect();
    try {
      expect(await call('busy')).toMatchObject({ code: status.UNAVAILABLE });
    } finally {
      held.release();
    }
    // Once the connection is free, the same call is served.
    expect(await call('busy')).toEqual({ resultJson: 'ok' });
  });

  it('any other error stays INTERNAL with an errorId', async () => {
    const err = (await call('bug')) as { code: number; details: string };
    expect(err.code).toBe(status.INTERNAL);
    expect(err.details).toMatch(/^Internal error \(errorId [0-9a-f-]{36}\)$/);
  });
});
