import { eventually } from '@crm/testing';
import { Client } from '../support/http';
import { addUser, CrmStack, listenEvents, Org, publicClient, startCrmStack } from './crm-support';

// Response times from a real chat: the sandbox network delivers a customer's message, messaging stores it and
// publishes message.received, a team lead answers through the API (message.sent with her user id), the owner
// archives the conversation (conversation.archived). The expected numbers are computed from the timestamps the
// services stored and published, never from the test's own clock.
describe('analytics from a real chat: sandbox network → connector → messaging → crm read model', () => {
  let crm: CrmStack;
  let acme: Org;
  let owner: Client;
  let lead: { id: string; as: Client };
  let events: Awaited<ReturnType<typeof listenEvents>>;

  beforeAll(async () => {
    crm = await startCrmStack({
      services: ['chatnet-connector', 'messaging'],
      serviceEnv: { 'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' } },
    });
    events = await listenEvents(crm.exchange, ['conversation.archived']);
    acme = await crm.newOrg('Acme');
    owner = acme.owner;
    lead = await addUser(crm.api, owner, 'team_lead');
  }, 90_000);
  afterAll(async () => {
    await events?.close();
    await crm?.stop();
  });

  it('a customer message answered by a team lead and archived gives a first response and a resolution', async () => {
    const account = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${account}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${account}/scan`, {})).body.status).toBe('connected');

    expect(
      (await owner.post(`/sandbox/accounts/${account}/inbound`, { fromUid: 'uid-mai', fromName: 'Mai Tran', content: 'Do you ship to Hanoi?' }))
        .status,
    ).toBe(200);
    const conv = await eventually(async () => (await owner.get('/api/v1/conversations')).body.data[0]);
    // A send through the public API has no person behind it: it answers nothing, the team lead's reply does.
    const pub = await publicClient(crm.api, owner);
    expect(
      (await pub.post('/api/public/messages/send', { chatnetAccountId: account, threadId: 'uid-mai', content: 'Thanks, we got your message' }))
        .status,
    ).toBe(200);
    const replied = await lead.as.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Yes, in 2 days' });
    expect(replied.status).toBe(201);
    expect((await owner.post(`/api/v1/conversations/${conv.id}/archive`)).status).toBe(200);

    const messages = (await owner.get(`/api/v1/conversations/${conv.id}`)).body.messages;
    const inbound = messages.find((m: any) => m.isFromChatnet);
    const reply = messages.find((m: any) => m.content === 'Yes, in 2 days');
    const archived = await eventually(async () => events.find((e) => e.type === 'conversation.archived' && e.data.id === conv.id));
    const first = Date.parse(inbound.sentAt);
    const responseSeconds = (Date.parse(reply.sentAt) - first) / 1000;
    const resolutionSeconds = (Date.parse(archived.occurredAt) - first) / 1000;

    const from = inbound.sentAt.slice(0, 10);
    const to = archived.occurredAt.slice(0, 10);
    const stats = await eventually(async () => {
      const body = (await owner.get(`/api/v1/analytics/response-time?dateFrom=${from}&dateTo=${to}`)).body;
      return body.resolutions === 1 && body;
    }, 15_000);
    expect(stats).toEqual(
      expect.objectContaining({
        responses: 1,
        firstResponses: 1,
        averageFirstResponseTime: responseSeconds,
        medianResponseTime: responseSeconds,
        percentile99: responseSeconds,
        averageResolutionTime: resolutionSeconds,
      }),
    );
    const team = (await owner.get(`/api/v1/analytics/team-performance?dateFrom=${from}&dateTo=${to}`)).body.team;
    expect(team.find((m: any) => m.userId === lead.id)).toEqual(
      expect.objectContaining({ messagesReplied: 1, averageResponseTime: responseSeconds, responses: 1 }),
    );
    expect(team.find((m: any) => m.userId === acme.user.id)).toEqual(
      expect.objectContaining({ messagesReplied: 0, averageResponseTime: 0, responses: 0 }),
    );
  });
});
