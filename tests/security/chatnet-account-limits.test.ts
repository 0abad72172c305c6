import { client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Each chat-network account is a live session and a QR login (issue #27 item 5): an org holds at most
// CHATNET_ACCOUNTS_MAX_PER_ORG, counted together with the insert so a burst cannot pass the limit.
describe('chat-network accounts per organization', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      services: ['chatnet-connector'],
      env: { SIGNUP_ENABLED: 'true' },
      serviceEnv: { 'chatnet-connector': { CHATNET_ACCOUNTS_MAX_PER_ORG: '3' } },
    });
  }, 60_000);
  afterAll(() => stack?.stop());

  it('six concurrent creates make three accounts; the rest are 409 account_limit_reached; a delete frees a place; other orgs are unaffected', async () => {
    const api = client(stack.url);
    const { owner } = await newOrg(api, 'Many Lines');
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => owner.post('/api/v1/chatnet-accounts', { displayName: `Line ${i}` })));
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 409);
    expect(created).toHaveLength(3);
    expect(refused).toHaveLength(3);
    for (const r of refused)
      expect(r.body.error).toEqual({
        code: 'account_limit_reached',
        message: 'This organization already has 3 chat-network accounts, the most it may hold; delete one first',
      });
    expect((await owner.get('/api/v1/chatnet-accounts')).body).toHaveLength(3);

    expect((await owner.del(`/api/v1/chatnet-accounts/${created[0].body.id}`)).status).toBe(204);
    expect((await owner.post('/api/v1/chatnet-accounts', { displayName: 'Line again' })).status).toBe(201);

    const other = await newOrg(api, 'Other Org');
    expect((await other.owner.post('/api/v1/chatnet-accounts', { displayName: 'Theirs' })).status).toBe(201);
  });
});
