import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { amqpUser } from '@crm/events';
import { eventually, infra } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { messageData } from '../support/event-data';
import { startStack, Stack } from '../support/stack';

/** Publish an event as messaging's outbox relay would, with the time it says it happened. */
async function publishAt(exchange: string, type: string, orgId: string, data: unknown, occurredAt = new Date().toISOString()) {
  const conn = await amqp.connect(infra.amqpUrl);
  try {
    const ch = await conn.createConfirmChannel();
    const id = randomUUID();
    ch.publish(exchange, type, Buffer.from(JSON.stringify({ id, type, orgId, occurredAt, data })), { persistent: true, userId: amqpUser(infra.amqpUrl), contentType: 'application/json', messageId: id });
    await ch.waitForConfirms();
  } finally {
    await conn.close();
  }
}

// GET /analytics/response-time?businessHours=true (issue #29 item 10): crm's durations measured in the org's business
// hours, which messaging owns and measures (ServiceLevelsService.OpenTimes). Friday 2024-03-01 and Monday 03-04, open
// Monday to Friday 09:00-17:00 UTC.
describe('analytics: response and resolution times in business hours', () => {
  let stack: Stack;
  let owner: Client;
  let orgId: string;
  const at = (d: string, hhmm: string) => `2024-03-${d}T${hhmm}:00.000Z`;
  const stats = async (qs: string) => (await owner.get(`/api/v1/analytics/response-time?dateFrom=2024-03-01&dateTo=2024-03-04&slaMinutes=30&${qs}`)).body;

  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'messaging'] });
    const org = await newOrg(client(stack.url), 'Hours');
    owner = org.owner;
    orgId = org.user.orgId;
    const exchange = stack.env.EVENTS_EXCHANGE;
    const msg = (type: 'message.received' | 'message.sent', conversationId: string, sentAt: string, extra: object = {}) =>
      messageData(type, { conversationId, contactId: randomUUID(), chatnetAccountId: randomUUID(), threadId: 't', threadType: 'user', content: 'hi', contentType: 'text', sentAt, ...extra });
    const [late, quick] = [randomUUID(), randomUUID()];
    // Written Friday 16:50, answered Monday 09:10 (20 open minutes), archived Monday 10:00 (70 open minutes).
    await publishAt(exchange, 'message.received', orgId, msg('message.received', late, at('01', '16:50')));
    await publishAt(exchange, 'message.sent', orgId, msg('message.sent', late, at('04', '09:10'), { sentByUserId: org.user.id, source: 'ui' }));
    await publishAt(exchange, 'conversation.archived', orgId, { id: late }, at('04', '10:00'));
    // Written Friday 10:00, answered 10:05, archived 10:30: all of it open.
    await publishAt(exchange, 'message.received', orgId, msg('message.received', quick, at('01', '10:00')));
    await publishAt(exchange, 'message.sent', orgId, msg('message.sent', quick, at('01', '10:05'), { sentByUserId: org.user.id, source: 'ui' }));
    await publishAt(exchange, 'conversation.archived', orgId, { id: quick }, at('01', '10:30'));
    await eventually(async () => (await stats('')).resolutions === 2, 20_000);
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('the clock counts nights and weekends; businessHours=true leaves them out; without hours set the two agree', async () => {
    const clock = await stats('');
    expect(clock).toEqual(
      expect.objectContaining({ responses: 2, firstResponses: 2, resolutions: 2, averageFirstResponseTime: (300 + 231_600) / 2, onTimeRate: 50 }),
    );
    // No hours set: open all the time.
    expect(await stats('businessHours=true')).toEqual(clock);

    const hours = { timezone: 'UTC', days: [1, 2, 3, 4, 5].map((day) => ({ day, open: '09:00', close: '17:00' })), holidays: [] };
    expect((await owner.put('/api/v1/settings/business-hours', hours)).status).toBe(200);
    expect(await stats('businessHours=true')).toEqual(
      expect.objectContaining({
        responses: 2,
        firstResponses: 2,
        resolutions: 2,
        averageFirstResponseTime: (300 + 1200) / 2,
        averageResolutionTime: (1800 + 4200) / 2,
        medianResponseTime: 300,
        percentile95: 1200,
        onTimeRate: 100,
        slaMinutes: 30,
      }),
    );
    // The clock's figures are unchanged by the hours.
    expect(await stats('businessHours=false')).toEqual(clock);
  });

  it('businessHours must be true or false (400 naming it)', async () => {
    const res = await owner.get('/api/v1/analytics/response-time?businessHours=yes');
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('businessHours');
  });
});
