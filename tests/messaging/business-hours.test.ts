import { auditEntryFor } from '../support/audit';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { orgWithKey } from './support';

// Business hours (issue #29 item 1) through the gateway: the org's hours, an account's own (or the org's, inherited),
// and whether they are open now. Open-time arithmetic (lunch, nights, holidays, DST) is unit-tested beside the code
// (services/messaging/src/business-hours/schedule.test.ts); here the routes, validation, permissions and org walls.
describe('business hours', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let agent: Client;
  let accountA: string;
  let accountB: string;
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;

  /** Every day 00:00-24:00 in UTC except `closedDay` (today in UTC), so the test knows what "now" is. */
  const allDaysBut = (closedDay: number) => [0, 1, 2, 3, 4, 5, 6].filter((d) => d !== closedDay).map((day) => ({ day, open: '00:00', close: '24:00' }));
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
    expect((await a.owner.get(`/api/v1/settings/business-hours/status?chatnetAccountId=${accountA}`)).body).toEqual({ open: true, nextChangeAt: null });
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
      [{ ...ok, days: [{ day: 9, open: '08:00', close: '17:00' }] }, 'days[0].day'],
      [{ ...ok, days: [{ day: 1, open: '8am', close: '17:00' }] }, 'days[0].open'],
      [{ ...ok, days: [{ day: 1, open: '18:00', close: '17:00' }] }, 'days[0].close'],
      [{ ...ok, days: [...ok.days, { day: 1, open: '16:00', close: '19:00' }] }, 'days[1]'],
      [{ ...ok, holidays: ['2031-13-01'] }, 'holidays[0]'],
    ];
    for (const [body, field] of cases) {
      const res = await a.owner.put('/api/v1/settings/business-hours', body);
      expect([res.status, fieldOf(res)]).toEqual([400, field]);
    }
    const accountRes = await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/business-hours`, { ...ok, days: [{ day: 1, open: '08:00', close: '25:00' }] });
    expect([accountRes.status, fieldOf(accountRes)]).toEqual([400, 'days[0].close']);
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
