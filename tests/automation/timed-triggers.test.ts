import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { AppError } from '@crm/grpc-kit';
import { eventually } from '@crm/testing';
import { ConsumerProbe } from '../support/consumers';
import { messageData as sentData } from '../support/event-data';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { fakeCrmLists } from './campaign-fakes';
import { eventBus, fakeServer, messageData, org, sleep } from './support';

// The timed triggers of issue #32 item 2, through the gateway: `schedule` {cron, timezone, listId?} and
// `conversation_idle` {minutes, status?}. Both run on automation's timer facility. A schedule is made due by
// back-dating its next time in automation's database (migration 012's trigger wakes the timers as any write does), so a
// test need not wait for a real cron minute. Idle periods are short (minutes may be a fraction, as a wait step's).
describe('automation timed triggers', () => {
  let stack: Stack;
  let db: PgClient;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let crm: Awaited<ReturnType<typeof fakeCrmLists>>;
  let messaging: Awaited<ReturnType<typeof fakeServer>>;
  /** Conversation statuses as messaging's GetConversation answers them. */
  const statuses = new Map<string, string>();
  let owner: Client;
  let orgId: string;
  let other: Awaited<ReturnType<typeof org>>;
  let triggers: ConsumerProbe;

  beforeAll(async () => {
    crm = await fakeCrmLists();
    messaging = await fakeServer('messaging/v1/messaging.proto', 'messaging.v1.MessagingService', {
      GetConversation: async (req, ctx) => {
        const status = statuses.get(`${ctx.orgId}/${req.id}`);
        if (!status) throw new AppError('not_found', 'Conversation not found');
        return { conversation: { id: req.id, status, type: 'user' }, messages: [], timeline: [] } as never;
      },
    });
    stack = await startStack({
      services: ['automation'],
      serviceEnv: { automation: { CRM_ADDR: crm.addr, MESSAGING_ADDR: messaging.addr, EVENT_RETRY_SCHEDULE: '200ms' } },
    });
    db = new PgClient({ connectionString: stack.databaseUrl('automation') });
    await db.connect();
    bus = await eventBus(stack);
    triggers = new ConsumerProbe(stack, 'automation', `${stack.env.EVENTS_EXCHANGE}.automation.triggers`);
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    other = await org(stack, 'Other');
  });
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await crm?.stop();
    await messaging?.stop();
  });

  const notify = { type: 'send_notification', title: 'Check', message: 'Good morning {{name}}' };

  async function create(trigger: object, as: Client = owner) {
    return as.post('/api/v1/automation/rules', { name: `Timed ${randomUUID().slice(0, 8)}`, trigger, actions: [notify] });
  }

  async function activeRule(trigger: object): Promise<string> {
    const created = await create(trigger);
    if (created.status !== 201) throw new Error(`rule create failed: ${JSON.stringify(created.body)}`);
    const act = await owner.post(`/api/v1/automation/rules/${created.body.id}/activate`);
    if (act.status !== 200) throw new Error(`activate failed: ${JSON.stringify(act.body)}`);
    return created.body.id;
  }

  const runsOf = async (ruleId: string) => {
    const res = await owner.get(`/api/v1/automation/rules/${ruleId}/runs?limit=100`);
    expect(res.status).toBe(200);
    return res.body as { data: any[]; pagination: { total: number } };
  };

  const nextAt = async (ruleId: string): Promise<Date | undefined> =>
    (await db.query<{ next_at: Date }>('SELECT next_at FROM rule_schedules WHERE rule_id = $1', [ruleId])).rows[0]?.next_at;

  /** Makes the schedule due now, as if its time had come. */
  const backDate = async (ruleId: string) => {
    const { rows } = await db.query<{ next_at: Date }>(
      `UPDATE rule_schedules SET next_at = date_trunc('second', now()) - interval '1 second' WHERE rule_id = $1 RETURNING next_at`,
      [ruleId],
    );
    return rows[0].next_at;
  };

  const fieldOf = (res: { status: number; body: any }) => [res.status, res.body.error?.details?.[0]?.field];

  describe('schedule', () => {
    it('POST /automation/rules with {cron, timezone}: 201, shown on read; the next time is kept in its zone once active', async () => {
      const created = await create({ type: 'schedule', cron: ' 30  8 * *  mon-fri ', timezone: 'Asia/Ho_Chi_Minh' });
      expect(created.status).toBe(201);
      const read = await owner.get(`/api/v1/automation/rules/${created.body.id}`);
      expect(read.body.trigger).toEqual({ type: 'schedule', conditions: [], cron: '30 8 * * mon-fri', timezone: 'Asia/Ho_Chi_Minh', listId: null });
      // A draft is not timed.
      expect(await nextAt(created.body.id)).toBeUndefined();
      await owner.post(`/api/v1/automation/rules/${created.body.id}/activate`);
      const next = (await nextAt(created.body.id))!;
      // 08:30 in Ho Chi Minh City is 01:30 UTC, on a weekday.
      expect(next.toISOString()).toMatch(/T01:30:00\.000Z$/);
      expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());
      expect(next.getTime()).toBeGreaterThan(Date.now());
      // Paused: no longer timed; active again: timed from now.
      await owner.post(`/api/v1/automation/rules/${created.body.id}/pause`);
      expect(await nextAt(created.body.id)).toBeUndefined();
      const listed = await owner.get('/api/v1/automation/rules?triggerType=schedule');
      expect(listed.body.data.map((r: any) => r.id)).toContain(created.body.id);
    });

    it.each([
      ['no cron', { timezone: 'UTC' }, 'trigger.cron'],
      ['four fields', { cron: '0 9 * *', timezone: 'UTC' }, 'trigger.cron'],
      ['a minute of 61', { cron: '61 * * * *', timezone: 'UTC' }, 'trigger.cron'],
      ['a step of 0', { cron: '*/0 * * * *', timezone: 'UTC' }, 'trigger.cron'],
      ['February 30 (never)', { cron: '0 0 30 2 *', timezone: 'UTC' }, 'trigger.cron'],
      ['no timezone', { cron: '0 9 * * *' }, 'trigger.timezone'],
      ['an unknown timezone', { cron: '0 9 * * *', timezone: 'Mars/Olympus_Mons' }, 'trigger.timezone'],
      ['a listId that is no id', { cron: '0 9 * * *', timezone: 'UTC', listId: 'vip' }, 'trigger.listId'],
      ['an unknown list', { cron: '0 9 * * *', timezone: 'UTC', listId: randomUUID() }, 'trigger.listId'],
      ['conditions', { cron: '0 9 * * *', timezone: 'UTC', conditions: [{ field: 'listId', operator: 'equals', value: 'x' }] }, 'trigger.conditions'],
      ['a cron that is not text', { cron: 5, timezone: 'UTC' }, 'trigger.cron'],
    ])('400 naming the field: %s', async (_name, fields, field) => {
      expect(fieldOf(await create({ type: 'schedule', ...fields }))).toEqual([400, field]);
    });

    it('cron and listId belong to schedule triggers only; another org’s list is not found (400), its rules are 404', async () => {
      expect(fieldOf(await create({ type: 'contact_created', cron: '0 9 * * *' }))).toEqual([400, 'trigger.cron']);
      expect(fieldOf(await create({ type: 'message_received', timezone: 'UTC' }))).toEqual([400, 'trigger.timezone']);
      const theirs = crm.list(other.orgId, 3);
      expect(fieldOf(await create({ type: 'schedule', cron: '0 9 * * *', timezone: 'UTC', listId: theirs.id }))).toEqual([400, 'trigger.listId']);
      const ours = crm.list(orgId, 2);
      const rule = await create({ type: 'schedule', cron: '0 9 * * *', timezone: 'UTC', listId: ours.id });
      expect(rule.status).toBe(201);
      // Changing it to the other org's list through PUT is refused the same way.
      const put = await owner.put(`/api/v1/automation/rules/${rule.body.id}`, {
        trigger: { type: 'schedule', cron: '0 9 * * *', timezone: 'UTC', listId: theirs.id },
      });
      expect(fieldOf(put)).toEqual([400, 'trigger.listId']);
      expect((await other.owner.get(`/api/v1/automation/rules/${rule.body.id}`)).status).toBe(404);
      expect((await other.owner.put(`/api/v1/automation/rules/${rule.body.id}`, { name: 'Mine' })).status).toBe(404);
      expect((await other.owner.get(`/api/v1/automation/rules/${rule.body.id}/runs`)).status).toBe(404);
    });

    it('fires at its time, once, with trigger schedule and no contact, and moves to the next time', async () => {
      const ruleId = await activeRule({ type: 'schedule', cron: '0 9 * * *', timezone: 'UTC' });
      const due = await backDate(ruleId);
      const run = await eventually(async () => (await runsOf(ruleId)).data.find((r) => r.status === 'succeeded'), 10_000);
      expect(run).toEqual(
        expect.objectContaining({
          trigger: 'schedule',
          eventType: 'automation.schedule',
          contactId: null,
          conversationId: null,
          status: 'succeeded',
        }),
      );
      // Within 2 s of its time (the back-dated time is a second ago).
      expect(new Date(run.startedAt).getTime() - due.getTime()).toBeLessThan(3_000);
      const next = (await nextAt(ruleId))!;
      expect(next.toISOString()).toMatch(/T09:00:00\.000Z$/);
      expect(next.getTime()).toBeGreaterThan(Date.now());
      await sleep(1_000);
      expect((await runsOf(ruleId)).pagination.total).toBe(1);
      expect((await db.query('SELECT 1 FROM schedule_firings WHERE rule_id = $1', [ruleId])).rowCount).toBe(0);
    });

    it('a time that fell due while automation was down fires once after the restart; a firing written twice adds no run', async () => {
      const ruleId = await activeRule({ type: 'schedule', cron: '*/5 * * * *', timezone: 'Europe/Berlin' });
      await stack.stopService('automation');
      const due = await backDate(ruleId);
      await stack.startService('automation');
      await eventually(async () => (await runsOf(ruleId)).data.some((r) => r.status === 'succeeded'), 10_000);
      // An instance that died after writing the firing's run but before removing the firing: the firing comes back
      // and is done again, and the run it would write is the same run.
      await db.query(`INSERT INTO schedule_firings (rule_id, fire_at, org_id, timezone) VALUES ($1, $2, $3, 'Europe/Berlin')`, [ruleId, due, orgId]);
      await eventually(async () => (await db.query('SELECT 1 FROM schedule_firings WHERE rule_id = $1', [ruleId])).rowCount === 0, 5_000);
      await sleep(500);
      const runs = await runsOf(ruleId);
      expect(runs.pagination.total).toBe(1);
      // The next time is a future multiple of 5 minutes.
      const next = (await nextAt(ruleId))!;
      expect(next.getUTCMinutes() % 5).toBe(0);
      expect(next.getTime()).toBeGreaterThan(Date.now());
    });

    it('with a list: one run per member at each firing, written a page at a time, each with its contact', async () => {
      const list = crm.list(orgId, 230, 'Morning list');
      const ruleId = await activeRule({ type: 'schedule', cron: '0 7 * * *', timezone: 'UTC', listId: list.id });
      const pagesBefore = crm.pageCalls.length;
      await backDate(ruleId);
      await eventually(async () => (await runsOf(ruleId)).pagination.total === 230, 60_000);
      const pages = crm.pageCalls.slice(pagesBefore).filter((p) => p.listId === list.id);
      expect(pages.map((p) => p.limit)).toEqual([200, 200]);
      expect(pages[1].after).not.toBe('');
      const contacts = new Set<string>();
      for (let page = 1; page <= 3; page++) {
        const res = await owner.get(`/api/v1/automation/rules/${ruleId}/runs?limit=100&page=${page}`);
        for (const r of res.body.data) {
          expect(r.trigger).toBe('schedule');
          contacts.add(r.contactId);
        }
      }
      expect(contacts).toEqual(new Set(list.members.map((m) => m.id)));
      // Each run acts with its member: the notification names them.
      await eventually(async () => (await runsOf(ruleId)).data.every((r) => r.status === 'succeeded'), 60_000);
      const notes = await owner.get('/api/v1/notifications?limit=100');
      const names = new Set(list.members.map((m) => `Good morning ${m.name}`));
      expect(notes.body.data.filter((n: any) => names.has(n.message)).length).toBeGreaterThan(0);
    });
  });

  describe('conversation_idle', () => {
    /** A message in a conversation, as messaging publishes it; resolves once automation has taken it. */
    async function received(conversationId: string, contactId: string) {
      const mark = await triggers.mark();
      await bus.publish('message.received', orgId, messageData(contactId, conversationId, 'hello?'));
      await triggers.settled(mark, 1);
    }
    async function sent(conversationId: string, contactId: string, source: string) {
      const mark = await triggers.mark();
      await bus.publish('message.sent', orgId, sentData('message.sent', { conversationId, contactId, source }));
      await triggers.settled(mark, 1);
    }
    const idleRuns = async (ruleId: string, conversationId: string) => (await runsOf(ruleId)).data.filter((r) => r.conversationId === conversationId);

    it('POST /automation/rules with {minutes, status?}: 201 and shown; 400s name the field', async () => {
      const created = await create({ type: 'conversation_idle', minutes: 90, status: 'active' });
      expect(created.status).toBe(201);
      expect((await owner.get(`/api/v1/automation/rules/${created.body.id}`)).body.trigger).toEqual({
        type: 'conversation_idle',
        conditions: [],
        minutes: 90,
        status: 'active',
      });
      const bare = await create({ type: 'conversation_idle', minutes: 0.5 });
      expect((await owner.get(`/api/v1/automation/rules/${bare.body.id}`)).body.trigger).toEqual({
        type: 'conversation_idle',
        conditions: [],
        minutes: 0.5,
        status: null,
      });
      expect(fieldOf(await create({ type: 'conversation_idle' }))).toEqual([400, 'trigger.minutes']);
      expect(fieldOf(await create({ type: 'conversation_idle', minutes: 0 }))).toEqual([400, 'trigger.minutes']);
      expect(fieldOf(await create({ type: 'conversation_idle', minutes: 200_000 }))).toEqual([400, 'trigger.minutes']);
      expect(fieldOf(await create({ type: 'conversation_idle', minutes: 'ten' }))).toEqual([400, 'trigger.minutes']);
      expect(fieldOf(await create({ type: 'conversation_idle', minutes: 5, status: 'sleeping' }))).toEqual([400, 'trigger.status']);
      expect(fieldOf(await create({ type: 'contact_created', minutes: 5 }))).toEqual([400, 'trigger.minutes']);
      expect(fieldOf(await create({ type: 'message_received', status: 'active' }))).toEqual([400, 'trigger.status']);
      expect((await other.owner.get(`/api/v1/automation/rules/${created.body.id}`)).status).toBe(404);
    });

    it('fires once after the idle time, with the conversation and contact; a new message re-arms it, our own rule’s does not', async () => {
      const ruleId = await activeRule({ type: 'conversation_idle', minutes: 0.05 });
      const conversationId = randomUUID();
      const contactId = randomUUID();
      await received(conversationId, contactId);
      const armedAt = Date.now();
      const [first] = await eventually(async () => {
        const runs = await idleRuns(ruleId, conversationId);
        return runs.length > 0 ? runs : undefined;
      }, 20_000);
      expect(first).toEqual(
        expect.objectContaining({ trigger: 'conversation_idle', eventType: 'automation.conversation_idle', conversationId, contactId }),
      );
      // 3 s of silence, fired within 2 s of it.
      const firedAt = new Date(first.startedAt).getTime();
      expect(firedAt - armedAt).toBeGreaterThanOrEqual(2_500);
      expect(firedAt - armedAt).toBeLessThan(5_500);
      await sleep(3_500);
      expect(await idleRuns(ruleId, conversationId)).toHaveLength(1);
      // An agent's reply starts a new idle period.
      await sent(conversationId, contactId, 'user');
      await eventually(async () => (await idleRuns(ruleId, conversationId)).length === 2, 20_000);
      // A message an automation rule sent does not (it would re-arm itself for ever).
      await sent(conversationId, contactId, 'automation');
      await sleep(4_500);
      expect(await idleRuns(ruleId, conversationId)).toHaveLength(2);
    });

    it('with status: fires only for a conversation in that status when the time comes', async () => {
      const ruleId = await activeRule({ type: 'conversation_idle', minutes: 0.05, status: 'active' });
      const open = randomUUID();
      const closed = randomUUID();
      statuses.set(`${orgId}/${open}`, 'active');
      statuses.set(`${orgId}/${closed}`, 'closed');
      await received(open, randomUUID());
      await received(closed, randomUUID());
      await eventually(async () => (await idleRuns(ruleId, open)).length === 1, 10_000);
      // The closed one's period passed without a run.
      await eventually(
        async () => (await db.query('SELECT 1 FROM idle_timers WHERE rule_id = $1 AND conversation_id = $2', [ruleId, closed])).rowCount === 0,
        5_000,
      );
      expect(await idleRuns(ruleId, closed)).toHaveLength(0);
    });

    it('a paused rule keeps no idle periods and fires nothing', async () => {
      const ruleId = await activeRule({ type: 'conversation_idle', minutes: 0.05 });
      const conversationId = randomUUID();
      await received(conversationId, randomUUID());
      await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
      expect((await db.query('SELECT 1 FROM idle_timers WHERE rule_id = $1', [ruleId])).rowCount).toBe(0);
      await sleep(4_000);
      expect(await idleRuns(ruleId, conversationId)).toHaveLength(0);
    });
  });
});
