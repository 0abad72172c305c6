import { createLogger } from '@crm/logger';
import { eventually, freePort } from '@crm/testing';
import { Client as PgClient } from 'pg';
import type { Client } from '../support/http';
import { inboxFixture, InboxFixture, member } from './inbox-support';
import { connectPatiently } from '../support/patient-client';

// Assignment that repairs itself (issue #29 item 5), through the gateway against the real stack: the account
// assignment's onlyOnline, replyTimeoutMinutes + onTimeout and drainBacklog (GET/PUT, 400/403/404), round robin
// skipping users not online, reply timeouts (reassign, unassign, notify_leads) fired within 2 s of due and once with
// two messaging instances, the backlog handed out when a conversation closes or a user comes online, and a deactivated
// or offline user's conversations released to the account's mode; every move a conversation.assigned with
// assignedBy null and its reason. A service-level minute is a second here (SERVICE_LEVEL_MINUTE_MS).
const MINUTE_MS = 1000;

describe('assignment that repairs itself', () => {
  let f: InboxFixture;
  let db: PgClient;
  let lead: { api: Client; id: string };
  let agent: { api: Client; id: string };

  beforeAll(async () => {
    f = await inboxFixture('repair', [], { SERVICE_LEVEL_MINUTE_MS: String(MINUTE_MS) });
    db = await connectPatiently(f.stack.databaseUrl('messaging'));
    lead = await member(f.stack.url, f.a.owner, 'team_lead', 'repair lead');
    agent = await member(f.stack.url, f.a.owner, 'agent', 'repair agent');
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await f?.stop();
  });

  const settings = (id: string) => `/api/v1/chatnet-accounts/${id}/assignment`;
  const put = async (accountId: string, body: Record<string, unknown>) => {
    const res = await lead.api.put(settings(accountId), { mode: 'round_robin', ...body });
    expect(res.status).toBe(200);
    return res.body;
  };
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const agents = (n: number, name: string) =>
    Promise.all(Array.from({ length: n }, (_, i) => member(f.stack.url, f.a.owner, 'agent', `${name} ${i}`)));
  let seq = 0;
  /** A new contact writes on `accountId`: its conversation once stored (its assignee chosen in the same transaction). */
  const newConversation = async (accountId: string) => {
    const uid = `repair-${++seq}`;
    await f.bus.inbound(f.a.orgId, { accountId, fromUid: uid, fromName: uid });
    return eventually(async () => {
      const res = await f.a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}&limit=100`);
      return res.body.data.find((c: any) => c.threadId === uid);
    }, 15_000);
  };
  const assignedEvents = (conversationId: string, reason?: string) =>
    f.bus.of('conversation.assigned').filter((e) => e.data.conversationId === conversationId && (reason === undefined || e.data.reason === reason));
  const nextAssigned = (conversationId: string, reason: string, count = 1) =>
    eventually(async () => {
      const e = assignedEvents(conversationId, reason);
      return e.length >= count ? e : undefined;
    }, 15_000);
  /** When messaging stored the conversation's latest inbound message (its message.received). */
  const receivedAt = (conversationId: string) =>
    eventually(
      async () =>
        f.bus
          .of('message.received')
          .filter((e) => e.data.conversationId === conversationId)
          .at(-1)?.occurredAt,
    );
  /** Publish identity's announcement and wait until messaging's repair consumer has applied it. */
  const announce = async (type: 'user.availability_changed' | 'user.deactivated', data: Record<string, unknown>, occurredAt?: string) => {
    const id = await f.bus.publish(type, f.a.orgId, data, undefined, occurredAt);
    await eventually(
      async () =>
        (await db.query(`SELECT 1 FROM processed_events WHERE event_id = $1 AND consumer LIKE '%.messaging.assignment-repair'`, [id])).rowCount ===
          1 || undefined,
      15_000,
    );
  };
  const availability = (userId: string, status: 'online' | 'away' | 'offline', occurredAt?: string) =>
    announce(
      'user.availability_changed',
      { userId, status, previousStatus: status === 'online' ? 'offline' : 'online', chosenStatus: status },
      occurredAt,
    );
  const timerOf = async (conversationId: string) =>
    (await db.query(`SELECT due_at FROM reply_timeouts WHERE conversation_id = $1`, [conversationId])).rows[0];
  const timerGone = (conversationId: string) => eventually(async () => ((await timerOf(conversationId)) ? undefined : true), 15_000);
  const conversation = async (id: string) => (await f.a.owner.get(`/api/v1/conversations/${id}`)).body.conversation;
  /** The move's delay past the due time (inbound stored + the window), by the services' own timestamps. */
  const delayPastDue = async (conversationId: string, event: { occurredAt: string }, minutes: number) =>
    Date.parse(event.occurredAt) - (Date.parse(await receivedAt(conversationId)) + minutes * MINUTE_MS);

  describe('settings', () => {
    it('GET: never configured → the repairs off; PUT (team lead) → 200 with them; GET returns them', async () => {
      const accountId = f.connector.account(f.a.orgId);
      expect((await agent.api.get(settings(accountId))).body).toEqual({
        chatnetAccountId: accountId,
        mode: 'manual',
        userIds: [],
        maxOpenPerUser: null,
        onlyOnline: false,
        replyTimeoutMinutes: null,
        onTimeout: null,
        drainBacklog: false,
      });
      const saved = await put(accountId, {
        userIds: [agent.id],
        onlyOnline: true,
        replyTimeoutMinutes: 15,
        onTimeout: 'notify_leads',
        drainBacklog: true,
      });
      expect(saved).toEqual({
        chatnetAccountId: accountId,
        mode: 'round_robin',
        userIds: [agent.id],
        maxOpenPerUser: null,
        onlyOnline: true,
        replyTimeoutMinutes: 15,
        onTimeout: 'notify_leads',
        drainBacklog: true,
      });
      expect((await agent.api.get(settings(accountId))).body).toEqual(saved);
      // A PUT replaces everything: left out = off.
      expect(await put(accountId, { userIds: [] })).toEqual(
        expect.objectContaining({ onlyOnline: false, replyTimeoutMinutes: null, onTimeout: null, drainBacklog: false }),
      );
    });

    it("400 naming the field; 403 for agents; 404 for another org's account", async () => {
      const accountId = f.connector.account(f.a.orgId);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ onlyOnline: 'yes' }, 'onlyOnline'],
        [{ drainBacklog: 1 }, 'drainBacklog'],
        [{ replyTimeoutMinutes: 0, onTimeout: 'reassign' }, 'replyTimeoutMinutes'],
        [{ replyTimeoutMinutes: 1.5, onTimeout: 'reassign' }, 'replyTimeoutMinutes'],
        [{ replyTimeoutMinutes: 10_081, onTimeout: 'reassign' }, 'replyTimeoutMinutes'],
        [{ replyTimeoutMinutes: 5 }, 'onTimeout'],
        [{ replyTimeoutMinutes: 5, onTimeout: 'escalate' }, 'onTimeout'],
        [{ onTimeout: 'unassign' }, 'replyTimeoutMinutes'],
      ];
      for (const [extra, field] of cases) {
        const body = { mode: 'round_robin', userIds: [], ...extra };
        const res = await lead.api.put(settings(accountId), body);
        expect({ body, status: res.status, field: fieldOf(res) }).toEqual({ body, status: 400, field });
      }
      const byAgent = await agent.api.put(settings(accountId), { mode: 'manual', userIds: [], drainBacklog: true });
      expect(byAgent.status).toBe(403);
      const accountB = f.connector.account(f.b.orgId);
      expect((await lead.api.put(settings(accountB), { mode: 'manual', userIds: [], onlyOnline: true })).status).toBe(404);
      expect((await lead.api.get(settings(accountB))).status).toBe(404);
      expect((await agent.api.get(settings(accountId))).body.drainBacklog).toBe(false);
    });
  });

  describe('availability', () => {
    it('onlyOnline: round robin skips a user not online; going offline releases their conversations (user_offline); a late, older announcement changes nothing', async () => {
      const accountId = f.connector.account(f.a.orgId);
      const [u1, u2] = await agents(2, 'online rr');
      await put(accountId, { userIds: [u1.id, u2.id], onlyOnline: true });
      const c1 = await newConversation(accountId);
      const c2 = await newConversation(accountId);
      expect([c1.assigneeId, c2.assigneeId]).toEqual([u1.id, u2.id]);

      // Away: skipped, but keeps what they have.
      await availability(u2.id, 'away');
      expect((await newConversation(accountId)).assigneeId).toBe(u1.id);
      expect((await newConversation(accountId)).assigneeId).toBe(u1.id);
      expect((await conversation(c2.id)).assigneeId).toBe(u2.id);

      // Offline: their open conversations of the account go round (u1 is the only one online).
      await availability(u2.id, 'offline');
      const [moved] = await nextAssigned(c2.id, 'user_offline');
      expect(moved.data).toEqual(expect.objectContaining({ assigneeId: u1.id, previousAssigneeId: u2.id, assignedBy: null, reason: 'user_offline' }));
      expect((await conversation(c2.id)).assigneeId).toBe(u1.id);

      // Online again: in the rotation again.
      const back = new Date().toISOString();
      await availability(u2.id, 'online', back);
      const got = [(await newConversation(accountId)).assigneeId, (await newConversation(accountId)).assigneeId];
      expect(got.sort()).toEqual([u1.id, u2.id].sort());
      // An "offline" written before that arrives late: ignored (u2 stays online, nothing released).
      await availability(u2.id, 'offline', new Date(Date.parse(back) - 10_000).toISOString());
      const row = await db.query(`SELECT status FROM user_availability WHERE user_id = $1`, [u2.id]);
      expect(row.rows[0].status).toBe('online');
      const mine = await f.a.owner.get(`/api/v1/conversations?assigneeId=${u2.id}&limit=100`);
      expect(mine.body.data).toHaveLength(1);
    });

    it('a user never announced counts as online (a fresh install assigns)', async () => {
      const accountId = f.connector.account(f.a.orgId);
      const [fresh] = await agents(1, 'fresh');
      await put(accountId, { userIds: [fresh.id], onlyOnline: true });
      expect((await newConversation(accountId)).assigneeId).toBe(fresh.id);
    });
  });

  describe('reply timeout', () => {
    it('reassign: the next eligible user, the current assignee excluded (reply_timeout), within 2 s of due; their reply stops the timer', async () => {
      const accountId = f.connector.account(f.a.orgId);
      const [u1, u2] = await agents(2, 'reassign');
      await put(accountId, { userIds: [u1.id, u2.id], replyTimeoutMinutes: 3, onTimeout: 'reassign' });
      const c = await newConversation(accountId);
      expect(c.assigneeId).toBe(u1.id);
      const [moved] = await nextAssigned(c.id, 'reply_timeout');
      expect(moved.data).toEqual(
        expect.objectContaining({ assigneeId: u2.id, previousAssigneeId: u1.id, assignedBy: null, reason: 'reply_timeout' }),
      );
      const delay = await delayPastDue(c.id, moved, 3);
      expect(delay).toBeGreaterThanOrEqual(-50);
      expect(delay).toBeLessThan(2000);
      // u2 has a window of their own; answering ends it.
      expect(await timerOf(c.id)).toBeDefined();
      expect((await u2.api.post(`/api/v1/conversations/${c.id}/messages`, { content: 'On it' })).status).toBe(201);
      await timerGone(c.id);
      expect(assignedEvents(c.id, 'reply_timeout')).toHaveLength(1);
      expect((await conversation(c.id)).assigneeId).toBe(u2.id);
    });

    it('a message nobody waits on (no reply timeout, no SLA policy) costs the bookkeeping no transaction; one with a timeout is claimed', async () => {
      const claims = async (eventId: string) =>
        (
          await db.query<{ consumer: string }>(
            `SELECT regexp_replace(consumer, '^.*\\.messaging\\.', '') AS consumer FROM processed_events WHERE event_id = $1 ORDER BY 1`,
            [eventId],
          )
        ).rows.map((r) => r.consumer);
      const receivedEvent = (conversationId: string) =>
        eventually(async () => f.bus.of('message.received').find((e) => e.data.conversationId === conversationId), 15_000);
      // The bookkeeping queue's consumer is settled once a later event of the same queue is applied: a user event always is.
      const [u1] = await agents(1, 'idle bookkeeping');
      const quiet = f.connector.account(f.a.orgId);
      const plain = await receivedEvent((await newConversation(quiet)).id);
      const timed = f.connector.account(f.a.orgId);
      await put(timed, { userIds: [u1.id], replyTimeoutMinutes: 30, onTimeout: 'unassign' });
      const waiting = await receivedEvent((await newConversation(timed)).id);
      await availability(u1.id, 'online');
      // The inbound batch stored the first (its own claim), and the bookkeeping took neither share for it.
      expect(await claims(plain.id)).toEqual([]);
      // The second starts a reply timer: the repair share claimed and applied it; the SLA share has nothing to do.
      expect(await claims(waiting.id)).toEqual(['assignment-repair']);
      expect(await timerOf(waiting.data.conversationId)).toBeDefined();
    });

    it('unassign: back to unassigned (reply_timeout, assignedBy null) within 2 s of due; a reply in time clears the timer', async () => {
      const accountId = f.connector.account(f.a.orgId);
      const [u1] = await agents(1, 'unassign');
      await put(accountId, { userIds: [u1.id], replyTimeoutMinutes: 1, onTimeout: 'unassign' });
      const c = await newConversation(accountId);
      expect(c.assigneeId).toBe(u1.id);
      const [moved] = await nextAssigned(c.id, 'reply_timeout');
      expect(moved.data).toEqual(expect.objectContaining({ assigneeId: null, previousAssigneeId: u1.id, assignedBy: null, reason: 'reply_timeout' }));
      const delay = await delayPastDue(c.id, moved, 1);
      expect(delay).toBeGreaterThanOrEqual(-50);
      expect(delay).toBeLessThan(2000);
      expect((await conversation(c.id)).assigneeId).toBeNull();
      await timerGone(c.id);

      // Answered before the due time: the timer is gone, nothing moves.
      await put(accountId, { userIds: [u1.id], replyTimeoutMinutes: 30, onTimeout: 'unassign' });
      const answered = await newConversation(accountId);
      await eventually(async () => (await timerOf(answered.id)) ?? undefined);
      expect((await u1.api.post(`/api/v1/conversations/${answered.id}/messages`, { content: 'Hello!' })).status).toBe(201);
      await timerGone(answered.id);
      expect(assignedEvents(answered.id, 'reply_timeout')).toHaveLength(0);
    });

    it('notify_leads: the conversation stays; conversation.reply_overdue (for automation to tell the team leads) within 2 s of due', async () => {
      const accountId = f.connector.account(f.a.orgId);
      const [u1] = await agents(1, 'notify');
      await put(accountId, { userIds: [u1.id], replyTimeoutMinutes: 1, onTimeout: 'notify_leads' });
      const c = await newConversation(accountId);
      const overdue = await eventually(async () => f.bus.of('conversation.reply_overdue').find((e) => e.data.conversationId === c.id), 15_000);
      expect(overdue.data).toEqual(
        expect.objectContaining({
          conversationId: c.id,
          chatnetAccountId: accountId,
          assigneeId: u1.id,
          replyTimeoutMinutes: 1,
          dueAt: expect.any(String),
          waitingSince: expect.any(String),
        }),
      );
      const delay = await delayPastDue(c.id, overdue, 1);
      expect(delay).toBeGreaterThanOrEqual(-50);
      expect(delay).toBeLessThan(2000);
      await timerGone(c.id);
      expect((await conversation(c.id)).assigneeId).toBe(u1.id);
      expect(assignedEvents(c.id, 'reply_timeout')).toHaveLength(0);
    });

    it('two messaging instances: each timer fires once, within 2 s of due', async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const messaging = require('@crm/messaging');
      const second = await messaging.start(
        messaging.loadConfig({
          ...f.stack.env,
          ...f.serviceEnv,
          DATABASE_URL: f.stack.databaseUrl('messaging'),
          GRPC_PORT: String(await freePort()),
          HTTP_PORT: String(await freePort()),
        }),
        createLogger('messaging-second', 'silent'),
      );
      try {
        const accountId = f.connector.account(f.a.orgId);
        const users = await agents(3, 'twice');
        await put(accountId, { userIds: users.map((u) => u.id), replyTimeoutMinutes: 2, onTimeout: 'unassign' });
        const convs = await Promise.all(Array.from({ length: 8 }, () => newConversation(accountId)));
        for (const c of convs) {
          const [moved] = await nextAssigned(c.id, 'reply_timeout');
          const delay = await delayPastDue(c.id, moved, 2);
          expect(delay).toBeGreaterThanOrEqual(-50);
          expect(delay).toBeLessThan(2000);
        }
        for (const c of convs) await timerGone(c.id);
        for (const c of convs) expect(assignedEvents(c.id, 'reply_timeout')).toHaveLength(1);
      } finally {
        await second.stop();
      }
    }, 45_000);
  });

  describe('backlog', () => {
    it('a conversation closed: the oldest unassigned conversation of the account goes to its assignee (backlog), within the cap', async () => {
      const accountId = f.connector.account(f.a.orgId);
      const [u1] = await agents(1, 'drain close');
      await put(accountId, { userIds: [u1.id], maxOpenPerUser: 1, drainBacklog: true });
      const first = await newConversation(accountId);
      expect(first.assigneeId).toBe(u1.id);
      const older = await newConversation(accountId);
      const newer = await newConversation(accountId);
      expect([older.assigneeId, newer.assigneeId]).toEqual([null, null]);
      expect((await u1.api.post(`/api/v1/conversations/${first.id}/close`)).status).toBe(200);
      const [moved] = await nextAssigned(older.id, 'backlog');
      expect(moved.data).toEqual(expect.objectContaining({ assigneeId: u1.id, previousAssigneeId: null, assignedBy: null, reason: 'backlog' }));
      // One place freed, one conversation taken (in the transaction that applied the close): the newer one waits.
      const closed = f.bus.of('conversation.status_changed').find((e) => e.data.conversationId === first.id && e.data.status === 'closed')!;
      expect(
        (await db.query(`SELECT 1 FROM processed_events WHERE event_id = $1 AND consumer LIKE '%.messaging.assignment-repair'`, [closed.id]))
          .rowCount,
      ).toBe(1);
      expect((await conversation(newer.id)).assigneeId).toBeNull();
    });

    it('a user comes online: the oldest unassigned conversations, up to their cap (backlog)', async () => {
      const accountId = f.connector.account(f.a.orgId);
      const [u1] = await agents(1, 'drain online');
      await availability(u1.id, 'offline');
      await put(accountId, { userIds: [u1.id], onlyOnline: true, maxOpenPerUser: 2, drainBacklog: true });
      const waiting = [await newConversation(accountId), await newConversation(accountId), await newConversation(accountId)];
      expect(waiting.map((c) => c.assigneeId)).toEqual([null, null, null]);
      await availability(u1.id, 'online');
      for (const c of waiting.slice(0, 2)) {
        const [moved] = await nextAssigned(c.id, 'backlog');
        expect(moved.data).toEqual(expect.objectContaining({ assigneeId: u1.id, assignedBy: null, reason: 'backlog' }));
      }
      expect((await conversation(waiting[2].id)).assigneeId).toBeNull();
    });
  });

  describe('release', () => {
    it('a user with many open conversations goes offline: released in one go over the rest, within their caps, the remainder unassigned', async () => {
      const accountId = f.connector.account(f.a.orgId);
      const [x, y, z] = await agents(3, 'many');
      await put(accountId, { userIds: [x.id, y.id, z.id], onlyOnline: true, maxOpenPerUser: 12 });
      const uids = Array.from({ length: 30 }, (_, i) => `many-${i}`);
      for (const uid of uids) await f.bus.inbound(f.a.orgId, { accountId, fromUid: uid, fromName: uid });
      const convs: any[] = await eventually(async () => {
        const res = await f.a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}&limit=100`);
        return res.body.data.length === 30 ? res.body.data : undefined;
      }, 20_000);
      const xs = convs.filter((c) => c.assigneeId === x.id).map((c) => c.id as string);
      expect(xs).toHaveLength(10);

      await availability(x.id, 'offline');
      // One transaction moves all ten (each announced once).
      await eventually(async () => xs.every((id) => assignedEvents(id, 'user_offline').length === 1) || undefined, 15_000);
      const to = xs.map((id) => assignedEvents(id, 'user_offline')[0].data.assigneeId);
      // y and z hold 10 each and may take 2 more: 4 move, 6 wait unassigned.
      expect(to.filter((id) => id === y.id)).toHaveLength(2);
      expect(to.filter((id) => id === z.id)).toHaveLength(2);
      expect(to.filter((id) => id === null)).toHaveLength(6);
      expect((await f.a.owner.get(`/api/v1/conversations?assigneeId=${x.id}&limit=100`)).body.data).toHaveLength(0);
    });

    it('a deactivated user: round robin accounts hand their conversations round (user_deactivated), manual ones unassign them', async () => {
      const rr = f.connector.account(f.a.orgId);
      const manual = f.connector.account(f.a.orgId);
      const [leaver, stayer] = await agents(2, 'release');
      await put(rr, { userIds: [leaver.id, stayer.id] });
      await lead.api.put(settings(manual), { mode: 'manual', userIds: [leaver.id] });
      const mine = [await newConversation(rr), await newConversation(rr), await newConversation(rr)];
      expect(mine.map((c) => c.assigneeId)).toEqual([leaver.id, stayer.id, leaver.id]);
      const handled = await newConversation(manual);
      expect((await lead.api.put(`/api/v1/conversations/${handled.id}/assignee`, { userId: leaver.id })).status).toBe(200);

      expect((await f.a.owner.del(`/api/v1/users/${leaver.id}`)).status).toBe(204);
      await announce('user.deactivated', { userId: leaver.id });
      for (const c of [mine[0], mine[2]]) {
        const [moved] = await nextAssigned(c.id, 'user_deactivated');
        expect(moved.data).toEqual(
          expect.objectContaining({ assigneeId: stayer.id, previousAssigneeId: leaver.id, assignedBy: null, reason: 'user_deactivated' }),
        );
      }
      const [unassigned] = await nextAssigned(handled.id, 'user_deactivated');
      expect(unassigned.data).toEqual(expect.objectContaining({ assigneeId: null, previousAssigneeId: leaver.id, assignedBy: null }));
      const left = await f.a.owner.get(`/api/v1/conversations?assigneeId=${leaver.id}&limit=100`);
      expect(left.body.data).toHaveLength(0);
    });
  });
});
