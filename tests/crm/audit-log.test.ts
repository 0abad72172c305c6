import { freePort } from '@crm/testing';
import { auditEntries, auditEntryFor } from '../support/audit';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Deleting a contact or a customer list reaches identity's audit log through crm's outbox and the bus,
// recorded in the transaction of the delete: a refused delete records nothing.
describe('audit log: crm deletes', () => {
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;

  beforeAll(async () => {
    // messaging is an address where nothing listens: these tests never need it.
    stack = await startStack({ services: ['crm'], serviceEnv: { crm: { MESSAGING_ADDR: `127.0.0.1:${await freePort()}` } } });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
  });
  afterAll(() => stack?.stop());

  it('contact.deleted names the actor and who was deleted', async () => {
    const created = await acme.owner.post('/api/v1/contacts', { name: 'Nguyễn Văn An', phone: '0912 000 001' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    // Another org cannot delete it (404), and that records nothing.
    expect((await globex.owner.del(`/api/v1/contacts/${id}`)).status).toBe(404);
    expect((await acme.owner.del(`/api/v1/contacts/${id}`)).status).toBe(204);

    const entry = await auditEntryFor(acme.owner, 'contact.deleted', id);
    expect(entry).toEqual(
      expect.objectContaining({
        actorId: acme.user.id,
        actorType: 'user',
        resourceType: 'contact',
        details: { name: 'Nguyễn Văn An', phone: created.body.phone },
        requestId: expect.any(String),
        ip: expect.any(String),
      }),
    );
    expect(await auditEntries(acme.owner, 'contact.deleted')).toHaveLength(1);
    expect(await auditEntries(globex.owner, 'contact.deleted')).toEqual([]);
  });

  it('customer_list.deleted names the list', async () => {
    const list = await acme.owner.post('/api/v1/customer-lists', { name: 'Hot leads', description: 'd', criteria: { filters: [] } });
    expect(list.status).toBe(201);
    expect((await globex.owner.del(`/api/v1/customer-lists/${list.body.id}`)).status).toBe(404);
    expect((await acme.owner.del(`/api/v1/customer-lists/${list.body.id}`)).status).toBe(204);
    const entry = await auditEntryFor(acme.owner, 'customer_list.deleted', list.body.id);
    expect(entry).toEqual(expect.objectContaining({ actorId: acme.user.id, resourceType: 'customer_list', details: { name: 'Hot leads' } }));
    expect((await acme.owner.del(`/api/v1/customer-lists/${list.body.id}`)).status).toBe(404);
    expect(await auditEntries(acme.owner, 'customer_list.deleted')).toHaveLength(1);
  });
});
