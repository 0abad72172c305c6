import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { createServiceClient, devInternalAuth, loadProto, type ServiceName as GrpcServiceName, serviceDefinition, status } from '@crm/grpc-kit';
import { testAuth } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { startStack, Stack, type ServiceName } from '../support/stack';

/**
 * Services trust only what is signed: a call straight to a service's port with the old trusted metadata
 * (x-org-id, x-user-id, x-role), with a token from another deployment, or with one meant for another
 * service is refused before any handler runs. The same call signed by the gateway's key works.
 */
const TARGETS: { name: ServiceName; proto: string; service: GrpcServiceName; method: string }[] = [
  { name: 'identity', proto: 'identity/v1/identity.proto', service: 'identity.v1.IdentityService', method: 'ListUsers' },
  { name: 'crm', proto: 'crm/v1/crm.proto', service: 'crm.v1.CrmService', method: 'ListContacts' },
  { name: 'messaging', proto: 'messaging/v1/messaging.proto', service: 'messaging.v1.MessagingService', method: 'ListConversations' },
  { name: 'chatnet-connector', proto: 'connector/v1/connector.proto', service: 'connector.v1.ConnectorService', method: 'ListAccounts' },
  { name: 'automation', proto: 'automation/v1/automation.proto', service: 'automation.v1.AutomationService', method: 'ListRules' },
  { name: 'ai', proto: 'ai/v1/ai.proto', service: 'ai.v1.AiService', method: 'GetConfig' },
  { name: 'webhooks', proto: 'webhooks/v1/webhooks.proto', service: 'webhooks.v1.WebhooksService', method: 'ListWebhooks' },
];

/** One unary call with exactly the metadata given: what an attacker on the internal network can send. */
function rawCall(address: string, target: (typeof TARGETS)[number], md: grpc.Metadata): Promise<{ code: number; res?: unknown }> {
  const ctor = serviceDefinition(loadProto(target.proto), target.service);
  const c = new ctor(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & Record<string, Function>;
  return new Promise((resolve) => {
    c[target.method]({ page: 1, limit: 10 }, md, { deadline: new Date(Date.now() + 5000) }, (err: grpc.ServiceError | null, res: unknown) => {
      c.close();
      resolve(err ? { code: err.code } : { code: status.OK, res });
    });
  });
}

describe('internal credential: services trust only signed calls', () => {
  let stack: Stack;
  let owner: { orgId: string; id: string; role: string };

  beforeAll(async () => {
    stack = await startStack({ services: TARGETS.map((t) => t.name) });
    const org = await newOrg(client(stack.url), 'Forgery Target');
    owner = { orgId: org.user.orgId, id: org.user.id, role: 'owner' };
  }, 120_000);
  afterAll(() => stack?.stop());

  it.each(TARGETS)('$name refuses forged org metadata without a credential (UNAUTHENTICATED)', async (target) => {
    const md = new grpc.Metadata();
    md.set('x-org-id', owner.orgId);
    md.set('x-user-id', owner.id);
    md.set('x-role', 'owner');
    expect((await rawCall(stack.addr(target.name), target, md)).code).toBe(status.UNAUTHENTICATED);
  });

  it.each(TARGETS)('$name refuses a token signed by another deployment, or meant for another service', async (target) => {
    const ctx = { orgId: owner.orgId, userId: owner.id, role: 'owner', requestId: 'forged' };
    const stranger = devInternalAuth('gateway', randomBytes(32).toString('hex'));
    const forged = new grpc.Metadata();
    forged.set('authorization', `Bearer ${stranger.sign(ctx, `${target.service}/${target.method}`)}`);
    expect((await rawCall(stack.addr(target.name), target, forged)).code).toBe(status.UNAUTHENTICATED);

    const elsewhere = new grpc.Metadata();
    const otherMethod = target.name === 'crm' ? 'identity.v1.IdentityService/ListUsers' : 'crm.v1.CrmService/ListContacts';
    elsewhere.set('authorization', `Bearer ${testAuth('gateway').sign(ctx, otherMethod)}`);
    expect((await rawCall(stack.addr(target.name), target, elsewhere)).code).toBe(status.UNAUTHENTICATED);
  });

  it.each(TARGETS)('$name answers the same call signed by the gateway', async (target) => {
    const rpc = createServiceClient(serviceDefinition(loadProto(target.proto), target.service), stack.addr(target.name), testAuth('gateway'));
    // One list method per service, picked by name: the table, not the types, says which.
    const call = (rpc as unknown as Record<string, (req: object, ctx: object) => Promise<unknown>>)[target.method];
    try {
      await expect(call({ page: 1, limit: 10 }, { orgId: owner.orgId, userId: owner.id, role: 'owner', requestId: 'signed' })).resolves.toBeDefined();
    } finally {
      rpc.close();
    }
  });

  it('a service credential reaches only the methods its policy lists (PERMISSION_DENIED otherwise)', async () => {
    const identity = TARGETS[0];
    const asWebhooks = createServiceClient(
      serviceDefinition(loadProto(identity.proto), 'identity.v1.IdentityService'),
      stack.addr('identity'),
      testAuth('webhooks'),
    );
    const asCrm = createServiceClient(
      serviceDefinition(loadProto(identity.proto), 'identity.v1.IdentityService'),
      stack.addr('identity'),
      testAuth('crm'),
    );
    try {
      await expect(asWebhooks.ListUsers({ page: 1, limit: 10 }, { orgId: owner.orgId })).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
      // crm lists users for the request it serves (analytics): the gateway's credential for it travels as the origin.
      const origin = testAuth('gateway')
        .sign({ orgId: owner.orgId, userId: owner.id, role: 'owner' }, 'crm.v1.AnalyticsService/TeamPerformance')
        .split('~')[0];
      await expect(asCrm.ListUsers({ page: 1, limit: 10 }, { orgId: owner.orgId, origin })).resolves.toMatchObject({
        data: [expect.objectContaining({ id: owner.id })],
      });
      // crm may list users, but not create them, whatever role it claims.
      await expect(
        asCrm.CreateUser({ email: 'x@example.test', fullName: 'X', role: 'owner' }, { orgId: owner.orgId, userId: owner.id, role: 'owner' }),
      ).rejects.toMatchObject({
        code: status.PERMISSION_DENIED,
      });
    } finally {
      asWebhooks.close();
      asCrm.close();
    }
  });

  it("the connectors' peer service answers only connector instances, not the gateway", async () => {
    const connector = TARGETS[3];
    const peer = createServiceClient(
      serviceDefinition(loadProto(connector.proto), 'connector.v1.ConnectorPeerService'),
      stack.addr('chatnet-connector'),
      testAuth('gateway'),
    );
    try {
      // The gateway itself may not use the peer service: only connector instances forward to each other.
      await expect(peer.PeerRelease({ accountId: owner.id, restart: false }, { orgId: owner.orgId })).rejects.toMatchObject({
        code: status.PERMISSION_DENIED,
      });
    } finally {
      peer.close();
    }
  });
});

// A service refusing the gateway's credential (keys that do not match, or an address pointing at another deployment's
// service, as when a test stack once reached the services `npm start` runs) is the deployment's fault, never the
// user's: 502, not a 401 that makes the settings pages sign a valid user out.
describe('a backend refusing the gateway credential', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ gatewayEnv: { INTERNAL_AUTH_SEED: randomBytes(32).toString('hex') } });
  }, 60_000);
  afterAll(() => stack?.stop());

  it('answers 502 bad_gateway', async () => {
    const res = await fetch(`${stack.url}/api/v1/setup/status`);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_gateway');
  });
});
