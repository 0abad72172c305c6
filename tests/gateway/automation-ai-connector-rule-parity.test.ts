import { type ClientFor, createServiceClient, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { testAuth } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { expectSameRefusal, httpIssue, rpcIssue } from '../support/rule-parity';
import { startStack, Stack } from '../support/stack';

// automation's, ai's and chatnet-connector's contract rules are stated once (@crm/validation automationRules,
// aiRules and connectorRules): the gateway's 400 and the service's INVALID_ARGUMENT to a direct caller name the
// same field with the same words.
describe('one rule, one wording: automation, ai and chatnet-connector agree with the gateway', () => {
  let stack: Stack;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let automation: ClientFor<'automation.v1.AutomationService'>;
  let ai: ClientFor<'ai.v1.AiService'>;
  let connector: ClientFor<'connector.v1.ConnectorService'>;
  const ctx = () => ({ orgId: org.user.orgId as string, userId: org.user.id as string, role: 'owner' });

  beforeAll(async () => {
    stack = await startStack({ services: ['automation', 'ai', 'chatnet-connector'] });
    org = await newOrg(client(stack.url), 'Acme');
    automation = createServiceClient(
      serviceDefinition(loadProto('automation/v1/automation.proto'), 'automation.v1.AutomationService'),
      stack.addr('automation'),
      testAuth('gateway'),
    );
    ai = createServiceClient(serviceDefinition(loadProto('ai/v1/ai.proto'), 'ai.v1.AiService'), stack.addr('ai'), testAuth('gateway'));
    connector = createServiceClient(
      serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorService'),
      stack.addr('chatnet-connector'),
      testAuth('gateway'),
    );
  }, 180_000);
  afterAll(async () => {
    automation?.close();
    ai?.close();
    connector?.close();
    await stack?.stop();
  });

  describe('automation', () => {
    it.each([10_081, -1])('PUT /settings/appointments and UpdateAppointmentSettings with %s minutes', async (minutes) => {
      const http = httpIssue(await org.owner.put('/api/v1/settings/appointments', { reminderMinutesBefore: minutes }));
      expectSameRefusal(
        http,
        await rpcIssue(automation.UpdateAppointmentSettings({ reminderMinutesBefore: minutes }, ctx())),
        'reminderMinutesBefore',
      );
      expect(http.issue?.message).toBe('must be a whole number of minutes from 0 (off) to 10080');
    });

    it('POST /automation/templates and CreateTemplate with a name of 201 characters', async () => {
      const input = { name: 'x'.repeat(201), content: 'Hello {{name}}' };
      const http = httpIssue(await org.owner.post('/api/v1/automation/templates', input));
      expectSameRefusal(http, await rpcIssue(automation.CreateTemplate({ id: '', ...input, variables: [], setVariables: false }, ctx())), 'name');
    });

    it('GET /automation/rules and ListRules with a status that does not exist', async () => {
      const http = httpIssue(await org.owner.get('/api/v1/automation/rules?status=asleep'));
      expectSameRefusal(http, await rpcIssue(automation.ListRules({ page: 1, limit: 10, status: 'asleep' }, ctx())), 'status');
      expect(http.issue?.message).toBe('must be one of draft, active, paused');
    });

    it('POST /automation/rules and CreateRule with 21 actions', async () => {
      const actions = Array.from({ length: 21 }, () => ({ type: 'add_tag', tag: 'vip' }));
      const http = httpIssue(await org.owner.post('/api/v1/automation/rules', { name: 'Too busy', trigger: { type: 'message_received' }, actions }));
      const rpc = await rpcIssue(
        automation.CreateRule(
          { name: 'Too busy', trigger: { type: 'message_received', conditions: [], keywords: [] }, actions, setActions: true },
          ctx(),
        ),
      );
      expectSameRefusal(http, rpc, 'actions');
    });

    it.each([
      ['a port out of range', { host: 'smtp.example.com', port: 70000, fromAddress: 'shop@example.com' }, 'port'],
      [
        'a sender name of 201 characters',
        { host: 'smtp.example.com', port: 587, fromAddress: 'shop@example.com', fromName: 'n'.repeat(201) },
        'fromName',
      ],
    ])('PUT /settings/email and UpdateEmailChannel with %s', async (_what, input, field) => {
      const http = httpIssue(await org.owner.put('/api/v1/settings/email', input));
      expectSameRefusal(http, await rpcIssue(automation.UpdateEmailChannel(input, ctx())), field);
    });
  });

  describe('ai', () => {
    it.each([
      ['a model name of 201 characters', { model: 'm'.repeat(201) }, 'model'],
      ['a model name with a space', { model: 'gpt 4' }, 'model'],
      ['a daily quota of 0', { dailyQuota: 0 }, 'dailyQuota'],
      ['a provider that does not exist', { provider: 'skynet' }, 'provider'],
    ])('PUT /ai/config and UpdateConfig with %s', async (_what, input, field) => {
      expectSameRefusal(httpIssue(await org.owner.put('/api/v1/ai/config', input)), await rpcIssue(ai.UpdateConfig(input, ctx())), field);
    });

    it.each([
      ['an API key with a space', { apiKey: 'sk live key' }, 'apiKey'],
      ['a base URL with credentials', { baseUrl: 'https://user:pass@llm.example.com/v1' }, 'baseUrl'],
      ['a base URL that is not http(s)', { baseUrl: 'ftp://llm.example.com' }, 'baseUrl'],
    ])('PUT /ai/providers/openai and UpdateProvider with %s', async (_what, input, field) => {
      const http = httpIssue(await org.owner.put('/api/v1/ai/providers/openai', input));
      expectSameRefusal(http, await rpcIssue(ai.UpdateProvider({ id: 'openai', ...input }, ctx())), field);
    });
  });

  describe('chatnet-connector', () => {
    it.each([
      ['a display name of 101 characters', { displayName: 'd'.repeat(101) }, 'displayName'],
      ['a proxy URL with an ftp scheme', { displayName: 'Line', proxyUrl: 'ftp://proxy.example.com:21' }, 'proxyUrl'],
      ['a proxy URL with a path', { displayName: 'Line', proxyUrl: 'http://proxy.example.com:8080/x' }, 'proxyUrl'],
      ['a proxy URL of 2001 characters', { displayName: 'Line', proxyUrl: `http://${'p'.repeat(1994)}.com` }, 'proxyUrl'],
    ])('POST /chatnet-accounts and CreateAccount with %s', async (_what, input, field) => {
      expectSameRefusal(
        httpIssue(await org.owner.post('/api/v1/chatnet-accounts', input)),
        await rpcIssue(connector.CreateAccount(input, ctx())),
        field,
      );
    });

    it('GET /chatnet-accounts and ListAccounts with a status that does not exist', async () => {
      const http = httpIssue(await org.owner.get('/api/v1/chatnet-accounts?status=asleep'));
      expectSameRefusal(http, await rpcIssue(connector.ListAccounts({ status: 'asleep' }, ctx())), 'status');
    });
  });
});
