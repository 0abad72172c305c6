import { auditEntries, auditEntryFor } from '../support/audit';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Webhook changes reach identity's audit log through the webhooks service's outbox and the bus, in the same
// transaction as the change, and never carry the signing secret or a token in the URL's query.
describe('audit log: webhook settings', () => {
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;
  const secret = 'whsec_' + Buffer.from('a'.repeat(32)).toString('base64');
  const url = 'http://127.0.0.1:9/hooks/crm?token=sup3r-s3cret-t0ken';

  beforeAll(async () => {
    stack = await startStack({ services: ['webhooks'], serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' } } });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
  });
  afterAll(() => stack?.stop());

  it('webhook.created, webhook.updated and webhook.deleted arrive with actor, resource and what changed, never a secret', async () => {
    const created = await acme.owner.post('/api/v1/webhook-settings', { url, events: ['contact.created'] });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const generated = created.body.secret as string;

    const c = await auditEntryFor(acme.owner, 'webhook.created', id);
    expect(c).toEqual(
      expect.objectContaining({
        actorId: acme.user.id,
        actorType: 'user',
        resourceType: 'webhook',
        resourceId: id,
        details: { url: 'http://127.0.0.1:9/hooks/crm', events: ['contact.created'], secretGiven: false },
        requestId: expect.any(String),
        ip: expect.any(String),
      }),
    );

    const updated = await acme.owner.put(`/api/v1/webhook-settings/${id}`, {
      events: ['contact.created', 'message.received'],
      secret,
      active: false,
    });
    expect(updated.status).toBe(200);
    const u = await auditEntryFor(acme.owner, 'webhook.updated', id);
    expect(u.details).toEqual({
      url: 'http://127.0.0.1:9/hooks/crm',
      events: { from: ['contact.created'], to: ['contact.created', 'message.received'] },
      active: { from: true, to: false },
      secretChanged: true,
    });

    expect((await acme.owner.del(`/api/v1/webhook-settings/${id}`)).status).toBe(204);
    const d = await auditEntryFor(acme.owner, 'webhook.deleted', id);
    expect(d.details).toEqual({ url: 'http://127.0.0.1:9/hooks/crm', events: ['contact.created', 'message.received'] });

    const json = JSON.stringify(await auditEntries(acme.owner, 'webhook.*'));
    expect(json).not.toContain(generated);
    expect(json).not.toContain(secret);
    expect(json).not.toContain('sup3r-s3cret-t0ken');
  });

  it('a refused change records nothing: an invalid update (400) and another org’s webhook (404)', async () => {
    const created = await acme.owner.post('/api/v1/webhook-settings', { url, events: ['contact.created'] });
    const id = created.body.id;
    await auditEntryFor(acme.owner, 'webhook.created', id);
    expect((await acme.owner.put(`/api/v1/webhook-settings/${id}`, { events: ['no.such.event'] })).status).toBe(400);
    expect((await globex.owner.del(`/api/v1/webhook-settings/${id}`)).status).toBe(404);
    // A later change of the same webhook arrives; the refused ones never did.
    expect((await acme.owner.put(`/api/v1/webhook-settings/${id}`, { active: false })).status).toBe(200);
    await auditEntryFor(acme.owner, 'webhook.updated', id);
    const mine = (await auditEntries(acme.owner, 'webhook.*')).filter((e) => e.resourceId === id);
    expect(mine.map((e) => e.action)).toEqual(['webhook.updated', 'webhook.created']);
    expect(await auditEntries(globex.owner, 'webhook.*')).toEqual([]);
  });
});
