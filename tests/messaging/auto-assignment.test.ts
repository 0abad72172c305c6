import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '@crm/logger';
import { eventually, freePort } from '@crm/testing';
import { auditEntryFor } from '../support/audit';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// Auto-assignment per chat-network account: GET/PUT /chatnet-accounts/:id/assignment (team leads and up, users
// vouched for by identity, the account by the connector), and round robin over the listed users for conversations
// created by inbound messages: inactive users skipped, the open-conversation cap, returning contacts, nobody
// eligible → unassigned, and a strictly fair turn shared by two messaging instances on one database and broker.
describe('auto-assignment: account settings and round robin', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let lead: { api: Client; id: string };
  let agent: { api: Client; id: string };
  let u1: { api: Client; id: string };
  let u2: { api: Client; id: string };
  let u3: { api: Client; id: string };
  let outsider: { api: Client; id: string };
  let accountB: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-rr-'));
  const serviceEnv = () => ({ CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir });

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({ services: ['messaging'], serviceEnv: { messaging: serviceEnv() } });
    bus = await eventBus(stack);
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    lead = await member(stack.url, a.owner, 'team_lead', 'lead');
    agent = await member(stack.url, a.owner, 'agent', 'agent');
    u1 = await member(stack.url, a.owner, 'agent', 'one');
    u2 = await member(stack.url, a.owner, 'agent', 'two');
    u3 = await member(stack.url, a.owner, 'agent', 'three');
    outsider = await member(stack.url, b.owner, 'agent', 'outsider');
    accountB = connector.account(b.orgId);
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  const settings = (id: string) => `/api/v1/chatnet-accounts/${id}/assignment`;
  const put = (as: Client, id: string, body: unknown) => as.put(settings(id), body);
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  let seq = 0;
  /** A message from the network on `accountId`; a new thread (and contact) unless given. */
  const inbound = (accountId: string, fromUid = `uid-${++seq}`, threadId = fromUid) =>
    bus.inbound(a.orgId, { accountId, fromUid, threadId, fromName: fromUid });
  /** The account's conversation of a thread, once stored (its assignee is decided in the same transaction). */
  const conversationOf = (accountId: string, threadId: string) =>
    eventually(async () => {
      const res = await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}&limit=100`);
      return res.body.data.find((c: any) => c.threadId === threadId);
    }, 15_000);
  /** Deliver one message on a new thread and return who the new conversation went to. */
  const next = async (accountId: string, fromUid?: string, threadId?: string) => {
    const sent = await inbound(accountId, fromUid, threadId);
    return (await conversationOf(accountId, sent.threadId)).assigneeId as string | null;
  };
  /** The repairs (issue #29 item 5, tests/messaging/assignment-repair.test.ts) are off unless set. */
  const repairsOff = { onlyOnline: false, replyTimeoutMinutes: null, onTimeout: null, drainBacklog: false };
  const deactivate = async (id: string) => expect((await a.owner.del(`/api/v1/users/${id}`)).status).toBe(204);

  describe('settings', () => {
    it('GET: an account never configured is manual with nobody listed; any member of the org may read it', async () => {
      const accountId = connector.account(a.orgId);
      const res = await agent.api.get(settings(accountId));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ chatnetAccountId: accountId, mode: 'manual', userIds: [], maxOpenPerUser: null, ...repairsOff });
    });

    it('PUT (team lead) → 200 with the settings; GET returns them; assignment.updated is in the audit log', async () => {
      const accountId = connector.account(a.orgId);
      const res = await put(lead.api, accountId, { mode: 'round_robin', userIds: [u1.id, u2.id], maxOpenPerUser: 5 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ chatnetAccountId: accountId, mode: 'round_robin', userIds: [u1.id, u2.id], maxOpenPerUser: 5, ...repairsOff });
      expect((await agent.api.get(settings(accountId))).body).toEqual(res.body);
      const entry = await auditEntryFor(a.owner, 'assignment.updated', accountId);
      expect(entry).toEqual(expect.objectContaining({ actorId: lead.id, actorType: 'user', resourceType: 'chatnet_account' }));
      expect(entry.details).toEqual({ mode: 'round_robin', userIds: [u1.id, u2.id], maxOpenPerUser: 5, ...repairsOff, previous: null });

      // A second PUT replaces everything (no cap = null) and the entry says what it was before.
      const back = await put(a.owner, accountId, { mode: 'manual', userIds: [] });
      expect(back.body).toEqual({ chatnetAccountId: accountId, mode: 'manual', userIds: [], maxOpenPerUser: null, ...repairsOff });
      const second = await eventually(async () => {
        const e = await auditEntryFor(a.owner, 'assignment.updated', accountId);
        return e.details.mode === 'manual' ? e : undefined;
      });
      expect(second.details.previous).toEqual({ mode: 'round_robin', userIds: [u1.id, u2.id], maxOpenPerUser: 5, ...repairsOff });

      // The gateway's socket audience and crm's contact visibility follow the account's users through the bus.
      const announced = await eventually(async () => {
        const seen = bus.of('chatnet_account.assignment_updated').filter((e) => e.orgId === a.orgId && e.data.chatnetAccountId === accountId);
        return seen.length >= 2 ? seen : undefined;
      });
      expect(announced.map((e) => e.data)).toEqual([
        { chatnetAccountId: accountId, mode: 'round_robin', userIds: [u1.id, u2.id], maxOpenPerUser: 5 },
        { chatnetAccountId: accountId, mode: 'manual', userIds: [], maxOpenPerUser: null },
      ]);
    });

    it("403 for agents; 404 for another org's account or a malformed id (GET and PUT)", async () => {
      const accountId = connector.account(a.orgId);
      const byAgent = await put(agent.api, accountId, { mode: 'round_robin', userIds: [agent.id] });
      expect(byAgent.status).toBe(403);
      expect(byAgent.body.error.code).toBe('permission_denied');
      expect((await agent.api.get(settings(accountId))).body.mode).toBe('manual');

      for (const res of [await a.owner.get(settings(accountB)), await put(a.owner, accountB, { mode: 'manual', userIds: [] })]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      expect((await a.owner.get(settings('not-an-id'))).status).toBe(404);
      expect((await put(a.owner, 'not-an-id', { mode: 'manual', userIds: [] })).status).toBe(404);
      // B's own settings are untouched and B reads them.
      expect((await b.owner.get(settings(accountB))).body.mode).toBe('manual');
    });

    it('400 naming the field: mode, userIds (missing, too many, malformed, twice, unknown, inactive, another org), maxOpenPerUser', async () => {
      const accountId = connector.account(a.orgId);
      const gone = await member(stack.url, a.owner, 'agent', 'leaver');
      await deactivate(gone.id);
      const many = Array.from({ length: 101 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
      const cases: Array<[unknown, string]> = [
        [{ userIds: [] }, 'mode'],
        [{ mode: 'random', userIds: [] }, 'mode'],
        [{ mode: 'round_robin' }, 'userIds'],
        [{ mode: 'round_robin', userIds: 'all' }, 'userIds'],
        [{ mode: 'round_robin', userIds: many }, 'userIds'],
        [{ mode: 'round_robin', userIds: [u1.id, 'x'] }, 'userIds.1'],
        [{ mode: 'round_robin', userIds: [u1.id, u1.id] }, 'userIds.1'],
        [{ mode: 'round_robin', userIds: [u1.id, u1.id.toUpperCase()] }, 'userIds.1'],
        [{ mode: 'round_robin', userIds: ['00000000-0000-4000-8000-000000000000'] }, 'userIds.0'],
        [{ mode: 'round_robin', userIds: [u1.id, gone.id] }, 'userIds.1'],
        [{ mode: 'round_robin', userIds: [outsider.id] }, 'userIds.0'],
        [{ mode: 'round_robin', userIds: [u1.id], maxOpenPerUser: 0 }, 'maxOpenPerUser'],
        [{ mode: 'round_robin', userIds: [u1.id], maxOpenPerUser: 10_001 }, 'maxOpenPerUser'],
        [{ mode: 'round_robin', userIds: [u1.id], maxOpenPerUser: 1.5 }, 'maxOpenPerUser'],
        [{ mode: 'round_robin', userIds: [u1.id], maxOpenPerUser: '3' }, 'maxOpenPerUser'],
      ];
      for (const [body, field] of cases) {
        const res = await put(a.owner, accountId, body);
        expect({ body, status: res.status, field: fieldOf(res) }).toEqual({ body, status: 400, field });
      }
      expect((await a.owner.get(settings(accountId))).body.mode).toBe('manual');
      // The bounds themselves are fine.
      expect((await put(a.owner, accountId, { mode: 'round_robin', userIds: [u1.id], maxOpenPerUser: 10_000 })).status).toBe(200);
      expect((await put(a.owner, accountId, { mode: 'round_robin', userIds: [u1.id], maxOpenPerUser: null })).body.maxOpenPerUser).toBeNull();
    });
  });

  describe('round robin', () => {
    it('rotates over the listed users, skips an inactive one, respects the cap, and leaves the rest unassigned', async () => {
      const accountId = connector.account(a.orgId);
      const leaver = await member(stack.url, a.owner, 'agent', 'rr leaver');
      expect((await put(lead.api, accountId, { mode: 'round_robin', userIds: [u1.id, leaver.id, u2.id], maxOpenPerUser: 2 })).status).toBe(200);
      await deactivate(leaver.id);

      // u1, (leaver skipped), u2, u1, u2: then both hold 2 open conversations.
      const got = [];
      for (let i = 0; i < 4; i++) got.push(await next(accountId));
      expect(got).toEqual([u1.id, u2.id, u1.id, u2.id]);
      // Everyone at the cap: stays unassigned.
      expect(await next(accountId)).toBeNull();

      // Closing one of u1's conversations frees a place; the next new conversation goes to u1.
      const mine = await a.owner.get(`/api/v1/conversations?assigneeId=${u1.id}&limit=100`);
      expect((await a.owner.post(`/api/v1/conversations/${mine.body.data[0].id}/close`)).status).toBe(200);
      expect(await next(accountId)).toBe(u1.id);

      // Each assignment was announced as made by nobody (the system); the events come through the outbox and the
      // bus, after the answers above (the third one was still on its way once on a loaded machine).
      const toU1 = () =>
        bus.of('conversation.assigned').filter((e) => e.orgId === a.orgId && e.data.assignedBy === null && e.data.assigneeId === u1.id);
      expect((await eventually(async () => (toU1().length >= 3 ? toU1() : undefined), 10_000)).length).toBeGreaterThanOrEqual(3);
    });

    it('a manual account, an empty list, or only inactive users: new conversations stay unassigned', async () => {
      const manual = connector.account(a.orgId);
      expect((await put(lead.api, manual, { mode: 'manual', userIds: [u1.id] })).status).toBe(200);
      expect(await next(manual)).toBeNull();

      const empty = connector.account(a.orgId);
      expect((await put(lead.api, empty, { mode: 'round_robin', userIds: [] })).status).toBe(200);
      expect(await next(empty)).toBeNull();

      const inactive = connector.account(a.orgId);
      const leaver = await member(stack.url, a.owner, 'agent', 'only one');
      expect((await put(lead.api, inactive, { mode: 'round_robin', userIds: [leaver.id] })).status).toBe(200);
      await deactivate(leaver.id);
      expect(await next(inactive)).toBeNull();
    });

    it('a returning contact keeps its previous assignee while eligible, without using up a turn', async () => {
      const accountId = connector.account(a.orgId);
      expect((await put(lead.api, accountId, { mode: 'round_robin', userIds: [u1.id, u2.id, u3.id] })).status).toBe(200);
      expect(await next(accountId, 'returning', 'returning-1')).toBe(u1.id);
      expect(await next(accountId)).toBe(u2.id);
      // The same contact in a new thread: back to u1; the turn stays with u3.
      expect(await next(accountId, 'returning', 'returning-2')).toBe(u1.id);
      expect(await next(accountId)).toBe(u3.id);

      // u1 no longer listed: the returning contact takes the normal turn.
      expect((await put(lead.api, accountId, { mode: 'round_robin', userIds: [u2.id, u3.id] })).status).toBe(200);
      // The cursor (index 0 after u3's turn) now points at u2.
      expect(await next(accountId, 'returning', 'returning-3')).toBe(u2.id);
    });

    it('two messaging instances share one fair turn: 30 new contacts → exactly 10 each, each conversation once', async () => {
      // A second instance on the same database, broker and exchange: both consume inbound messages.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const messaging = require('@crm/messaging');
      // Its logger notes which conversations it assigned, to show that both instances took part.
      const log = createLogger('messaging-second', 'silent');
      const bySecond: string[] = [];
      log.debug = ((obj: any, msg?: string) => void (msg === 'conversation auto-assigned' && bySecond.push(obj.conversationId))) as typeof log.debug;
      const second = await messaging.start(
        messaging.loadConfig({
          ...stack.env,
          ...serviceEnv(),
          DATABASE_URL: stack.databaseUrl('messaging'),
          GRPC_PORT: String(await freePort()),
          HTTP_PORT: String(await freePort()),
        }),
        log,
      );
      try {
        const accountId = connector.account(a.orgId);
        expect((await put(lead.api, accountId, { mode: 'round_robin', userIds: [u1.id, u2.id, u3.id] })).status).toBe(200);
        const uids = Array.from({ length: 30 }, (_, i) => `burst-${i}`);
        await Promise.all(uids.map((uid) => inbound(accountId, uid)));
        const convs: any[] = await eventually(async () => {
          const res = await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}&limit=100`);
          return res.body.data.length === 30 ? res.body.data : undefined;
        }, 30_000);
        expect(new Set(convs.map((c) => c.threadId)).size).toBe(30);
        const per = new Map<string, number>();
        for (const c of convs) per.set(c.assigneeId, (per.get(c.assigneeId) ?? 0) + 1);
        expect(Object.fromEntries(per)).toEqual({ [u1.id]: 10, [u2.id]: 10, [u3.id]: 10 });
        // One conversation.assigned per conversation, none twice.
        const ids = new Set(convs.map((c) => c.id));
        const assigned = await eventually(async () => {
          const e = bus.of('conversation.assigned').filter((x) => ids.has(x.data.conversationId));
          return e.length >= 30 ? e : undefined;
        });
        expect(assigned).toHaveLength(30);
        expect(new Set(assigned.map((e) => e.data.conversationId)).size).toBe(30);
        expect(bySecond.length).toBeGreaterThan(0);
        expect(bySecond.length).toBeLessThan(30);
      } finally {
        await second.stop();
      }
    }, 60_000);
  });
});
