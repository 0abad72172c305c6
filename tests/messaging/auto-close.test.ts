import { Client as PgClient } from 'pg';
import { createLogger } from '@crm/logger';
import { eventually, freePort } from '@crm/testing';
import { messagingRules as rules } from '@crm/validation';
import type { Client } from '../support/http';
import { inboxFixture, member, type InboxFixture } from './inbox-support';
import { connectPatiently } from '../support/patient-client';

// Issue #29 item 3: PUT/GET /api/v1/settings/inbox gains autoCloseAfterMinutes, autoCloseMessage, outOfHoursMessage and
// csat (a partial update); an active conversation whose last message is ours closes after that many idle minutes
// (a "minute" is 1 s here: SERVICE_LEVEL_MINUTE_MS=1000), its message sent first, within 2 s of the due time and once
// across two instances; the out-of-hours reply goes once per conversation and closed period, marked source "auto".
const MINUTE_MS = 1000;
const UIDS = ['ac-close', 'ac-replied', 'ac-later', 'ac-replan', 'ac-ooh-1', 'ac-ooh-2', ...Array.from({ length: 6 }, (_, i) => `ac-multi-${i}`)];

describe('auto-close and the out-of-hours reply', () => {
  let f: InboxFixture;
  let agent: { api: Client; id: string };
  let db: PgClient;
  const inbox = '/api/v1/settings/inbox';
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const put = (body: unknown) => f.a.owner.put(inbox, body);
  const conversation = async (id: string) => (await f.a.owner.get(`/api/v1/conversations/${id}`)).body;
  const send = async (id: string, content: string) => {
    const res = await f.a.owner.post(`/api/v1/conversations/${id}/messages`, { content });
    expect(res.status).toBe(201);
    return res.body;
  };
  const networkSends = (threadId: string) => f.connector.sent.filter((s) => s.threadId === threadId);
  const timers = async (ids: string[]) =>
    (await db.query('SELECT count(*)::int AS n FROM conversation_auto_close WHERE conversation_id = ANY($1::uuid[])', [ids])).rows[0].n as number;
  const closedEvents = (id: string) =>
    f.bus.of('conversation.status_changed').filter((e) => e.data.conversationId === id && e.data.status === 'closed');

  beforeAll(async () => {
    // The account's send budget for automatic messages (5 per 10 s by default) would delay a burst of auto-closes.
    f = await inboxFixture('auto-close', UIDS, {
      SERVICE_LEVEL_MINUTE_MS: String(MINUTE_MS),
      SEND_LIMITS: 'total=1500/day,100/10s;ui=1000/day,50/10s;auto=300/day,50/10s',
    });
    agent = await member(f.stack.url, f.a.owner, 'agent', 'ac-agent');
    db = await connectPatiently(f.stack.databaseUrl('messaging'));
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await f?.stop();
  });

  describe('settings', () => {
    it('GET shows every setting with its default, for any role', async () => {
      const res = await agent.api.get(inbox);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        agentVisibility: 'all',
        autoCloseAfterMinutes: null,
        autoCloseMessage: null,
        outOfHoursMessage: null,
        csat: { enabled: false, message: rules.DEFAULT_CSAT_MESSAGE },
      });
    });

    it('PUT: 403 for an agent, 400 naming the field, and a partial update keeps what it does not name', async () => {
      expect((await agent.api.put(inbox, { autoCloseAfterMinutes: 5 })).status).toBe(403);
      const bad: Array<[unknown, string]> = [
        [{}, 'agentVisibility'],
        [{ autoCloseAfterMinutes: 0 }, 'autoCloseAfterMinutes'],
        [{ autoCloseAfterMinutes: 1.5 }, 'autoCloseAfterMinutes'],
        [{ autoCloseAfterMinutes: '5' }, 'autoCloseAfterMinutes'],
        [{ autoCloseAfterMinutes: rules.AUTO_CLOSE_MAX_MINUTES + 1 }, 'autoCloseAfterMinutes'],
        [{ autoCloseMessage: 7 }, 'autoCloseMessage'],
        [{ outOfHoursMessage: 'x'.repeat(rules.AUTO_MESSAGE_MAX + 1) }, 'outOfHoursMessage'],
        [{ csat: true }, 'csat'],
        [{ csat: { enabled: 'yes' } }, 'csat.enabled'],
        [{ csat: { enabled: true, message: '  ' } }, 'csat.message'],
      ];
      for (const [body, field] of bad) {
        const res = await put(body);
        expect([res.status, fieldOf(res)]).toEqual([400, field]);
      }
      const first = await put({
        autoCloseAfterMinutes: 30,
        autoCloseMessage: 'Closing this chat, write any time.',
        outOfHoursMessage: 'We are closed.',
      });
      expect(first.status).toBe(200);
      const second = await put({ agentVisibility: 'all', csat: { enabled: false } });
      expect(second.status).toBe(200);
      expect(second.body).toEqual({
        agentVisibility: 'all',
        autoCloseAfterMinutes: 30,
        autoCloseMessage: 'Closing this chat, write any time.',
        outOfHoursMessage: 'We are closed.',
        csat: { enabled: false, message: rules.DEFAULT_CSAT_MESSAGE },
      });
      expect((await agent.api.get(inbox)).body).toEqual(second.body);
      // null clears; another org keeps its own settings.
      const cleared = await put({ autoCloseAfterMinutes: null, autoCloseMessage: null, outOfHoursMessage: null });
      expect(cleared.body).toEqual(expect.objectContaining({ autoCloseAfterMinutes: null, autoCloseMessage: null, outOfHoursMessage: null }));
      expect((await f.b.owner.get(inbox)).body.autoCloseAfterMinutes).toBeNull();
    });
  });

  describe('auto-close', () => {
    it('closes a conversation whose last message is ours within 2 s of the due time, its message sent first (source auto, changedBy null)', async () => {
      const id = f.conv['ac-close'];
      expect((await put({ autoCloseAfterMinutes: 1, autoCloseMessage: 'Closing this chat, write any time.' })).status).toBe(200);
      const ours = await send(id, 'Here is your answer.');
      const closed = await eventually(async () => {
        const c = await conversation(id);
        return c.conversation.status === 'closed' ? c : undefined;
      }, 15_000);
      const due = Date.parse(ours.sentAt) + 1 * MINUTE_MS;
      const closedAt = Date.parse(closed.conversation.lastActivityAt);
      expect(closedAt - due).toBeGreaterThanOrEqual(-100);
      expect(closedAt - due).toBeLessThan(2000);
      // Ours, then the auto-close message: what reached the network, in order, and as stored.
      expect(networkSends('ac-close').map((s) => s.content)).toEqual(['Here is your answer.', 'Closing this chat, write any time.']);
      const [last] = closed.messages;
      expect(last).toEqual(expect.objectContaining({ content: 'Closing this chat, write any time.', source: 'auto', sentByUserId: null }));
      const event = await eventually(async () => closedEvents(id)[0]);
      expect(event.data).toEqual(expect.objectContaining({ status: 'closed', previousStatus: 'active', changedBy: null }));
      expect(await timers([id])).toBe(0);
    });

    it('does not close a conversation whose contact wrote last; one whose last message is ours closes meanwhile', async () => {
      expect((await put({ autoCloseAfterMinutes: 3, autoCloseMessage: null })).status).toBe(200);
      const replied = f.conv['ac-replied'];
      const later = f.conv['ac-later'];
      await send(replied, 'Anything else?');
      const ours = await send(later, 'Anything else?');
      expect(await timers([replied, later])).toBe(2);
      await f.bus.inbound(f.a.orgId, { accountId: f.accountA, fromUid: 'ac-replied', content: 'Yes, one more thing' });
      // Stored in the transaction that removed its timer: nothing is left to close it.
      await eventually(async () => ((await conversation(replied)).messages[0].content === 'Yes, one more thing' ? true : undefined));
      expect(await timers([replied])).toBe(0);
      // The other one, armed at the same time, closes (no auto-close message now) — by then the first would have too.
      await eventually(async () => ((await conversation(later)).conversation.status === 'closed' ? true : undefined), 15_000);
      expect(Date.parse((await conversation(later)).conversation.lastActivityAt)).toBeGreaterThanOrEqual(
        Date.parse(ours.sentAt) + 3 * MINUTE_MS - 100,
      );
      expect(networkSends('ac-later').map((s) => s.content)).toEqual(['Anything else?']);
      expect((await conversation(replied)).conversation.status).toBe('active');
    });

    it('a change of the setting re-plans: null cancels every timer, a new value counts from the last message (one idle longer closes now)', async () => {
      expect((await put({ autoCloseAfterMinutes: 600 })).status).toBe(200);
      const id = f.conv['ac-replan'];
      const ours = await send(id, 'Take your time.');
      expect(await timers([id])).toBe(1);
      expect((await put({ autoCloseAfterMinutes: null })).status).toBe(200);
      expect(await timers([id])).toBe(0);
      // 2 "minutes" after our message: its due time is then, measured from the message.
      expect((await put({ autoCloseAfterMinutes: 2 })).status).toBe(200);
      const { rows } = await db.query('SELECT due_at FROM conversation_auto_close WHERE conversation_id = $1', [id]);
      expect(Math.abs(rows[0].due_at.getTime() - Math.max(Date.parse(ours.sentAt) + 2 * MINUTE_MS, Date.now()))).toBeLessThan(1500);
      await eventually(async () => ((await conversation(id)).conversation.status === 'closed' ? true : undefined), 15_000);
      expect((await put({ autoCloseAfterMinutes: null })).status).toBe(200);
    });

    it('two messaging instances close each conversation once', async () => {
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
        expect((await put({ autoCloseAfterMinutes: 1, autoCloseMessage: 'Bye for now.' })).status).toBe(200);
        const uids = UIDS.filter((u) => u.startsWith('ac-multi-'));
        const ids = uids.map((u) => f.conv[u]);
        await Promise.all(ids.map((id) => send(id, 'Done, anything else?')));
        await eventually(async () => {
          const statuses = await Promise.all(ids.map(async (id) => (await conversation(id)).conversation.status));
          return statuses.every((s) => s === 'closed') ? true : undefined;
        }, 20_000);
        expect(await timers(ids)).toBe(0);
        for (const [i, uid] of uids.entries()) {
          expect(networkSends(uid).filter((s) => s.content === 'Bye for now.')).toHaveLength(1);
          const stored = (await conversation(ids[i])).messages.filter((m: any) => m.content === 'Bye for now.');
          expect(stored).toHaveLength(1);
          await eventually(async () => closedEvents(ids[i])[0]);
          expect(closedEvents(ids[i])).toHaveLength(1);
        }
      } finally {
        await second.stop();
        await put({ autoCloseAfterMinutes: null, autoCloseMessage: null });
      }
    }, 40_000);
  });

  describe('out-of-hours reply', () => {
    const replies = async (id: string) =>
      (await db.query("SELECT count(*)::int AS n FROM auto_messages WHERE conversation_id = $1 AND kind = 'out_of_hours'", [id])).rows[0].n as number;

    it('answers a contact writing while the hours are closed, once per conversation and closed period, with source auto', async () => {
      // Open only on a weekday three days from now: closed now, until then.
      const day = (new Date().getUTCDay() + 3) % 7;
      expect(
        (await f.a.owner.put('/api/v1/settings/business-hours', { timezone: 'UTC', days: [{ day, open: '09:00', close: '17:00' }], holidays: [] }))
          .status,
      ).toBe(200);
      expect((await put({ outOfHoursMessage: 'We are closed; we answer from 9:00.' })).status).toBe(200);
      const id = f.conv['ac-ooh-1'];
      await f.bus.inbound(f.a.orgId, { accountId: f.accountA, fromUid: 'ac-ooh-1', content: 'Are you there?' });
      const reply = await eventually(async () =>
        (await conversation(id)).messages.find((m: any) => m.content === 'We are closed; we answer from 9:00.'),
      );
      expect(reply).toEqual(expect.objectContaining({ source: 'auto', sentByUserId: null }));
      await f.bus.inbound(f.a.orgId, { accountId: f.accountA, fromUid: 'ac-ooh-1', content: 'Hello??' });
      await eventually(async () => ((await conversation(id)).messages.some((m: any) => m.content === 'Hello??') ? true : undefined));
      // Decided in the transaction that stored the second message: no second reply for this closed period.
      expect(await replies(id)).toBe(1);
      expect(networkSends('ac-ooh-1').filter((s) => s.content.startsWith('We are closed'))).toHaveLength(1);
      // The auto reply does not start an auto-close (the contact waits for a person).
      expect(await timers([id])).toBe(0);
      // Another closed period (the hours now open again two days from now, not three): one more reply.
      const sooner = (new Date().getUTCDay() + 2) % 7;
      expect(
        (
          await f.a.owner.put('/api/v1/settings/business-hours', {
            timezone: 'UTC',
            days: [{ day: sooner, open: '09:00', close: '17:00' }],
            holidays: [],
          })
        ).status,
      ).toBe(200);
      await f.bus.inbound(f.a.orgId, { accountId: f.accountA, fromUid: 'ac-ooh-1', content: 'Anyone?' });
      await eventually(async () => ((await conversation(id)).messages.filter((m: any) => m.source === 'auto').length === 2 ? true : undefined));
      expect(await replies(id)).toBe(2);
    });

    it('says nothing while the account is open (its own hours override the org’s), nor without a message', async () => {
      const id = f.conv['ac-ooh-2'];
      const allWeek = Array.from({ length: 7 }, (_, day) => ({ day, open: '00:00', close: '23:59' }));
      expect(
        (await f.a.owner.put(`/api/v1/chatnet-accounts/${f.accountA}/business-hours`, { timezone: 'UTC', days: allWeek, holidays: [] })).status,
      ).toBe(200);
      const open = (await f.a.owner.get(`/api/v1/settings/business-hours/status?chatnetAccountId=${f.accountA}`)).body.open;
      await f.bus.inbound(f.a.orgId, { accountId: f.accountA, fromUid: 'ac-ooh-2', content: 'Morning!' });
      await eventually(async () => ((await conversation(id)).messages.some((m: any) => m.content === 'Morning!') ? true : undefined));
      if (open) expect(await replies(id)).toBe(0);
      expect((await put({ outOfHoursMessage: null })).status).toBe(200);
      expect((await f.a.owner.put(`/api/v1/chatnet-accounts/${f.accountA}/business-hours`, 'null')).status).toBe(200);
      await f.bus.inbound(f.a.orgId, { accountId: f.accountA, fromUid: 'ac-ooh-2', content: 'Still there?' });
      await eventually(async () => ((await conversation(id)).messages.some((m: any) => m.content === 'Still there?') ? true : undefined));
      expect(await replies(id)).toBe(0);
    });
  });
});
