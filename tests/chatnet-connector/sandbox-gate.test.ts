import { sandboxControlEnabled } from '../../services/chatnet-connector/src/config';
import { chatnetSandboxEnabled, sandboxRoutesEnabled } from '../../services/gateway/src/config';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { connectorClient, grpcCtx } from './support';

// Sandbox control (complete a QR scan, fake an inbound message, drop a connection…) exists only with
// CHATNET_DRIVER=sandbox outside production. Otherwise the gateway does not mount /sandbox routes at all
// (404 even without a token, where a mounted route would answer 401) and the connector refuses the RPCs.
const ACTIONS: [string, object][] = [
  ['scan', {}],
  ['inbound', { fromUid: 'u1', content: 'hi' }],
  ['seen', { seenByUid: 'u1', threadId: 'u1' }],
  ['drop', {}],
  ['friends', { friends: [] }],
  ['self', { threadId: 'u1', content: 'hi' }],
];

async function expectNoSandboxRoutes(stack: Stack, owner: Client, accountId: string) {
  for (const [action, payload] of ACTIONS) {
    const res = await owner.post(`/sandbox/accounts/${accountId}/${action}`, payload);
    expect({ action, status: res.status, message: res.body.error.message }).toEqual({
      action,
      status: 404,
      message: `No route for POST /sandbox/accounts/${accountId}/${action}`,
    });
  }
  expect((await owner.get(`/sandbox/accounts/${accountId}/sent`)).status).toBe(404);
  expect((await owner.get(`/sandbox/accounts/${accountId}/seen-by-agent`)).status).toBe(404);
  expect((await client(stack.url).post(`/sandbox/accounts/${accountId}/scan`)).status).toBe(404);
}

// A whole stack cannot run with NODE_ENV=production here: production refuses the development secrets, the
// guest broker account and password-less databases this machine's servers use. So production is checked on
// the two decisions themselves; the zca stack below shows the same decisions unmount the routes and refuse the RPCs.
describe('sandbox control in production', () => {
  it("the gateway mounts no sandbox routes, the chat network's or the social network's", () => {
    expect(sandboxRoutesEnabled({ NODE_ENV: 'production' })).toBe(false);
    expect(chatnetSandboxEnabled({ NODE_ENV: 'production', CHATNET_DRIVER: 'sandbox' })).toBe(false);
    expect(chatnetSandboxEnabled({ NODE_ENV: 'development', CHATNET_DRIVER: 'sandbox' })).toBe(true);
    expect(chatnetSandboxEnabled({ NODE_ENV: 'development', CHATNET_DRIVER: 'zca' })).toBe(false);
  });

  it('the connector refuses the sandbox RPCs', () => {
    expect(sandboxControlEnabled({ NODE_ENV: 'production', CHATNET_DRIVER: 'sandbox' })).toBe(false);
    expect(sandboxControlEnabled({ NODE_ENV: 'test', CHATNET_DRIVER: 'sandbox' })).toBe(true);
    expect(sandboxControlEnabled({ NODE_ENV: 'test', CHATNET_DRIVER: 'zca' })).toBe(false);
  });
});

describe('sandbox control with another chat-network driver (CHATNET_DRIVER=zca for gateway and connector)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ services: ['chatnet-connector'], env: { CHATNET_DRIVER: 'zca' } });
  });
  afterAll(() => stack?.stop());

  it('the gateway has no /sandbox/accounts routes (404, even without a token)', async () => {
    const { owner } = await newOrg(client(stack.url), 'Real Co');
    const created = await owner.post('/api/v1/chatnet-accounts', { displayName: 'Real line' });
    expect(created.status).toBe(201);
    await expectNoSandboxRoutes(stack, owner, created.body.id);
  });

  it('the connector refuses the sandbox RPCs (NOT_FOUND) even for the owner, while accounts work', async () => {
    const { owner, user } = await newOrg(client(stack.url), 'Real Co 2');
    const accountId = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Real line 2' })).body.id;
    const rpc = connectorClient(stack.addr('chatnet-connector'));
    try {
      await expect(rpc.SandboxScan({ id: accountId }, grpcCtx(user))).rejects.toMatchObject({
        code: 5,
        details: expect.stringContaining('Sandbox control is off'),
      });
      await expect(rpc.SandboxInbound({ id: accountId, fromUid: 'u1', content: 'hi' }, grpcCtx(user))).rejects.toMatchObject({ code: 5 });
      await expect(rpc.SandboxDrop({ id: accountId }, grpcCtx(user))).rejects.toMatchObject({ code: 5 });
      await expect(rpc.SandboxSelf({ id: accountId, threadId: 'u1', content: 'hi' }, grpcCtx(user))).rejects.toMatchObject({ code: 5 });
      await expect(rpc.SandboxSeenByAgent({ id: accountId }, grpcCtx(user))).rejects.toMatchObject({ code: 5 });
    } finally {
      rpc.close();
    }
    expect((await owner.get(`/api/v1/chatnet-accounts/${accountId}`)).status).toBe(200);
  });
});

describe('sandbox control in development and tests (the default)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ services: ['chatnet-connector'] });
  });
  afterAll(() => stack?.stop());

  it('the routes exist: 401 without a token, and an owner reaches the connector', async () => {
    expect((await client(stack.url).post('/sandbox/accounts/7d1f8a4e-0000-4000-8000-000000000000/scan')).status).toBe(401);
    const { owner } = await newOrg(client(stack.url), 'Dev Co');
    const id = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Test line' })).body.id;
    // No QR login is pending: the connector's own answer, so the call got through.
    const scan = await owner.post(`/sandbox/accounts/${id}/scan`, {});
    expect(scan.status).toBe(422);
    expect(scan.body.error.code).toBe('no_pending_login');
  });
});
