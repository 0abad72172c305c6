import { auditEntries, auditEntryFor } from '../support/audit';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Deleting a chat-network account reaches identity's audit log through the connector's outbox and the bus.
describe('audit log: chat-network accounts', () => {
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;

  beforeAll(async () => {
    stack = await startStack({ services: ['chatnet-connector'] });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
  });
  afterAll(() => stack?.stop());

  it('chatnet_account.deleted names the actor and the account; a refused delete records nothing', async () => {
    const created = await acme.owner.post('/api/v1/chatnet-accounts', { displayName: 'Sales line' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await globex.owner.del(`/api/v1/chatnet-accounts/${id}`)).status).toBe(404);
    expect((await acme.owner.del(`/api/v1/chatnet-accounts/${id}?purge=true`)).status).toBe(204);

    const entry = await auditEntryFor(acme.owner, 'chatnet_account.deleted', id);
    expect(entry).toEqual(
      expect.objectContaining({
        actorId: acme.user.id,
        actorType: 'user',
        resourceType: 'chatnet_account',
        details: { displayName: 'Sales line', chatnetUid: null, status: expect.any(String), purged: true },
        requestId: expect.any(String),
      }),
    );
    expect((await acme.owner.del(`/api/v1/chatnet-accounts/${id}`)).status).toBe(404);
    expect(await auditEntries(acme.owner, 'chatnet_account.deleted')).toHaveLength(1);
    expect(await auditEntries(globex.owner, 'chatnet_account.deleted')).toEqual([]);
  });
});
