import { newOrg, client, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { sleep, startReceiver, verifySignature, type Receiver } from './support';

// The real path: a contact created, changed and deleted through the gateway (crm writes the contact and its
// event in one transaction) reaches a receiver on 127.0.0.1 as signed webhooks.
describe('contact events from crm to a webhook receiver', () => {
  let stack: Stack;
  let owner: Client;
  let rx: Receiver;

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'webhooks'],
      serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s' } },
    });
    owner = (await newOrg(client(stack.url), 'Acme')).owner;
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await stack?.stop();
  });

  it('POST/PUT/DELETE /api/v1/contacts → contact.created, contact.updated, contact.deleted, signed', async () => {
    const hook = (
      await owner.post('/api/v1/webhook-settings', { url: rx.url('/crm'), events: ['contact.created', 'contact.updated', 'contact.deleted'] })
    ).body;
    const created = await owner.post('/api/v1/contacts', { name: 'Ada Lovelace', email: 'ada@example.test', status: 'lead', tags: ['vip'] });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await owner.put(`/api/v1/contacts/${id}`, { status: 'customer' })).status).toBe(200);
    expect((await owner.del(`/api/v1/contacts/${id}`)).status).toBe(204);

    const until = Date.now() + 10_000;
    while (rx.at('/crm').length < 3 && Date.now() < until) await sleep(50);
    const got = rx.at('/crm');
    expect(got.map((r) => r.json.type).sort()).toEqual(['contact.created', 'contact.deleted', 'contact.updated']);
    for (const r of got) expect(verifySignature(hook.secret, r)).toBe(true);
    const byType = Object.fromEntries(got.map((r) => [r.json.type, r.json]));
    // The public shape (fullName), never the internal name.
    expect(byType['contact.created'].data.contact).toEqual(
      expect.objectContaining({ id, fullName: 'Ada Lovelace', email: 'ada@example.test', tags: ['vip'] }),
    );
    expect(byType['contact.created'].data.contact.name).toBeUndefined();
    expect(byType['contact.updated'].data).toEqual(
      expect.objectContaining({ contact: expect.objectContaining({ id, status: 'customer' }), changes: ['status'] }),
    );
    expect(byType['contact.deleted'].data).toEqual(expect.objectContaining({ id }));
    expect(new Set(got.map((r) => r.id)).size).toBe(3);
  });

  it('a contact.* webhook carries exactly the contact GET /api/public/contacts/:id answers', async () => {
    await owner.post('/api/v1/webhook-settings', { url: rx.url('/shape'), events: ['contact.created', 'contact.updated'] });
    const key = await owner.post('/api/v1/settings/api-key/generate');
    const pub = client(stack.url).withKey(key.body.apiKey);
    const publicContact = async (id: string) => {
      const res = await pub.get(`/api/public/contacts/${id}`);
      expect(res.status).toBe(200);
      // The detail adds the contact's appointments and conversation count to the contact itself.
      const { appointments: _a, conversationCount: _c, ...contact } = res.body;
      return contact;
    };
    const delivered = async (type: string, id: string) => {
      const until = Date.now() + 10_000;
      for (;;) {
        const r = rx.at('/shape').find((x) => x.json.type === type && x.json.data.contact.id === id);
        if (r) return r.json.data;
        if (Date.now() > until) throw new Error(`no ${type} webhook for ${id}`);
        await sleep(50);
      }
    };

    // No email and no notes: the public API says null for them, and so must the webhook.
    const created = await owner.post('/api/v1/contacts', { name: 'Grace Hopper', phone: '+84911222333', status: 'lead', tags: ['navy', 'cobol'] });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const onCreate = await delivered('contact.created', id);
    const shown = await publicContact(id);
    expect(onCreate.contact).toEqual(shown);
    expect(shown).toEqual(expect.objectContaining({ fullName: 'Grace Hopper', email: null, notes: null }));

    const renamed = await pub.put(`/api/public/contacts/${id}`, { fullName: 'Rear Admiral Hopper', notes: 'compiler pioneer' });
    expect(renamed.status).toBe(200);
    const onUpdate = await delivered('contact.updated', id);
    expect(onUpdate.contact).toEqual(await publicContact(id));
    expect(onUpdate.contact).toEqual(renamed.body);
    // Changed fields under their public names too.
    expect(onUpdate.changes).toEqual(expect.arrayContaining(['fullName', 'notes']));
    expect(onUpdate.changes).not.toContain('name');
  });
});
