import { type ClientFor, createServiceClient, loadProto, serviceDefinition, status } from '@crm/grpc-kit';
import { testAuth } from '@crm/testing';
import { client, email, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { startReceiver, type Receiver } from './support';

// Webhook settings and their delivery log are owner/admin only (settings:edit), reads included: the log
// keeps the payloads sent, and those carry customer data. The gateway refuses first; the webhooks service,
// the authority, refuses too when called directly.
describe('webhook settings are owner/admin only', () => {
  let stack: Stack;
  let owner: Client;
  let admin: Client;
  let rx: Receiver;
  let orgId: string;
  const members: Record<'agent' | 'team_lead', Client> = {} as never;
  let webhookId: string;
  let deliveryId: string;
  let rpc: ClientFor<'webhooks.v1.WebhooksService'>;

  async function member(role: string): Promise<Client> {
    const address = email(role);
    const created = await owner.post('/api/v1/users', { email: address, fullName: `${role} user`, role, password: 'member password 1' });
    expect(created.status).toBe(201);
    const login = await client(stack.url).post('/api/v1/auth/login', { email: address, password: 'member password 1' });
    return client(stack.url).as(login.body.token);
  }

  beforeAll(async () => {
    stack = await startStack({ services: ['webhooks'], serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' } } });
    rx = await startReceiver();
    const org = await newOrg(client(stack.url), 'Acme');
    owner = org.owner;
    orgId = org.user.orgId;
    admin = await member('admin');
    members.agent = await member('agent');
    members.team_lead = await member('team_lead');
    const created = await owner.post('/api/v1/webhook-settings', { url: rx.url('/hook'), events: ['contact.created'] });
    expect(created.status).toBe(201);
    webhookId = created.body.id;
    const sent = await owner.post(`/api/v1/webhook-settings/${webhookId}/test`);
    expect(sent.status).toBe(200);
    deliveryId = sent.body.deliveryId;
    rpc = createServiceClient(
      serviceDefinition(loadProto('webhooks/v1/webhooks.proto'), 'webhooks.v1.WebhooksService'),
      stack.addr('webhooks'),
      testAuth('gateway'),
    );
  });
  afterAll(async () => {
    rpc?.close();
    await rx?.close();
    await stack?.stop();
  });

  const routes = () => [
    ['GET', '/api/v1/webhook-settings'],
    ['GET', '/api/v1/webhook-settings/event-types'],
    ['GET', `/api/v1/webhook-settings/${webhookId}`],
    ['GET', `/api/v1/webhook-settings/${webhookId}/deliveries`],
    ['POST', '/api/v1/webhook-settings'],
    ['PUT', `/api/v1/webhook-settings/${webhookId}`],
    ['DELETE', `/api/v1/webhook-settings/${webhookId}`],
    ['POST', `/api/v1/webhook-settings/${webhookId}/test`],
    ['POST', `/api/v1/webhook-settings/deliveries/${deliveryId}/redeliver`],
  ];

  async function call(c: Client, method: string, path: string) {
    if (method === 'GET') return c.get(path);
    if (method === 'DELETE') return c.del(path);
    const payload = { url: rx.url('/other'), events: ['contact.created'] };
    return method === 'POST' ? c.post(path, payload) : c.put(path, payload);
  }

  it.each(['agent', 'team_lead'] as const)('a %s gets 403 forbidden on every webhook-settings route, reads included', async (role) => {
    for (const [method, path] of routes()) {
      const res = await call(members[role], method, path);
      expect({ route: `${method} ${path}`, status: res.status, code: res.body?.error?.code }).toEqual({
        route: `${method} ${path}`,
        status: 403,
        code: 'forbidden',
      });
    }
    // Nothing changed behind the refusals.
    expect((await owner.get(`/api/v1/webhook-settings/${webhookId}`)).body.url).toBe(rx.url('/hook'));
  });

  it('an admin and the owner read the list, one webhook, the event types and the delivery log', async () => {
    for (const c of [admin, owner]) {
      expect((await c.get('/api/v1/webhook-settings')).body).toHaveLength(1);
      expect((await c.get(`/api/v1/webhook-settings/${webhookId}`)).status).toBe(200);
      expect((await c.get('/api/v1/webhook-settings/event-types')).status).toBe(200);
      const log = await c.get(`/api/v1/webhook-settings/${webhookId}/deliveries`);
      expect(log.status).toBe(200);
      expect(log.body.data.map((d: { id: string }) => d.id)).toContain(deliveryId);
    }
  });

  it('the webhooks service itself refuses reads to agents and team leads (PERMISSION_DENIED), and serves admins', async () => {
    for (const role of ['agent', 'team_lead']) {
      const ctx = { orgId, userId: '00000000-0000-4000-8000-000000000001', role };
      for (const [method, req] of [
        ['ListWebhooks', {}],
        ['GetWebhook', { id: webhookId }],
        ['ListDeliveries', { webhookId, page: 1, limit: 10 }],
        ['ListEventTypes', {}],
      ] as const) {
        // Several methods from one table: the table, not the types, pairs each with its request.
        const call = (rpc as unknown as Record<string, (req: object, ctx: object) => Promise<unknown>>)[method];
        await expect(call(req, ctx)).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
      }
    }
    const asAdmin = { orgId, userId: '00000000-0000-4000-8000-000000000002', role: 'admin' };
    expect((await rpc.ListDeliveries<{ data: unknown[] }>({ webhookId, page: 1, limit: 10 }, asAdmin)).data.length).toBeGreaterThan(0);
  });
});
