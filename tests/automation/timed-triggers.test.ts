import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { AppError } from '@crm/grpc-kit';
import { eventually } from '@crm/testing';
import { ConsumerProbe } from '../support/consumers';
import { messageData as sentData } from '../support/event-data';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { fakeCrmLists } from './campaign-fakes';
import { eventBus, fakeServer, messageData, org } from './support';

// The timed triggers of issue #32 item 2, through the gateway: `schedule` {cron, timezone, listId?} and
// `conversation_idle` {minutes, status?}. Both run on automation's timer facility. A schedule is made due by moving its
// next time in automation's database to a moment the test chooses (migration 012's trigger wakes the timers as any
// write does), so a test need not wait for a real cron minute. Idle periods are short (minutes may be a fraction, as a
// wait step's). The contract: a timed trigger fires within 2 s of its due time, and never before it.
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

  /** Within how long of its due time a timed trigger fires. */
  const FIRES_WITHIN_MS = 2_000;

  /**
   * Makes the schedule due `inMs` from now (the database's clock; negative: it fell due that long ago) and returns that
   * due time. Whole milliseconds, as the timers read it back (they re-find the row by its next time).
   */
  const dueIn = async (ruleId: string, inMs: number) => {
    const { rows } = await db.query<{ next_at: Date }>(
      `UPDATE rule_schedules SET next_at = date_trunc('milliseconds', now()) + $2 * interval '1 millisecond' WHERE rule_id = $1 RETURNING next_at`,
      [ruleId, inMs],
    );
    return rows[0].next_at;
  };
  const firingsOf = async (ruleId: string) => (await db.query('SELECT 1 FROM schedule_firings WHERE rule_id = $1', [ruleId])).rowCount;

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
      // Due a second ahead: the run must start neither before that time nor more than 2 s after it.
      const due = (await dueIn(ruleId, 1_000)).getTime();
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
      const startedAt = new Date(run.startedAt).getTime();
      expect(startedAt).toBeGreaterThanOrEqual(due);
      expect(startedAt).toBeLessThan(due + FIRES_WITHIN_MS);
      // Once: nothing is left that could fire it again. Its firing row is gone (with the run it wrote, in one
      // transaction), and the schedule is due only tomorrow (a time not yet moved on would be claimed, and fire, again).
      expect(await firingsOf(ruleId)).toBe(0);
      const next = (await nextAt(ruleId))!;
      expect(next.toISOString()).toMatch(/T09:00:00\.000Z$/);
      expect(next.getTime()).toBeGreaterThan(Date.now());
      expect((await runsOf(ruleId)).pagination.total).toBe(1);
    });

    it('a time that fell due while automation was down fires once after the restart; a firing written twice adds no run', async () => {
      const ruleId = await activeRule({ type: 'schedule', cron: '*/5 * * * *', timezone: 'Europe/Berlin' });
      await stack.stopService('automation');
      const due = await dueIn(ruleId, -1_000);
      await stack.startService('automation');
      await eventually(async () => (await runsOf(ruleId)).data.some((r) => r.status === 'succeeded'), 10_000);
      // An instance that died after writing the firing's run but before removing the firing: the firing comes back
      // and is done again, and the run it would write is the same run.
      await db.query(`INSERT INTO schedule_firings (rule_id, fire_at, org_id, timezone) VALUES ($1, $2, $3, 'Europe/Berlin')`, [ruleId, due, orgId]);
      // Its row goes in the transaction that writes its run: once it is gone, a second run would be there to count.
      await eventually(async () => (await firingsOf(ruleId)) === 0, 5_000);
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
      await dueIn(ruleId, 0);
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
    /** The idle time of every rule here: 0.05 minutes. */
    const IDLE_MINUTES = 0.05;
    const IDLE_MS = IDLE_MINUTES * 60_000;
    /** An active rule with the same idle time as the rules under test, armed by every message of the org (see timersPassed). */
    let canary: string;
    beforeAll(async () => {
      canary = await activeRule({ type: 'conversation_idle', minutes: IDLE_MINUTES });
    });

    /** A message in a conversation, as messaging publishes it; resolves once automation has taken it, with the message's time. */
    async function received(conversationId: string, contactId: string): Promise<number> {
      const mark = await triggers.mark();
      const { occurredAt } = await bus.publish('message.received', orgId, messageData(contactId, conversationId, 'hello?'));
      await triggers.settled(mark, 1);
      return Date.parse(occurredAt);
    }
    async function sent(conversationId: string, contactId: string, source: string) {
      const mark = await triggers.mark();
      await bus.publish('message.sent', orgId, sentData('message.sent', { conversationId, contactId, source }));
      await triggers.settled(mark, 1);
    }
    const idleRuns = async (ruleId: string, conversationId: string) => (await runsOf(ruleId)).data.filter((r) => r.conversationId === conversationId);
    const idleTimers = async (ruleId: string, conversationId?: string) =>
      (
        await db.query('SELECT 1 FROM idle_timers WHERE rule_id = $1 AND ($2::uuid IS NULL OR conversation_id = $2)', [
          ruleId,
          conversationId ?? null,
        ])
      ).rowCount;

    /**
     * The marker before an absence check: the timers have gone past every idle period armed until now. A message on a
     * fresh conversation, published now, arms the canary for now + IDLE_MS, no earlier than any period armed before it
     * with the same idle time falls due; the timers claim due periods oldest first, so once the canary's run is there,
     * every such period was claimed. One claimed in the same pass may still be writing its run: its row stays until that
     * run is committed, so the caller checks the row is gone too.
     */
    async function timersPassed(): Promise<void> {
      const conversationId = randomUUID();
      await received(conversationId, randomUUID());
      await eventually(async () => (await idleRuns(canary, conversationId)).length === 1, 20_000);
    }

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
      const ruleId = await activeRule({ type: 'conversation_idle', minutes: IDLE_MINUTES });
      const conversationId = randomUUID();
      const contactId = randomUUID();
      const due = (await received(conversationId, contactId)) + IDLE_MS;
      const [first] = await eventually(async () => {
        const runs = await idleRuns(ruleId, conversationId);
        return runs.length > 0 ? runs : undefined;
      }, 20_000);
      expect(first).toEqual(
        expect.objectContaining({ trigger: 'conversation_idle', eventType: 'automation.conversation_idle', conversationId, contactId }),
      );
      // After 3 s of silence from the message's time, and within 2 s of that.
      const firedAt = new Date(first.startedAt).getTime();
      expect(firedAt).toBeGreaterThanOrEqual(due);
      expect(firedAt).toBeLessThan(due + FIRES_WITHIN_MS);
      // Once: a period re-armed by its own firing would have fallen due by the time the canary fires.
      await timersPassed();
      expect(await idleTimers(ruleId, conversationId)).toBe(0);
      expect(await idleRuns(ruleId, conversationId)).toHaveLength(1);
      // An agent's reply starts a new idle period.
      await sent(conversationId, contactId, 'user');
      await eventually(async () => (await idleRuns(ruleId, conversationId)).length === 2, 20_000);
      // A message an automation rule sent does not (it would re-arm itself for ever): no period is armed, and none fell
      // due by the time one armed after it did.
      await sent(conversationId, contactId, 'automation');
      expect(await idleTimers(ruleId, conversationId)).toBe(0);
      await timersPassed();
      expect(await idleTimers(ruleId, conversationId)).toBe(0);
      expect(await idleRuns(ruleId, conversationId)).toHaveLength(2);
    });

    it('with status: fires only for a conversation in that status when the time comes', async () => {
      const ruleId = await activeRule({ type: 'conversation_idle', minutes: IDLE_MINUTES, status: 'active' });
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
      const ruleId = await activeRule({ type: 'conversation_idle', minutes: IDLE_MINUTES });
      const conversationId = randomUUID();
      await received(conversationId, randomUUID());
      expect(await idleTimers(ruleId, conversationId)).toBe(1);
      await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
      expect(await idleTimers(ruleId)).toBe(0);
      // Past the time the period would have fallen due.
      await timersPassed();
      expect(await idleTimers(ruleId)).toBe(0);
      expect(await idleRuns(ruleId, conversationId)).toHaveLength(0);
    });
  });
});
