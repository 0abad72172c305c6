import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { amqpUser } from '@crm/events';
import { eventually, infra } from '@crm/testing';
import { Client, email } from '../support/http';
import { messageData } from '../support/event-data';
import { addUser, CrmStack, Org, startCrmStack } from './crm-support';

/** Publish an event as messaging's (or crm's) outbox relay would, with the time it says it happened. */
async function publishAt(exchange: string, type: string, orgId: string, data: unknown, occurredAt = new Date().toISOString()) {
  const conn = await amqp.connect(infra.amqpUrl);
  try {
    const ch = await conn.createConfirmChannel();
    await ch.assertExchange(exchange, 'topic', { durable: true });
    const id = randomUUID();
    ch.publish(exchange, type, Buffer.from(JSON.stringify({ id, type, orgId, occurredAt, data })), {
      persistent: true,
      userId: amqpUser(infra.amqpUrl),
      contentType: 'application/json',
      messageId: id,
    });
    await ch.waitForConfirms();
  } finally {
    await conn.close();
  }
}

const day = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

describe('analytics: conversion funnel, team performance, response times', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let lead: { id: string; as: Client };
  let agent: { id: string; as: Client };
  let alice: { id: string; as: Client };
  let bob: { id: string; as: Client };
  let dana: { id: string; as: Client };
  let fay: { id: string; as: Client };
  let eve: { id: string; as: Client };

  /** A user with a name and department, signed in. */
  async function member(fullName: string, role: string, department = '') {
    const password = 'correct horse battery';
    const e = email(fullName.split(' ')[0].toLowerCase());
    const res = await owner.post('/api/v1/users', { email: e, fullName, role, department, password });
    if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${JSON.stringify(res.body)}`);
    const login = await crm.api.post('/api/v1/auth/login', { email: e, password });
    return { id: res.body.id as string, as: crm.api.as(login.body.token) };
  }

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
    lead = await addUser(crm.api, owner, 'team_lead');
    agent = await addUser(crm.api, owner, 'agent');
    alice = await member('Alice Sales', 'team_lead', 'Sales');
    bob = await member('Bob Sales', 'agent', 'Sales');
    dana = await member('Dana Support', 'agent', 'Support');
    // Two users who left: Fay after replying in March 2024, Eve without any activity.
    fay = await member('Fay Former', 'agent', 'Former');
    eve = await member('Eve Former', 'agent', 'Former');
  }, 60_000);
  afterAll(async () => {
    await crm?.stop();
  });

  describe('response times from message and conversation events', () => {
    // Chosen times on 2024-03-01 (and one on 03-02). Expected responses: C1 300 s (first) and 120 s, C2 1800 s
    // (first), C4 600 s (first, its events arriving in reverse order), C5 30 s (first, next day). C1 is archived
    // an hour after its first message: one resolution of 3600 s.
    const at = (hhmmss: string, d = '2024-03-01') => `${d}T${hhmmss}.000Z`;
    const [c1, c2, c3, c4, c5] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const msg = (type: 'message.received' | 'message.sent', conversationId: string, sentAt: string, extra: object = {}) =>
      messageData(type, {
        conversationId,
        contactId: randomUUID(),
        chatnetAccountId: randomUUID(),
        threadId: 'thread',
        threadType: 'user',
        content: 'hi',
        contentType: 'text',
        sentAt,
        ...extra,
      });
    const inbound = (conversationId: string, sentAt: string, extra: object = {}) =>
      publishAt(crm.exchange, 'message.received', acme.orgId, msg('message.received', conversationId, sentAt, extra));
    const reply = (conversationId: string, sentAt: string, userId: string, extra: object = {}) =>
      publishAt(
        crm.exchange,
        'message.sent',
        acme.orgId,
        msg('message.sent', conversationId, sentAt, { sentByUserId: userId, source: 'ui', ...extra }),
      );
    const stats = async (qs: string) => (await owner.get(`/api/v1/analytics/response-time?${qs}`)).body;

    beforeAll(async () => {
      await inbound(c1, at('10:00:00'));
      await inbound(c1, at('10:01:00'));
      await reply(c1, at('10:05:00'), alice.id);
      await inbound(c1, at('10:10:00'));
      await reply(c1, at('10:12:00'), bob.id);
      await reply(c1, at('10:13:00'), bob.id);
      await publishAt(crm.exchange, 'conversation.archived', acme.orgId, { id: c1 }, at('11:00:00'));

      // An agent writing first answers nothing; an automated send ends no wait; the open turn at 13:00 has no time.
      await reply(c2, at('09:00:00'), alice.id);
      await inbound(c2, at('12:00:00'));
      await publishAt(
        crm.exchange,
        'message.sent',
        acme.orgId,
        msg('message.sent', c2, at('12:01:00'), { sentByUserId: null, source: 'automation' }),
      );
      await reply(c2, at('12:30:00'), bob.id);
      await inbound(c2, at('13:00:00'));

      // Group threads have no response times.
      await inbound(c3, at('10:00:00'), { threadType: 'group' });
      await reply(c3, at('10:00:30'), alice.id, { threadType: 'group' });

      await inbound(c5, at('09:00:00', '2024-03-02'));
      await reply(c5, at('09:00:30', '2024-03-02'), alice.id);
      await reply(c5, at('09:05:00', '2024-03-02'), fay.id);

      // C4's reply is applied before its (earlier) inbound message arrives: the conversation is replayed.
      await reply(c4, at('14:10:00'), alice.id);
      const aliceReplies = async () =>
        (await owner.get('/api/v1/analytics/team-performance?dateFrom=2024-03-01&dateTo=2024-03-02&departmentId=Sales')).body.team?.find(
          (m: any) => m.userId === alice.id,
        )?.messagesReplied;
      await eventually(async () => (await aliceReplies()) === 4 && (await stats('dateFrom=2024-03-01&dateTo=2024-03-02')).responses === 4);
      const duplicate = msg('message.received', c4, at('14:00:00'));
      await publishAt(crm.exchange, 'message.received', acme.orgId, duplicate);
      // The same message reported again (another event id) counts once.
      await publishAt(crm.exchange, 'message.received', acme.orgId, duplicate);
      await eventually(async () => (await stats('dateFrom=2024-03-01&dateTo=2024-03-02')).responses === 5, 15_000);
    }, 30_000);

    it('GET /analytics/response-time: averages, exact percentiles and on-time rate of the period', async () => {
      const res = await owner.get('/api/v1/analytics/response-time?dateFrom=2024-03-01&dateTo=2024-03-01');
      expect(res.status).toBe(200);
      // Responses on 03-01: 120, 300, 600, 1800 s. Median = 2nd of 4, p95 and p99 = 4th (nearest rank).
      expect(res.body).toEqual({
        period: { from: '2024-03-01T00:00:00.000Z', to: '2024-03-01T23:59:59.999Z' },
        averageFirstResponseTime: (300 + 1800 + 600) / 3,
        averageResolutionTime: 3600,
        medianResponseTime: 300,
        percentile95: 1800,
        percentile99: 1800,
        onTimeRate: 75,
        slaMinutes: 15,
        responses: 4,
        firstResponses: 3,
        resolutions: 1,
        businessHours: false,
      });
    });

    it('businessHours=true needs messaging’s business hours: without messaging it is 503, never clock time passed off as open time', async () => {
      // This stack runs no messaging (crm's MESSAGING_ADDR is an address where nothing listens).
      const res = await owner.get('/api/v1/analytics/response-time?dateFrom=2024-03-01&dateTo=2024-03-01&businessHours=true');
      expect(res.status).toBe(503);
      expect(res.body.error.message).toMatch(/messaging service is unavailable/);
    });

    it('the SLA is a query parameter: a response exactly at the target is on time', async () => {
      const rate = async (sla: string) => (await stats(`dateFrom=2024-03-01&dateTo=2024-03-01&slaMinutes=${sla}`)).onTimeRate;
      expect(await rate('2')).toBe(25);
      expect(await rate('5')).toBe(50);
      expect(await rate('4.99')).toBe(25);
      expect(await rate('30')).toBe(100);
      expect((await stats('dateFrom=2024-03-01&dateTo=2024-03-01&slaMinutes=0.5')).slaMinutes).toBe(0.5);
    });

    it('dates filter by when the response or resolution happened: whole days, partial days, both', async () => {
      const both = await stats('dateFrom=2024-03-01&dateTo=2024-03-02');
      expect([both.responses, both.medianResponseTime, both.percentile99, both.averageFirstResponseTime]).toEqual([
        5,
        300,
        1800,
        (300 + 1800 + 600 + 30) / 4,
      ]);
      // Partial days only (read from the raw rows): 10:12 (120 s), 11:00 (the resolution), 12:30 (1800 s).
      const window = await stats(`dateFrom=${encodeURIComponent('2024-03-01T10:06:00Z')}&dateTo=${encodeURIComponent('2024-03-01T12:30:00Z')}`);
      expect(window).toEqual(
        expect.objectContaining({
          period: { from: '2024-03-01T10:06:00.000Z', to: '2024-03-01T12:30:00.000Z' },
          responses: 2,
          medianResponseTime: 120,
          percentile95: 1800,
          averageFirstResponseTime: 1800,
          averageResolutionTime: 3600,
          onTimeRate: 50,
        }),
      );
      // Partial days across midnight: 03-01 12:00 → 03-02 09:00:30 inclusive.
      const overnight = await stats(`dateFrom=${encodeURIComponent('2024-03-01T12:00:00Z')}&dateTo=${encodeURIComponent('2024-03-02T09:00:30Z')}`);
      expect([overnight.responses, overnight.medianResponseTime, overnight.averageFirstResponseTime]).toEqual([3, 600, (1800 + 600 + 30) / 3]);
      // A whole day (03-01, from the aggregates) with partial days on both sides (from the raw rows).
      const mixed = await stats(`dateFrom=${encodeURIComponent('2024-02-29T12:00:00Z')}&dateTo=${encodeURIComponent('2024-03-02T09:00:29Z')}`);
      expect([mixed.responses, mixed.medianResponseTime, mixed.percentile95, mixed.averageResolutionTime]).toEqual([4, 300, 1800, 3600]);
      // Whole months (from the monthly aggregates) and days around them.
      const months = await stats('dateFrom=2024-02-01&dateTo=2024-03-31');
      expect([months.responses, months.medianResponseTime, months.percentile95, months.averageFirstResponseTime, months.resolutions]).toEqual([
        5,
        300,
        1800,
        (300 + 1800 + 600 + 30) / 4,
        1,
      ]);
      const around = await stats(`dateFrom=${encodeURIComponent('2024-01-31T23:00:00Z')}&dateTo=2024-04-02`);
      expect([around.responses, around.medianResponseTime, around.onTimeRate]).toEqual([5, 300, 80]);
      const before = await stats(`dateFrom=2024-03-02&dateTo=${encodeURIComponent('2024-03-02T09:00:29.999Z')}`);
      expect(before.responses).toBe(0);
    });

    it('a period without responses has 0 for each figure beside sample sizes of 0', async () => {
      const res = await owner.get('/api/v1/analytics/response-time?dateFrom=2023-01-01&dateTo=2023-01-31');
      expect(res.body).toEqual({
        period: { from: '2023-01-01T00:00:00.000Z', to: '2023-01-31T23:59:59.999Z' },
        averageFirstResponseTime: 0,
        averageResolutionTime: 0,
        medianResponseTime: 0,
        percentile95: 0,
        percentile99: 0,
        onTimeRate: 0,
        slaMinutes: 15,
        responses: 0,
        firstResponses: 0,
        resolutions: 0,
        businessHours: false,
      });
    });

    it('GET /analytics/team-performance: replies and response times per user in the period', async () => {
      const res = await owner.get('/api/v1/analytics/team-performance?dateFrom=2024-03-01&dateTo=2024-03-02&departmentId=Sales');
      expect(res.status).toBe(200);
      // Alice sent 10:05 (C1), 09:00 (C2), 14:10 (C4), 09:00:30 (C5) and gave responses of 300, 600 and 30 s;
      // Bob sent 10:12, 10:13 (C1), 12:30 (C2) with responses of 120 and 1800 s. Group and automated sends are not counted.
      expect(res.body).toEqual({
        period: { from: '2024-03-01T00:00:00.000Z', to: '2024-03-02T23:59:59.999Z' },
        team: [
          {
            userId: alice.id,
            name: 'Alice Sales',
            contactsAssigned: 0,
            messagesReplied: 4,
            averageResponseTime: 310,
            conversionRate: 0,
            revenueGenerated: 0,
            responses: 3,
          },
          {
            userId: bob.id,
            name: 'Bob Sales',
            contactsAssigned: 0,
            messagesReplied: 3,
            averageResponseTime: 960,
            conversionRate: 0,
            revenueGenerated: 0,
            responses: 2,
          },
        ],
        teamTotal: { contactsAssigned: 0, messagesReplied: 7, conversionRate: 0, revenueGenerated: 0 },
      });
      const months = await owner.get('/api/v1/analytics/team-performance?dateFrom=2024-01-01&dateTo=2024-03-31&departmentId=Sales');
      expect(months.body.team).toEqual(res.body.team);
      const partial = await owner.get(
        `/api/v1/analytics/team-performance?dateFrom=${encodeURIComponent('2024-03-01T10:00:00Z')}&dateTo=${encodeURIComponent('2024-03-01T12:00:00Z')}&departmentId=Sales`,
      );
      expect(partial.body.team.map((m: any) => [m.name, m.messagesReplied, m.averageResponseTime])).toEqual([
        ['Alice Sales', 1, 300],
        ['Bob Sales', 2, 120],
      ]);
    });

    it('users who left are listed only for periods they have numbers in', async () => {
      for (const u of [fay, eve]) expect((await owner.del(`/api/v1/users/${u.id}`)).status).toBe(204);
      const march = await owner.get('/api/v1/analytics/team-performance?dateFrom=2024-03-01&dateTo=2024-03-02&departmentId=Former');
      expect(march.body.team).toEqual([
        {
          userId: fay.id,
          name: 'Fay Former',
          contactsAssigned: 0,
          messagesReplied: 1,
          averageResponseTime: 0,
          conversionRate: 0,
          revenueGenerated: 0,
          responses: 0,
        },
      ]);
      expect((await owner.get('/api/v1/analytics/team-performance?dateFrom=2024-04-01&dateTo=2024-04-30&departmentId=Former')).body.team).toEqual([]);
    });

    it('another organization sees none of it', async () => {
      const res = await globex.owner.get('/api/v1/analytics/response-time?dateFrom=2024-03-01&dateTo=2024-03-02');
      expect(res.status).toBe(200);
      expect([res.body.responses, res.body.resolutions, res.body.medianResponseTime]).toEqual([0, 0, 0]);
      const team = await globex.owner.get('/api/v1/analytics/team-performance?dateFrom=2024-03-01&dateTo=2024-03-02');
      expect(team.body.team.map((m: any) => m.userId)).toEqual([globex.user.id]);
      expect(team.body.teamTotal.messagesReplied).toBe(0);
    });
  });

  describe('funnel and team performance from contacts', () => {
    /** Furthest stage index of each contact (new 0, lead 1, Qualified 2, Proposal 3, customer 4), by creation day. */
    const furthest: { day: string; stage: number }[] = [];
    let window: { from: string; to: string };
    let firstCreatedAt: string;

    beforeAll(async () => {
      const qualified = (await owner.post('/api/v1/contact-statuses', { name: 'Qualified', position: 1 })).body.id;
      const proposal = (await owner.post('/api/v1/contact-statuses', { name: 'Proposal', position: 2 })).body.id;
      const create = async (body: object, stage: number) => {
        const res = await owner.post('/api/v1/contacts', body);
        if (res.status !== 201) throw new Error(`create contact: ${res.status} ${JSON.stringify(res.body)}`);
        furthest.push({ day: day(new Date(res.body.createdAt)), stage });
        firstCreatedAt ??= res.body.createdAt;
        return res.body.id as string;
      };
      const put = async (id: string, body: object) => expect((await owner.put(`/api/v1/contacts/${id}`, body)).status).toBe(200);

      await create({ name: 'Stays New', assignedUserId: alice.id }, 0);
      await create({ name: 'A Lead', status: 'lead', assignedUserId: alice.id }, 1);
      const q = await create({ name: 'Gets Qualified', status: 'lead', assignedUserId: bob.id }, 2);
      await put(q, { statusId: qualified });
      // Reaches Proposal without ever being "lead", then is lost: it still counts up to Proposal.
      const p = await create({ name: 'Proposal Then Lost', assignedUserId: bob.id }, 3);
      await put(p, { statusId: proposal });
      await put(p, { status: 'lost', statusId: '' });
      await create({ name: 'Born Customer', status: 'customer', dealValue: 1000, assignedUserId: alice.id }, 4);
      // Converted by Bob, then handed to Alice: the conversion stays Bob's, Alice gets an assignment.
      const w = await create({ name: 'Won Deal', status: 'lead', dealValue: 2500.5, assignedUserId: bob.id }, 4);
      await put(w, { status: 'customer' });
      await put(w, { assignedUserId: alice.id });
      // Handed back and forth: the first assignment to each user counts, once.
      const b = await create({ name: 'Back And Forth', assignedUserId: alice.id }, 0);
      await put(b, { assignedUserId: bob.id });
      await put(b, { assignedUserId: alice.id });
      // Deleted contacts leave every count. The funnel first counts it (eight contacts: every creation applied), so
      // the seven awaited below come from its deletion, not from a creation not yet applied.
      const gone = await owner.post('/api/v1/contacts', { name: 'Gone', status: 'customer', dealValue: 99, assignedUserId: alice.id });
      const days = [...furthest.map((f) => f.day), day(new Date(gone.body.createdAt))].sort();
      window = { from: days[0], to: day(addDays(new Date(days[days.length - 1]), 1)) };
      const funnel = async () => (await owner.get(`/api/v1/analytics/conversion-funnel?dateFrom=${window.from}&dateTo=${window.to}`)).body;
      await eventually(async () => (await funnel()).stages?.[0].count === 8, 15_000);
      await owner.del(`/api/v1/contacts/${gone.body.id}`);

      await eventually(async () => {
        const t = (await owner.get(`/api/v1/analytics/team-performance?dateFrom=${window.from}&dateTo=${window.to}&departmentId=Sales`)).body;
        const f = await funnel();
        return (
          t.teamTotal?.contactsAssigned === 9 &&
          t.teamTotal.revenueGenerated === 3500.5 &&
          f.stages?.[0].count === 7 &&
          f.stages[2].count === 4 &&
          f.stages[3].count === 3
        );
      }, 15_000);
    }, 30_000);

    it('GET /analytics/conversion-funnel: stages in pipeline order, each counting the contacts that got that far', async () => {
      const res = await owner.get(`/api/v1/analytics/conversion-funnel?dateFrom=${window.from}&dateTo=${window.to}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        period: { from: `${window.from}T00:00:00.000Z`, to: `${window.to}T23:59:59.999Z` },
        stages: [
          { name: 'new', count: 7, percentage: 100, statusId: null },
          { name: 'lead', count: 5, percentage: 71.43, statusId: null },
          { name: 'Qualified', count: 4, percentage: 57.14, statusId: expect.any(String) },
          { name: 'Proposal', count: 3, percentage: 42.86, statusId: expect.any(String) },
          { name: 'customer', count: 2, percentage: 28.57, statusId: null },
        ],
        conversionRate: 28.57,
      });
      // Between exact timestamps (partial days, read from the contacts themselves): the same contacts.
      const exact = await owner.get(
        `/api/v1/analytics/conversion-funnel?dateFrom=${encodeURIComponent(firstCreatedAt)}&dateTo=${encodeURIComponent(new Date().toISOString())}`,
      );
      expect(exact.body.stages.map((st: any) => st.count)).toEqual([7, 5, 4, 3, 2]);
      const after = await owner.get(
        `/api/v1/analytics/conversion-funnel?dateFrom=${encodeURIComponent(new Date(Date.parse(firstCreatedAt) + 1).toISOString())}&dateTo=${window.to}`,
      );
      expect(after.body.stages[0].count).toBe(6);
    });

    it('groupBy day, week or month adds a series with every slice of the period', async () => {
      const from = day(addDays(new Date(window.from), -1));
      const res = await owner.get(`/api/v1/analytics/conversion-funnel?dateFrom=${from}&dateTo=${window.to}&groupBy=day`);
      expect(res.status).toBe(200);
      expect(res.body.groupBy).toBe('day');
      const expectedDays: string[] = [];
      for (let d = new Date(from); day(d) <= window.to; d = addDays(d, 1)) expectedDays.push(day(d));
      expect(res.body.series.map((s: any) => s.period)).toEqual(expectedDays.map((d) => ({ from: `${d}T00:00:00.000Z`, to: `${d}T23:59:59.999Z` })));
      for (const [i, d] of expectedDays.entries()) {
        const expected = [0, 1, 2, 3, 4].map((stage) => furthest.filter((f) => f.day === d && f.stage >= stage).length);
        expect(res.body.series[i].stages.map((s: any) => s.count)).toEqual(expected);
      }
      expect(res.body.series[0].conversionRate).toBe(0); // an empty slice: 0 beside a new-stage count of 0
      expect(res.body.stages.map((s: any) => s.count)).toEqual([7, 5, 4, 3, 2]);

      const month = await owner.get(`/api/v1/analytics/conversion-funnel?dateFrom=${window.from}&dateTo=${window.from}&groupBy=month`);
      expect(month.body.series).toHaveLength(1);
      expect(month.body.series[0].period).toEqual(month.body.period);
      // A slice's stages are the funnel's (names in the same order; statusId only on the funnel's own).
      expect(month.body.series[0].stages).toEqual(month.body.stages.map(({ statusId: _statusId, ...st }: any) => st));
    });

    it('GET /analytics/team-performance: assignments, conversion and revenue per user', async () => {
      const res = await owner.get(`/api/v1/analytics/team-performance?dateFrom=${window.from}&dateTo=${window.to}&departmentId=Sales`);
      expect(res.status).toBe(200);
      // Alice: Stays New, A Lead, Born Customer (hers: 1000), Won Deal (handed over after Bob converted it), Back And Forth.
      // Bob: Gets Qualified, Proposal Then Lost, Won Deal (his: 2500.50), Back And Forth.
      const expected = [
        {
          userId: alice.id,
          name: 'Alice Sales',
          contactsAssigned: 5,
          messagesReplied: 0,
          averageResponseTime: 0,
          conversionRate: 20,
          revenueGenerated: 1000,
          responses: 0,
        },
        {
          userId: bob.id,
          name: 'Bob Sales',
          contactsAssigned: 4,
          messagesReplied: 0,
          averageResponseTime: 0,
          conversionRate: 25,
          revenueGenerated: 2500.5,
          responses: 0,
        },
      ];
      expect(res.body.team).toEqual(expected);
      expect(res.body.teamTotal).toEqual({ contactsAssigned: 9, messagesReplied: 0, conversionRate: 22.22, revenueGenerated: 3500.5 });
      // The same between exact timestamps (partial days, read from the raw rows).
      const exact = await owner.get(
        `/api/v1/analytics/team-performance?dateFrom=${encodeURIComponent(firstCreatedAt)}&dateTo=${encodeURIComponent(new Date().toISOString())}&departmentId=Sales`,
      );
      expect(exact.body.team).toEqual(expected);
    });

    it('without departmentId every active user is listed, by name; a department lists its users only', async () => {
      const all = await owner.get(`/api/v1/analytics/team-performance?dateFrom=${window.from}&dateTo=${window.to}`);
      expect(all.body.team.map((m: any) => m.userId).sort()).toEqual([acme.user.id, lead.id, agent.id, alice.id, bob.id, dana.id].sort());
      expect(all.body.team.map((m: any) => m.name)).toEqual(
        [...all.body.team.map((m: any) => m.name)].sort((a: string, b: string) => a.localeCompare(b)),
      );
      const support = await owner.get(`/api/v1/analytics/team-performance?dateFrom=${window.from}&dateTo=${window.to}&departmentId=Support`);
      expect(support.body.team).toEqual([
        {
          userId: dana.id,
          name: 'Dana Support',
          contactsAssigned: 0,
          messagesReplied: 0,
          averageResponseTime: 0,
          conversionRate: 0,
          revenueGenerated: 0,
          responses: 0,
        },
      ]);
      expect((await owner.get('/api/v1/analytics/team-performance?departmentId=Nobody')).body.team).toEqual([]);
    });

    it('another organization sees an empty funnel', async () => {
      const res = await globex.owner.get(`/api/v1/analytics/conversion-funnel?dateFrom=${window.from}&dateTo=${window.to}`);
      expect(res.body.stages).toEqual([
        { name: 'new', count: 0, percentage: 0, statusId: null },
        { name: 'lead', count: 0, percentage: 0, statusId: null },
        { name: 'customer', count: 0, percentage: 0, statusId: null },
      ]);
      expect(res.body.conversionRate).toBe(0);
    });

    it('without dates the period is the 30 UTC days ending today', async () => {
      const res = await owner.get('/api/v1/analytics/conversion-funnel');
      const today = new Date();
      expect(res.body.period).toEqual({ from: `${day(addDays(today, -29))}T00:00:00.000Z`, to: `${day(today)}T23:59:59.999Z` });
      expect(res.body.series).toBeUndefined();
    });
  });

  describe('access and validation', () => {
    const paths = ['/api/v1/analytics/conversion-funnel', '/api/v1/analytics/team-performance', '/api/v1/analytics/response-time'];

    it('needs a signed-in user with analytics:view (team_lead and above): 401, 403 for agents', async () => {
      for (const p of paths) {
        expect((await crm.api.get(p)).status).toBe(401);
        const denied = await agent.as.get(p);
        expect(denied.status).toBe(403);
        expect(denied.body.error.code).toBe('forbidden');
        expect((await lead.as.get(p)).status).toBe(200);
      }
    });

    it('400 naming the field for bad dates, groupBy, slaMinutes and departmentId', async () => {
      const bad = async (p: string) => {
        const res = await owner.get(p);
        expect(res.status).toBe(400);
        return res.body.error.details.map((d: any) => d.field);
      };
      for (const p of paths) {
        expect(await bad(`${p}?dateFrom=yesterday`)).toEqual(['dateFrom']);
        expect(await bad(`${p}?dateTo=2024-02-30`)).toEqual(['dateTo']);
        expect(await bad(`${p}?dateFrom=2024-03-05&dateTo=2024-03-01`)).toEqual(['dateTo']);
      }
      expect(await bad('/api/v1/analytics/conversion-funnel?dateFrom=2099-01-01')).toEqual(['dateFrom']);
      expect(await bad('/api/v1/analytics/conversion-funnel?groupBy=year')).toEqual(['groupBy']);
      expect(await bad('/api/v1/analytics/conversion-funnel?dateFrom=2000-01-01&dateTo=2024-01-01&groupBy=day')).toEqual(['groupBy']);
      for (const sla of ['0', '-5', 'abc', '20000']) expect(await bad(`/api/v1/analytics/response-time?slaMinutes=${sla}`)).toEqual(['slaMinutes']);
      expect(await bad(`/api/v1/analytics/team-performance?departmentId=${'x'.repeat(201)}`)).toEqual(['departmentId']);
    });
  });
});
