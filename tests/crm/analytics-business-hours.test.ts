import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { messageData } from '../support/event-data';
import { fakeConnector } from '../messaging/support';
import { addUser, CrmStack, Org, publishEvent, startCrmStack } from './crm-support';

// Response times counting open hours only (issue #29 item 10): GET /analytics/response-time?businessHours=true leaves
// closed hours out, each conversation in the business hours of its account (its own, else the org's), as messaging
// keeps them. Events stand in for messaging's with chosen times; 2024-03-01 is a Friday.
describe('GET /analytics/response-time?businessHours=true', () => {
  let crm: CrmStack;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let acme: Org;
  let globex: Org;
  let agent: { id: string; as: Client };
  let lead: { id: string; as: Client };
  let nightAccount: string;
  const dayAccount = randomUUID();
  const [slow, fast] = [randomUUID(), randomUUID()];
  const at = (d: string, hhmm: string) => `${d}T${hhmm}:00.000Z`;

  const publish = (type: string, orgId: string, data: unknown, occurredAt?: string) =>
    publishEvent(crm.exchange, type, orgId, data, randomUUID(), occurredAt);
  const conversation = (orgId: string, id: string, accountId: string) =>
    publish('conversation.created', orgId, { id, contactId: randomUUID(), chatnetAccountId: accountId, type: 'user', threadId: `t-${id}` });
  const message = (
    type: 'message.received' | 'message.sent',
    orgId: string,
    conversationId: string,
    accountId: string,
    sentAt: string,
    extra: object = {},
  ) =>
    publish(
      type,
      orgId,
      messageData(type, {
        conversationId,
        chatnetAccountId: accountId,
        threadId: `t-${conversationId}`,
        threadType: 'user',
        contentType: 'text',
        sentAt,
        ...extra,
      }),
    );
  const stats = (as: Client, qs: string) => as.get(`/api/v1/analytics/response-time?dateFrom=2024-03-01&dateTo=2024-03-04${qs}`);

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await startCrmStack({ services: ['messaging'], serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr } } });
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    agent = await addUser(crm.api, acme.owner, 'agent');
    lead = await addUser(crm.api, acme.owner, 'team_lead');
    nightAccount = connector.account(acme.orgId);
    // The org works Monday to Friday, 09:00-17:00 UTC; the night account answers around the clock.
    const weekdays = [1, 2, 3, 4, 5].map((day) => ({ day, open: '09:00', close: '17:00' }));
    expect((await acme.owner.put('/api/v1/settings/business-hours', { timezone: 'UTC', days: weekdays, holidays: [] })).status).toBe(200);
    const allDays = [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, open: '00:00', close: '24:00' }));
    expect(
      (await acme.owner.put(`/api/v1/chatnet-accounts/${nightAccount}/business-hours`, { timezone: 'UTC', days: allDays, holidays: [] })).status,
    ).toBe(200);
    // Globex keeps no hours: its own figures are clock time either way, and Acme's hours never reach them.
    const globexConversation = randomUUID();
    await conversation(globex.orgId, globexConversation, dayAccount);
    await message('message.received', globex.orgId, globexConversation, dayAccount, at('2024-03-01', '16:50'));
    await message('message.sent', globex.orgId, globexConversation, dayAccount, at('2024-03-04', '09:10'), {
      sentByUserId: randomUUID(),
      source: 'ui',
    });

    // Friday 16:50 on the day account, answered Monday 09:10 (20 open minutes), archived Monday 09:30 (40).
    await conversation(acme.orgId, slow, dayAccount);
    await message('message.received', acme.orgId, slow, dayAccount, at('2024-03-01', '16:50'));
    await message('message.sent', acme.orgId, slow, dayAccount, at('2024-03-04', '09:10'), { sentByUserId: agent.id, source: 'ui' });
    await publish('conversation.archived', acme.orgId, { id: slow }, at('2024-03-04', '09:30'));
    // Friday 16:50 on the night account, answered 17:30: forty minutes by its own hours.
    await conversation(acme.orgId, fast, nightAccount);
    await message('message.received', acme.orgId, fast, nightAccount, at('2024-03-01', '16:50'));
    await message('message.sent', acme.orgId, fast, nightAccount, at('2024-03-01', '17:30'), { sentByUserId: agent.id, source: 'ui' });
    await eventually(async () => {
      const [a, g] = [(await stats(acme.owner, '')).body, (await stats(globex.owner, '')).body];
      return a.responses === 2 && a.resolutions === 1 && g.responses === 1;
    }, 20_000);
  }, 90_000);
  afterAll(async () => {
    await crm?.stop();
    await connector?.down();
  });

  it('closed hours are not counted: each conversation in its account’s hours, else the org’s', async () => {
    const res = await stats(lead.as, '&businessHours=true&slaMinutes=30');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      period: { from: '2024-03-01T00:00:00.000Z', to: '2024-03-04T23:59:59.999Z' },
      averageFirstResponseTime: (20 * 60 + 40 * 60) / 2,
      averageResolutionTime: 40 * 60,
      medianResponseTime: 20 * 60,
      percentile95: 40 * 60,
      percentile99: 40 * 60,
      onTimeRate: 50,
      slaMinutes: 30,
      responses: 2,
      firstResponses: 2,
      resolutions: 1,
      businessHours: true,
    });
  });

  it('without it (or with false) the clock counts everything, as before', async () => {
    const clock = 2 * 86_400 + 16 * 3600 + 20 * 60; // Friday 16:50 → Monday 09:10
    for (const qs of ['', '&businessHours=false']) {
      const res = await stats(acme.owner, `${qs}&slaMinutes=30`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          averageFirstResponseTime: (clock + 40 * 60) / 2,
          medianResponseTime: 40 * 60,
          percentile95: clock,
          onTimeRate: 0,
          businessHours: false,
        }),
      );
    }
  });

  it('another org’s hours and responses stay its own', async () => {
    const res = await stats(globex.owner, '&businessHours=true');
    expect(res.status).toBe(200);
    // Globex set no hours: open all the time, so its one response keeps its clock time.
    expect(res.body).toEqual(
      expect.objectContaining({
        responses: 1,
        firstResponses: 1,
        resolutions: 0,
        medianResponseTime: 2 * 86_400 + 16 * 3600 + 20 * 60,
        businessHours: true,
      }),
    );
  });

  it('400 names businessHours when it is not true or false; agents may not read analytics (403)', async () => {
    const bad = await stats(acme.owner, '&businessHours=yes');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ field: 'businessHours' })]);
    expect((await stats(agent.as, '&businessHours=true')).status).toBe(403);
  });
});
