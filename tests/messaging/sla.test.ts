import { createLogger } from '@crm/logger';
import { eventually, freePort } from '@crm/testing';
import type { Client } from '../support/http';
import { inboxFixture, member, type InboxFixture } from './inbox-support';

// A conversation's SLA (issue #29 item 2) through the gateway: the `sla` object on every conversation shape, due
// times from the account's policy (a service-level minute is 1 s here), due_soon in a window's last 20%, the breach
// within 2 s of its due time raised once while TWO messaging instances run, the reassignment it makes, the list's
// sla= filter and sortBy=slaDue, and due times that skip closed business hours.
describe('SLA on conversations: due times, due_soon, breach, reassign, list', () => {
  let f: InboxFixture;
  let u1: { api: Client; id: string };
  let u2: { api: Client; id: string };
  let second: { stop(): Promise<void> };
  let attachedAt = 0;
  const uids = ['sla-1', 'sla-2', 'sla-3', 'sla-4', 'sla-5'];
  const FIRST = 10;
  const NEXT = 4;
  const MINUTE_MS = 1000;

  beforeAll(async () => {
    f = await inboxFixture('sla', uids, { SERVICE_LEVEL_MINUTE_MS: String(MINUTE_MS) });
    u1 = await member(f.stack.url, f.a.owner, 'agent', 'sla-one');
    u2 = await member(f.stack.url, f.a.owner, 'agent', 'sla-two');
    // A second instance on the same database and broker: both run the clock consumer and the breach timer.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const messaging = require('@crm/messaging');
    second = await messaging.start(
      messaging.loadConfig({
        ...f.stack.env,
        ...f.serviceEnv,
        DATABASE_URL: f.stack.databaseUrl('messaging'),
        GRPC_PORT: String(await freePort()),
        HTTP_PORT: String(await freePort()),
      }),
      createLogger('messaging-second', 'silent'),
    );
  }, 60_000);
  afterAll(async () => {
    await second?.stop();
    await f?.stop();
  });

  const owner = () => f.a.owner;
  const conv = (uid: string) => owner().get(`/api/v1/conversations/${f.conv[uid]}`);
  const listed = async (query: string) => (await owner().get(`/api/v1/conversations?limit=100&${query}`)).body.data as any[];
  const slaOf = async (uid: string) => (await listed('')).find((c) => c.id === f.conv[uid]).sla;
  const breaches = () => f.bus.of('conversation.sla_breached');
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;

  it('without a policy a conversation has sla null; attaching one starts the clocks of its open conversations', async () => {
    expect((await conv('sla-1')).body.conversation.sla).toBeNull();
    expect((await listed('')).every((c) => c.sla === null)).toBe(true);
    // sla-1 is u1's; sla-2 was answered before the policy came; sla-5 is closed.
    expect((await owner().put(`/api/v1/conversations/${f.conv['sla-1']}/assignee`, { userId: u1.id })).status).toBe(200);
    expect((await owner().post(`/api/v1/conversations/${f.conv['sla-2']}/messages`, { content: 'On it' })).status).toBe(201);
    expect((await owner().put(`/api/v1/chatnet-accounts/${f.accountA}/assignment`, { mode: 'round_robin', userIds: [u1.id, u2.id] })).status).toBe(
      200,
    );
    const policy = await owner().post('/api/v1/sla-policies', {
      name: 'Fast',
      firstResponseMinutes: FIRST,
      nextResponseMinutes: NEXT,
      resolutionMinutes: 600,
      onBreach: { notify: ['assignee', 'team_leads'], reassign: true },
    });
    expect(policy.status).toBe(201);
    attachedAt = Date.now();
    expect((await owner().put(`/api/v1/chatnet-accounts/${f.accountA}/sla`, { policyId: policy.body.id })).status).toBe(200);
    const after = Date.now();

    const s1 = (await conv('sla-1')).body.conversation.sla;
    expect(s1).toEqual({
      policyId: policy.body.id,
      firstResponseDueAt: expect.any(String),
      nextResponseDueAt: null,
      resolutionDueAt: expect.any(String),
      status: 'ok',
      breachedAt: null,
    });
    const due = Date.parse(s1.firstResponseDueAt);
    expect(due).toBeGreaterThanOrEqual(attachedAt + FIRST * MINUTE_MS - 1000);
    expect(due).toBeLessThanOrEqual(after + FIRST * MINUTE_MS + 1000);
    expect(Date.parse(s1.resolutionDueAt) - due).toBeGreaterThan(500 * MINUTE_MS);
    // Answered before: only the resolution clock runs.
    expect(await slaOf('sla-2')).toEqual(expect.objectContaining({ firstResponseDueAt: null, resolutionDueAt: expect.any(String), status: 'ok' }));
  });

  it('our reply meets the first response; the contact writing again starts a next-response window; closing stops the clock', async () => {
    expect((await owner().post(`/api/v1/conversations/${f.conv['sla-3']}/messages`, { content: 'Hello!' })).status).toBe(201);
    await eventually(async () => (await slaOf('sla-3')).firstResponseDueAt === null);
    const sent = await f.bus.inbound(f.a.orgId, { accountId: f.accountA, fromUid: 'sla-3', fromName: 'sla-3', content: 'one more thing' });
    const s3 = await eventually(async () => {
      const s = await slaOf('sla-3');
      return s.nextResponseDueAt ? s : undefined;
    });
    expect(Date.parse(s3.nextResponseDueAt) - Date.parse(sent.sentAt)).toBe(NEXT * MINUTE_MS);

    expect((await owner().put(`/api/v1/conversations/${f.conv['sla-5']}/status`, { status: 'closed' })).status).toBe(200);
    await eventually(async () => {
      const s = await slaOf('sla-5');
      return s.firstResponseDueAt === null && s.resolutionDueAt === null;
    });
  });

  it('due_soon in the last 20% of the window: on the conversation and through sla=due_soon', async () => {
    const soon = await eventually(async () => {
      const s = await slaOf('sla-1');
      return s.status === 'due_soon' ? s : undefined;
    }, 15_000);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(soon.firstResponseDueAt) - 0.2 * FIRST * MINUTE_MS - 200);
    const ids = (await listed('sla=due_soon')).map((c) => c.id);
    // Due soon, unless it was breached meanwhile; the answered and the closed ones are not.
    if (ids.length > 0) expect(ids).not.toContain(f.conv['sla-2']);
    expect(ids).not.toContain(f.conv['sla-5']);
    expect((await listed('sla=ok')).map((c) => c.id)).toEqual(expect.arrayContaining([f.conv['sla-2'], f.conv['sla-5']]));
  });

  it('the breach: within 2 s of the due time, once with two instances, reassigned by rotation away from the assignee (reason sla_breach)', async () => {
    const s1 = await eventually(async () => breaches().find((e) => e.data.conversationId === f.conv['sla-1']), 20_000);
    expect(s1.data).toEqual({
      conversationId: f.conv['sla-1'],
      contactId: expect.any(String),
      chatnetAccountId: f.accountA,
      assigneeId: u1.id,
      policyId: expect.any(String),
      target: 'first_response',
      dueAt: expect.any(String),
      breachedAt: expect.any(String),
      notify: ['assignee', 'team_leads'],
    });
    const delay = Date.parse(s1.data.breachedAt) - Date.parse(s1.data.dueAt);
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThan(2000);
    expect(Date.parse(s1.occurredAt) - Date.parse(s1.data.dueAt)).toBeLessThan(2000);

    const moved = await eventually(async () =>
      f.bus.of('conversation.assigned').find((e) => e.data.conversationId === f.conv['sla-1'] && e.data.reason === 'sla_breach'),
    );
    expect(moved.data).toEqual(expect.objectContaining({ assigneeId: u2.id, previousAssigneeId: u1.id, assignedBy: null, reason: 'sla_breach' }));
    // The unassigned one breached too and went to someone of the rotation.
    const s4 = await eventually(async () =>
      f.bus.of('conversation.assigned').find((e) => e.data.conversationId === f.conv['sla-4'] && e.data.reason === 'sla_breach'),
    );
    expect([u1.id, u2.id]).toContain(s4.data.assigneeId);

    const c1 = (await conv('sla-1')).body.conversation;
    expect(c1.assigneeId).toBe(u2.id);
    expect(c1.sla).toEqual(expect.objectContaining({ status: 'breached', breachedAt: s1.data.breachedAt }));
    // Once per conversation and window, though two instances watch the same due rows.
    // sla-3's next-response window (due 4 s after the contact wrote again) breached as well.
    await eventually(async () => breaches().find((e) => e.data.conversationId === f.conv['sla-3'] && e.data.target === 'next_response'));
    const keys = breaches().map((e) => `${e.data.conversationId}|${e.data.target}|${e.data.dueAt}`);
    expect(new Set(keys).size).toBe(keys.length);
    // Answered (sla-2, sla-3 first response) or closed (sla-5) conversations did not breach their first response.
    const firsts = breaches()
      .filter((e) => e.data.target === 'first_response')
      .map((e) => e.data.conversationId);
    expect(firsts.sort()).toEqual([f.conv['sla-1'], f.conv['sla-4']].sort());
  }, 30_000);

  it('the list: sla=breached, sortBy=slaDue (nearest first, none last), 400 naming the field, another org’s conversation invisible', async () => {
    const breached = (await listed('sla=breached')).map((c) => c.id);
    expect(breached).toEqual(expect.arrayContaining([f.conv['sla-1'], f.conv['sla-4']]));
    expect(breached).not.toContain(f.conv['sla-2']);

    const sorted = await listed('sortBy=slaDue');
    const nearest = (c: any) => {
      const dues = [c.sla?.firstResponseDueAt, c.sla?.nextResponseDueAt, c.sla?.resolutionDueAt].filter(Boolean).map((d: string) => Date.parse(d));
      return dues.length ? Math.min(...dues) : Infinity;
    };
    const order = sorted.map(nearest);
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(sorted[sorted.length - 1].id).toBe(f.conv['sla-5']);

    // A saved view takes the list's parameters, sla among them.
    const view = await owner().post('/api/v1/views', {
      name: 'Breached',
      resource: 'conversations',
      filters: { sla: 'breached', sortBy: 'slaDue' },
      shared: false,
    });
    expect(view.status).toBe(201);
    expect((await listed(`viewId=${view.body.id}`)).map((c) => c.id).sort()).toEqual([...breached].sort());
    const badView = await owner().post('/api/v1/views', { name: 'Late', resource: 'conversations', filters: { sla: 'late' }, shared: false });
    expect(badView.status).toBe(400);
    expect(fieldOf(badView)).toBe('filters.sla');

    for (const [query, field] of [
      ['sla=late', 'sla'],
      ['sortBy=soonest', 'sortBy'],
    ]) {
      const res = await owner().get(`/api/v1/conversations?${query}`);
      expect(res.status).toBe(400);
      expect(fieldOf(res)).toBe(field);
    }
    expect((await owner().get(`/api/v1/conversations/${f.conv.b}`)).status).toBe(404);
    for (const s of ['ok', 'due_soon', 'breached']) expect((await listed(`sla=${s}`)).map((c) => c.id)).not.toContain(f.conv.b);
  });

  it('GET /analytics/sla: attainment per policy over the range; agents 403; a bad range 400 naming the field; only the org’s policies', async () => {
    const res = await owner().get('/api/v1/analytics/sla');
    expect(res.status).toBe(200);
    // sla-1, sla-4 missed their first response, sla-3 its next response; sla-5 was closed in time (its resolution met);
    // sla-2 has no window that ended.
    expect(res.body.data).toEqual([{ policyId: expect.any(String), name: 'Fast', conversations: 4, met: 1, breached: 3, attainment: 0.25 }]);
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBe(30 * 86_400_000);
    const past = await owner().get('/api/v1/analytics/sla?from=2020-01-01&to=2020-01-31');
    expect(past.body.data).toEqual([expect.objectContaining({ conversations: 0, met: 0, breached: 0, attainment: null })]);
    expect(past.body.from).toBe('2020-01-01T00:00:00.000Z');
    expect(past.body.to).toBe('2020-02-01T00:00:00.000Z');

    expect((await u1.api.get('/api/v1/analytics/sla')).status).toBe(403);
    for (const [q, field] of [
      ['from=yesterday', 'from'],
      ['from=2031-02-01&to=2031-01-01', 'to'],
    ]) {
      const bad = await owner().get(`/api/v1/analytics/sla?${q}`);
      expect(bad.status).toBe(400);
      expect(fieldOf(bad)).toBe(field);
    }
    expect((await f.b.owner.get('/api/v1/analytics/sla')).body.data.map((p: any) => p.name)).not.toContain('Fast');
  });

  it('businessHoursOnly: the due time skips closed hours (org B, open two days from now only); a policy change and a detach apply at once', async () => {
    const b = f.b.owner;
    const day = (new Date().getUTCDay() + 2) % 7;
    expect(
      (await b.put('/api/v1/settings/business-hours', { timezone: 'UTC', days: [{ day, open: '10:00', close: '11:00' }], holidays: [] })).status,
    ).toBe(200);
    const policy = await b.post('/api/v1/sla-policies', { name: 'Office', firstResponseMinutes: 30, businessHoursOnly: true });
    expect(policy.status).toBe(201);
    const accountB = (await b.get(`/api/v1/conversations/${f.conv.b}`)).body.conversation.chatnetAccountId;
    expect((await b.put(`/api/v1/chatnet-accounts/${accountB}/sla`, { policyId: policy.body.id })).status).toBe(200);
    const opening = new Date();
    opening.setUTCDate(opening.getUTCDate() + 2);
    opening.setUTCHours(10, 0, 0, 0);
    const sla = (await b.get(`/api/v1/conversations/${f.conv.b}`)).body.conversation.sla;
    // 30 service-level minutes of 1 s each, counted from the next opening.
    expect(sla.firstResponseDueAt).toBe(new Date(opening.getTime() + 30 * MINUTE_MS).toISOString());
    expect(sla.status).toBe('ok');
    // A's conversations are not touched by B's policy.
    expect((await conv('sla-2')).body.conversation.sla.policyId).not.toBe(policy.body.id);

    // A changed policy applies to the open conversations from then on (their clocks keep their start); detaching clears it.
    expect(
      (await b.put(`/api/v1/sla-policies/${policy.body.id}`, { name: 'Office', firstResponseMinutes: 45, businessHoursOnly: true })).status,
    ).toBe(200);
    expect((await b.get(`/api/v1/conversations/${f.conv.b}`)).body.conversation.sla.firstResponseDueAt).toBe(
      new Date(opening.getTime() + 45 * MINUTE_MS).toISOString(),
    );
    expect((await b.put(`/api/v1/chatnet-accounts/${accountB}/sla`, { policyId: null })).status).toBe(200);
    expect((await b.get(`/api/v1/conversations/${f.conv.b}`)).body.conversation.sla).toBeNull();
  });

  it('reassign with nobody else eligible: the breach is raised and the conversation stays with its assignee', async () => {
    const b = f.b.owner;
    const solo = await member(f.stack.url, b, 'agent', 'sla-solo');
    const accountB = (await b.get(`/api/v1/conversations/${f.conv.b}`)).body.conversation.chatnetAccountId;
    expect((await b.put(`/api/v1/chatnet-accounts/${accountB}/assignment`, { mode: 'round_robin', userIds: [solo.id] })).status).toBe(200);
    expect((await b.put(`/api/v1/conversations/${f.conv.b}/assignee`, { userId: solo.id })).status).toBe(200);
    // Business hours off for this one: the clock runs now.
    const policy = await b.post('/api/v1/sla-policies', { name: 'Solo', firstResponseMinutes: 1, onBreach: { reassign: true } });
    expect((await b.put(`/api/v1/chatnet-accounts/${accountB}/sla`, { policyId: policy.body.id })).status).toBe(200);
    const breach = await eventually(async () => breaches().find((e) => e.data.conversationId === f.conv.b), 15_000);
    expect(breach.data).toEqual(expect.objectContaining({ assigneeId: solo.id, target: 'first_response', notify: [] }));
    // The reassignment is decided in the breach's transaction: committed with it.
    const after = (await b.get(`/api/v1/conversations/${f.conv.b}`)).body.conversation;
    expect(after.assigneeId).toBe(solo.id);
    expect(after.sla.status).toBe('breached');
    expect(f.bus.of('conversation.assigned').filter((e) => e.data.conversationId === f.conv.b && e.data.reason === 'sla_breach')).toEqual([]);
  }, 30_000);
});
