import { type ClientFor, createServiceClient, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { testAuth } from '@crm/testing';
import { client, email, newOrg } from '../support/http';
import { expectSameRefusal, httpIssue, rpcIssue } from '../support/rule-parity';
import { startStack, Stack } from '../support/stack';

// identity's and the webhooks service's contract rules are stated once (@crm/validation identityRules and
// webhookRules): the gateway's 400 and the service's INVALID_ARGUMENT to a direct caller name the same field
// with the same words.
describe('one rule, one wording: identity and webhooks agree with the gateway', () => {
  let stack: Stack;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let identity: ClientFor<'identity.v1.IdentityService'>;
  let webhooks: ClientFor<'webhooks.v1.WebhooksService'>;
  const ctx = () => ({ orgId: org.user.orgId as string, userId: org.user.id as string, role: 'owner' });

  beforeAll(async () => {
    stack = await startStack({ services: ['webhooks'] });
    org = await newOrg(client(stack.url), 'Acme');
    identity = createServiceClient(
      serviceDefinition(loadProto('identity/v1/identity.proto'), 'identity.v1.IdentityService'),
      stack.addr('identity'),
      testAuth('gateway'),
    );
    webhooks = createServiceClient(
      serviceDefinition(loadProto('webhooks/v1/webhooks.proto'), 'webhooks.v1.WebhooksService'),
      stack.addr('webhooks'),
      testAuth('gateway'),
    );
  }, 120_000);
  afterAll(async () => {
    identity?.close();
    webhooks?.close();
    await stack?.stop();
  });

  it.each([
    ['a password of 257 characters', { password: 'x'.repeat(257) }, 'password'],
    ['a password of 7 characters', { password: 'x'.repeat(7) }, 'password'],
    ['a role that does not exist', { role: 'boss' }, 'role'],
    ['a phone of 41 characters', { phone: '1'.repeat(41) }, 'phone'],
  ])('POST /users and CreateUser with %s', async (_what, extra, field) => {
    const input = { email: email('rule'), fullName: 'Rule Person', role: 'agent', ...extra };
    expectSameRefusal(httpIssue(await org.owner.post('/api/v1/users', input)), await rpcIssue(identity.CreateUser(input, ctx())), field);
  });

  it('PUT /users/:id and UpdateUser with a status that does not exist', async () => {
    const made = await org.owner.post('/api/v1/users', {
      email: email('agent'),
      fullName: 'Agent',
      role: 'agent',
      password: 'correct horse battery',
    });
    expect(made.status).toBe(201);
    const http = httpIssue(await org.owner.put(`/api/v1/users/${made.body.id}`, { status: 'asleep' }));
    expectSameRefusal(http, await rpcIssue(identity.UpdateUser({ id: made.body.id, status: 'asleep' }, ctx())), 'status');
    expect(http.issue?.message).toBe('must be one of active, inactive');
  });

  it('POST /teams and CreateTeam with a description of 1001 characters', async () => {
    const input = { name: `T${Date.now()}`, description: 'x'.repeat(1001) };
    expectSameRefusal(
      httpIssue(await org.owner.post('/api/v1/teams', input)),
      await rpcIssue(identity.CreateTeam({ ...input, setMembers: true }, ctx())),
      'description',
    );
  });

  it('GET /audit-log and ListAuditLog with an action filter of 101 characters', async () => {
    const action = `a${'.b'.repeat(50)}`;
    const http = httpIssue(await org.owner.get(`/api/v1/audit-log?action=${action}`));
    expectSameRefusal(http, await rpcIssue(identity.ListAuditLog({ page: 1, limit: 10, action }, ctx())), 'action');
  });

  it('POST /webhook-settings and CreateWebhook with 51 events', async () => {
    const input = { url: 'https://hooks.invalid/x', events: Array.from({ length: 51 }, () => 'contact.created') };
    const http = httpIssue(await org.owner.post('/api/v1/webhook-settings', input));
    expectSameRefusal(http, await rpcIssue(webhooks.CreateWebhook(input, ctx())), 'events');
    expect(http.issue?.message).toBe('must list at most 50 events');
  });

  it('POST /webhook-settings and CreateWebhook with a URL of 2049 characters', async () => {
    const input = { url: `https://hooks.invalid/${'x'.repeat(2049 - 'https://hooks.invalid/'.length)}`, events: ['contact.created'] };
    expectSameRefusal(
      httpIssue(await org.owner.post('/api/v1/webhook-settings', input)),
      await rpcIssue(webhooks.CreateWebhook(input, ctx())),
      'url',
    );
  });
});
