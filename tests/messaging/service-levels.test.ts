import { auditEntryFor } from '../support/audit';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { orgWithKey } from './support';

// Service levels (issue #29) through the gateway. Business hours: the org's hours, an account's own (or the org's,
// inherited), and whether they are open now; open-time arithmetic (lunch, nights, holidays, DST) is unit-tested beside
// the code (services/messaging/src/service-levels/schedule.test.ts). SLA policies: CRUD and the account each applies to.
// Here the routes, validation, permissions and org walls.
describe('service levels', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let agent: Client;
  let accountA: string;
  let accountB: string;
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;

  /** Every day 00:00-24:00 in UTC except `closedDay` (today in UTC), so the test knows what "now" is. */
  const allDaysBut = (closedDay: number) =>
    [0, 1, 2, 3, 4, 5, 6].filter((d) => d !== closedDay).map((day) => ({ day, open: '00:00', close: '24:00' }));
  const today = () => new Date().getUTCDay();
  const tomorrowStart = () => {
    const d = new Date();
    return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
  };
  const weekdays = {
    timezone: 'Asia/Ho_Chi_Minh',
    days: [1, 2, 3, 4, 5].flatMap((day) => [
      { day, open: '08:00', close: '12:00' },
      { day, open: '13:00', close: '17:30' },
    ]),
    holidays: ['2031-01-08'],
  };

  beforeAll(async () => {
    stack = await startStack({ services: ['chatnet-connector', 'messaging'] });
    a = await orgWithKey(stack.url, 'Hours A');
    b = await orgWithKey(stack.url, 'Hours B');
    agent = (await member(stack.url, a.owner, 'agent', 'hours agent')).api;
    accountA = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'A line' })).body.id;
    accountB = (await b.owner.post('/api/v1/chatnet-accounts', { displayName: 'B line' })).body.id;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  describe('business hours', () => {
    it('are open all the time until set, then answer what was set, in order', async () => {
      const before = await a.owner.get('/api/v1/settings/business-hours');
      expect(before.status).toBe(200);
      expect(before.body).toEqual({ timezone: 'UTC', days: expect.any(Array), holidays: [], updatedAt: null });
      expect(before.body.days).toHaveLength(7);
      expect((await a.owner.get('/api/v1/settings/business-hours/status')).body).toEqual({ open: true, nextChangeAt: null });

      const put = await a.owner.put('/api/v1/settings/business-hours', { ...weekdays, days: [...weekdays.days].reverse() });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ ...weekdays, updatedAt: expect.any(String) });
      expect((await agent.get('/api/v1/settings/business-hours')).body).toEqual(put.body);
      // Another org's hours are its own.
      expect((await b.owner.get('/api/v1/settings/business-hours')).body.updatedAt).toBeNull();

      const entry = await auditEntryFor(a.owner, 'settings.business_hours_updated', null);
      expect(entry.details).toEqual({ hours: weekdays, previous: null });
    });

    it('say whether the org is open now and when that changes', async () => {
      // Closed all of today (UTC), open every other day: closed now, opening at tomorrow's midnight.
      expect((await a.owner.put('/api/v1/settings/business-hours', { timezone: 'UTC', days: allDaysBut(today()) })).status).toBe(200);
      expect((await a.owner.get('/api/v1/settings/business-hours/status')).body).toEqual({ open: false, nextChangeAt: tomorrowStart() });
      // Today a holiday of a week otherwise always open: the same.
      const holiday = new Date().toISOString().slice(0, 10);
      await a.owner.put('/api/v1/settings/business-hours', { timezone: 'UTC', days: allDaysBut(-1), holidays: [holiday] });
      expect((await agent.get('/api/v1/settings/business-hours/status')).body).toEqual({ open: false, nextChangeAt: tomorrowStart() });
    });

    it('of an account are its own, or the org’s (inherited) until set and again after null', async () => {
      await a.owner.put('/api/v1/settings/business-hours', weekdays);
      const inherited = await a.owner.get(`/api/v1/chatnet-accounts/${accountA}/business-hours`);
      expect(inherited.status).toBe(200);
      expect(inherited.body).toEqual({ chatnetAccountId: accountA, inherited: true, ...weekdays, updatedAt: expect.any(String) });

      // The account is open all of today while the org is closed today: the status follows the account.
      await a.owner.put('/api/v1/settings/business-hours', { timezone: 'UTC', days: allDaysBut(today()) });
      const own = await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/business-hours`, { timezone: 'UTC', days: allDaysBut(-1) });
      expect(own.status).toBe(200);
      expect(own.body).toMatchObject({ chatnetAccountId: accountA, inherited: false, timezone: 'UTC', holidays: [] });
      expect((await a.owner.get(`/api/v1/settings/business-hours/status?chatnetAccountId=${accountA}`)).body).toEqual({
        open: true,
        nextChangeAt: null,
      });
      expect((await a.owner.get('/api/v1/settings/business-hours/status')).body.open).toBe(false);
      expect((await auditEntryFor(a.owner, 'settings.business_hours_updated', accountA)).resourceType).toBe('chatnet_account');

      // The JSON body null: the account follows the org's hours again.
      const cleared = await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/business-hours`, 'null');
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ chatnetAccountId: accountA, inherited: true, days: allDaysBut(today()) });
      expect((await a.owner.get(`/api/v1/settings/business-hours/status?chatnetAccountId=${accountA}`)).body.open).toBe(false);
    });

    it('refuse bad input with a 400 naming the field', async () => {
      const ok = { timezone: 'UTC', days: [{ day: 1, open: '08:00', close: '17:00' }] };
      const cases: Array<[object, string]> = [
        [{ ...ok, timezone: 'Mars/Olympus' }, 'timezone'],
        [{ days: ok.days }, 'timezone'],
        [{ ...ok, days: 'weekdays' }, 'days'],
        [{ ...ok, days: [{ day: 9, open: '08:00', close: '17:00' }] }, 'days.0.day'],
        [{ ...ok, days: [{ day: 1.5, open: '08:00', close: '17:00' }] }, 'days.0.day'],
        [{ ...ok, days: [{ day: 1, open: '8am', close: '17:00' }] }, 'days.0.open'],
        [{ ...ok, days: [{ day: 1, open: '18:00', close: '17:00' }] }, 'days.0.close'],
        [{ ...ok, days: [...ok.days, { day: 1, open: '16:00', close: '19:00' }] }, 'days.1'],
        [{ ...ok, holidays: ['2031-13-01'] }, 'holidays.0'],
      ];
      for (const [body, field] of cases) {
        const res = await a.owner.put('/api/v1/settings/business-hours', body);
        expect([res.status, fieldOf(res)]).toEqual([400, field]);
      }
      const accountRes = await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/business-hours`, {
        ...ok,
        days: [{ day: 1, open: '08:00', close: '25:00' }],
      });
      expect([accountRes.status, fieldOf(accountRes)]).toEqual([400, 'days.0.close']);
      // A body that is not JSON is a 400 too, never a 500.
      expect((await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/business-hours`, '{"timezone":')).status).toBe(400);
    });

    it('are changed only by admins and owners', async () => {
      const body = { timezone: 'UTC', days: allDaysBut(-1) };
      expect((await agent.put('/api/v1/settings/business-hours', body)).status).toBe(403);
      expect((await agent.put(`/api/v1/chatnet-accounts/${accountA}/business-hours`, body)).status).toBe(403);
      expect((await agent.get(`/api/v1/chatnet-accounts/${accountA}/business-hours`)).status).toBe(200);
    });

    it('of another org’s account (or a malformed id) are 404', async () => {
      const body = { timezone: 'UTC', days: allDaysBut(-1) };
      expect((await a.owner.get(`/api/v1/chatnet-accounts/${accountB}/business-hours`)).status).toBe(404);
      expect((await a.owner.put(`/api/v1/chatnet-accounts/${accountB}/business-hours`, body)).status).toBe(404);
      expect((await a.owner.put(`/api/v1/chatnet-accounts/${accountB}/business-hours`, 'null')).status).toBe(404);
      expect((await a.owner.get(`/api/v1/settings/business-hours/status?chatnetAccountId=${accountB}`)).status).toBe(404);
      expect((await a.owner.get('/api/v1/chatnet-accounts/not-an-id/business-hours')).status).toBe(404);
      // B's account kept no hours from A's attempts.
      expect((await b.owner.get(`/api/v1/chatnet-accounts/${accountB}/business-hours`)).body).toMatchObject({ inherited: true, updatedAt: null });
    });

    it('need a signed-in user', async () => {
      expect((await a.pub.get('/api/v1/settings/business-hours')).status).toBe(401);
    });
  });

  describe('SLA policies', () => {
    const policy = {
      name: 'Hotline',
      firstResponseMinutes: 15,
      nextResponseMinutes: 30,
      resolutionMinutes: 480,
      businessHoursOnly: true,
      onBreach: { notify: ['assignee', 'team_leads'], reassign: true },
    };
    let hotline: string;

    it('are created, read, listed oldest first and replaced', async () => {
      const created = await a.owner.post('/api/v1/sla-policies', policy);
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        ...policy,
        chatnetAccountIds: [],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      hotline = created.body.id;
      const minimal = await a.owner.post('/api/v1/sla-policies', { name: 'Email-like', firstResponseMinutes: 1440 });
      expect(minimal.body).toMatchObject({
        nextResponseMinutes: null,
        resolutionMinutes: null,
        businessHoursOnly: false,
        onBreach: { notify: [], reassign: false },
      });

      expect((await agent.get(`/api/v1/sla-policies/${hotline}`)).body).toEqual(created.body);
      const list = await agent.get('/api/v1/sla-policies?limit=1');
      expect(list.status).toBe(200);
      expect(list.body.data.map((p: any) => p.id)).toEqual([hotline]);
      expect(list.body.pagination).toEqual({ total: 2, page: 1, limit: 1, pages: 2 });
      expect((await agent.get('/api/v1/sla-policies?limit=1&page=2')).body.data[0].id).toBe(minimal.body.id);

      const replaced = await a.owner.put(`/api/v1/sla-policies/${hotline}`, { name: 'Hotline 24/7', firstResponseMinutes: 10 });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({
        id: hotline,
        name: 'Hotline 24/7',
        firstResponseMinutes: 10,
        nextResponseMinutes: null,
        businessHoursOnly: false,
      });
      expect((await auditEntryFor(a.owner, 'sla_policy.updated', hotline)).details).toMatchObject({
        name: 'Hotline 24/7',
        previous: { name: 'Hotline' },
      });
    });

    it('are attached to an account and detached, and deleting one detaches it', async () => {
      expect((await agent.get(`/api/v1/chatnet-accounts/${accountA}/sla`)).body).toEqual({ chatnetAccountId: accountA, policyId: null });
      const set = await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/sla`, { policyId: hotline });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ chatnetAccountId: accountA, policyId: hotline });
      expect((await agent.get(`/api/v1/sla-policies/${hotline}`)).body.chatnetAccountIds).toEqual([accountA]);
      expect((await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/sla`, { policyId: null })).body).toEqual({
        chatnetAccountId: accountA,
        policyId: null,
      });

      await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/sla`, { policyId: hotline });
      expect((await a.owner.del(`/api/v1/sla-policies/${hotline}`)).status).toBe(204);
      expect((await a.owner.get(`/api/v1/sla-policies/${hotline}`)).status).toBe(404);
      expect((await a.owner.get(`/api/v1/chatnet-accounts/${accountA}/sla`)).body.policyId).toBeNull();
      expect((await auditEntryFor(a.owner, 'sla_policy.deleted', hotline)).details).toEqual({ detachedAccountIds: [accountA] });
      expect((await a.owner.del(`/api/v1/sla-policies/${hotline}`)).status).toBe(404);
    });

    it('refuse bad input with a 400 naming the field', async () => {
      const cases: Array<[object, string]> = [
        [{ ...policy, name: '' }, 'name'],
        [{ ...policy, firstResponseMinutes: undefined }, 'firstResponseMinutes'],
        [{ ...policy, firstResponseMinutes: 0 }, 'firstResponseMinutes'],
        [{ ...policy, nextResponseMinutes: 1.5 }, 'nextResponseMinutes'],
        [{ ...policy, resolutionMinutes: 525_601 }, 'resolutionMinutes'],
        [{ ...policy, businessHoursOnly: 'yes' }, 'businessHoursOnly'],
        [{ ...policy, onBreach: { notify: ['everyone'] } }, 'onBreach.notify.0'],
      ];
      for (const [body, field] of cases) {
        const res = await a.owner.post('/api/v1/sla-policies', body);
        expect([res.status, fieldOf(res)]).toEqual([400, field]);
      }
      const bad = await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/sla`, { policyId: 'nope' });
      expect([bad.status, fieldOf(bad)]).toEqual([400, 'policyId']);
      const missing = await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/sla`, {});
      expect([missing.status, fieldOf(missing)]).toEqual([400, 'policyId']);
    });

    it('are changed only by admins and owners', async () => {
      expect((await agent.post('/api/v1/sla-policies', policy)).status).toBe(403);
      const id = (await a.owner.post('/api/v1/sla-policies', policy)).body.id;
      expect((await agent.put(`/api/v1/sla-policies/${id}`, policy)).status).toBe(403);
      expect((await agent.del(`/api/v1/sla-policies/${id}`)).status).toBe(403);
      expect((await agent.put(`/api/v1/chatnet-accounts/${accountA}/sla`, { policyId: id })).status).toBe(403);
    });

    it('of another org are 404, and cannot be attached to an account (400)', async () => {
      const theirs = (await b.owner.post('/api/v1/sla-policies', policy)).body.id;
      expect((await a.owner.get(`/api/v1/sla-policies/${theirs}`)).status).toBe(404);
      expect((await a.owner.put(`/api/v1/sla-policies/${theirs}`, policy)).status).toBe(404);
      expect((await a.owner.del(`/api/v1/sla-policies/${theirs}`)).status).toBe(404);
      expect((await a.owner.get('/api/v1/sla-policies/not-an-id')).status).toBe(404);
      expect((await a.owner.get('/api/v1/sla-policies')).body.data.map((p: any) => p.id)).not.toContain(theirs);
      const foreign = await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/sla`, { policyId: theirs });
      expect([foreign.status, fieldOf(foreign)]).toEqual([400, 'policyId']);
      const mine = (await a.owner.post('/api/v1/sla-policies', policy)).body.id;
      expect((await a.owner.put(`/api/v1/chatnet-accounts/${accountB}/sla`, { policyId: mine })).status).toBe(404);
      expect((await a.owner.get(`/api/v1/chatnet-accounts/${accountB}/sla`)).status).toBe(404);
      expect((await b.owner.get(`/api/v1/sla-policies/${theirs}`)).body.name).toBe('Hotline');
    });
  });
});
