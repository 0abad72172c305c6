import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { type Pool } from '@crm/db';
import { wakeSnoozed } from '@crm/messaging';
import { eventually, testPool } from '@crm/testing';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { eventBus, orgWithKey } from './support';

// Conversation status: PUT /conversations/:id/status with pending and snoozed beside active/closed/archived,
// a snooze ending at snoozedUntil (messaging's timer: within 2 s of it, no poll) or when the contact writes
// again (the sandbox network through the gateway, the real connector and crm), and
// conversation.status_changed for every change, the old archive/close/reopen routes included.
describe('conversation status and snooze', () => {
  let stack: Stack;
  let db: Pool;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let agent: { api: Client; id: string };
  let accountId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-status-'));
  const conv: Record<string, string> = {};

  const inbound = (fromUid: string, content: string) =>
    a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid, fromName: fromUid, content });

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      serviceEnv: {
        messaging: { ATTACHMENTS_DIR: dir },
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' },
      },
    });
    bus = await eventBus(stack);
    db = testPool(stack.databaseUrl('messaging'), 2);
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    agent = await member(stack.url, a.owner, 'agent');
    accountId = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' })).body.id;
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    await eventually(async () => {
      const scan = await a.owner.post(`/sandbox/accounts/${accountId}/scan`, {});
      return scan.status === 200 && scan.body.status === 'connected' ? true : undefined;
    });
    for (const uid of ['uid-1', 'uid-2', 'uid-3']) expect((await inbound(uid, `hello from ${uid}`)).status).toBe(200);
    const list = await eventually(async () => {
      const res = await a.owner.get('/api/v1/conversations?limit=100');
      return res.body.data.length === 3 ? res.body.data : undefined;
    });
    for (const c of list) conv[c.threadId] = c.id;
  }, 90_000);
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const setStatus = (as: Client, id: string, body: object) => as.put(`/api/v1/conversations/${id}/status`, body);
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const statusEvent = (id: string, match: (d: any) => boolean) =>
    eventually(async () => bus.of('conversation.status_changed').find((e) => e.data.conversationId === id && match(e.data)));
  const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();
  /**
   * The marker for "announced once": the ids of the conversation.status_changed events to `status` messaging's
   * outbox holds for `ids`, each committed with its change (so once the change shows, a second one would show
   * too), after the bus has received every one of them (so a bus count taken now is complete).
   */
  const announced = async (ids: string[], status: string): Promise<string[]> => {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM outbox WHERE type = 'conversation.status_changed' AND data->>'conversationId' = ANY($1::text[]) AND data->>'status' = $2`,
      [ids, status],
    );
    const onBus = () => new Set(bus.of('conversation.status_changed').map((e) => e.id));
    await eventually(async () => (rows.every((r) => onBus().has(r.id)) ? true : undefined));
    return rows.map((r) => r.id);
  };

  it('PUT status pending → 200 with the conversation; conversation.status_changed says who and from what', async () => {
    const res = await setStatus(agent.api, conv['uid-1'], { status: 'pending' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ id: conv['uid-1'], status: 'pending', snoozedUntil: null, assigneeId: null }));
    const event = await statusEvent(conv['uid-1'], (d) => d.status === 'pending');
    expect(event.orgId).toBe(a.orgId);
    expect(event.data).toEqual({
      conversationId: conv['uid-1'],
      contactId: res.body.contactId,
      chatnetAccountId: accountId,
      assigneeId: null,
      status: 'pending',
      previousStatus: 'active',
      snoozedUntil: null,
      changedBy: agent.id,
    });
    expect((await a.owner.get(`/api/v1/conversations/${conv['uid-1']}`)).body.conversation.status).toBe('pending');
  });

  it('400: unknown or missing status, snoozed without / with a past / with an impossible snoozedUntil, snoozedUntil with another status', async () => {
    const id = conv['uid-2'];
    const cases: Array<[object, string]> = [
      [{ status: 'sleeping' }, 'status'],
      [{}, 'status'],
      [{ status: 'snoozed' }, 'snoozedUntil'],
      [{ status: 'snoozed', snoozedUntil: null }, 'snoozedUntil'],
      [{ status: 'snoozed', snoozedUntil: new Date(Date.now() - 60_000).toISOString() }, 'snoozedUntil'],
      [{ status: 'snoozed', snoozedUntil: '2031-02-30T10:00:00Z' }, 'snoozedUntil'],
      [{ status: 'snoozed', snoozedUntil: '10000-01-01T00:00:00Z' }, 'snoozedUntil'],
      [{ status: 'snoozed', snoozedUntil: 'tomorrow' }, 'snoozedUntil'],
      [{ status: 'closed', snoozedUntil: inFuture(3_600_000) }, 'snoozedUntil'],
    ];
    for (const [body, field] of cases) {
      const res = await setStatus(a.owner, id, body);
      expect([JSON.stringify(body), res.status, fieldOf(res)]).toEqual([JSON.stringify(body), 400, field]);
    }
    expect((await a.owner.get(`/api/v1/conversations/${id}`)).body.conversation.status).toBe('active');
  });

  it("another org's conversation and malformed ids are 404", async () => {
    expect((await setStatus(b.owner, conv['uid-2'], { status: 'closed' })).status).toBe(404);
    expect((await setStatus(a.owner, 'nope', { status: 'closed' })).status).toBe(404);
    expect((await a.owner.get(`/api/v1/conversations/${conv['uid-2']}`)).body.conversation.status).toBe('active');
  });

  it('a snoozed conversation shows snoozedUntil, is listed under status=snoozed, and returns to active at that time', async () => {
    // 5 s ahead: the checks while it is snoozed are over well before, even on a loaded machine.
    const until = inFuture(5_000);
    const res = await setStatus(a.owner, conv['uid-2'], { status: 'snoozed', snoozedUntil: until });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ status: 'snoozed', snoozedUntil: until }));
    const listed = await a.owner.get('/api/v1/conversations?status=snoozed');
    expect(listed.body.data.map((c: any) => [c.id, c.snoozedUntil])).toEqual([[conv['uid-2'], until]]);
    expect((await a.owner.get('/api/v1/conversations?status=pending')).body.data.map((c: any) => c.id)).toEqual([conv['uid-1']]);
    expect((await a.owner.get('/api/v1/conversations?status=later')).status).toBe(400);
    const snoozed = await statusEvent(conv['uid-2'], (d) => d.status === 'snoozed');
    expect(snoozed.data).toEqual(expect.objectContaining({ previousStatus: 'active', snoozedUntil: until, changedBy: a.user.id }));

    // The timer wakes it within 2 s of snoozedUntil (no fixed poll decides when): measured when it was woken (its
    // event's occurredAt, stamped in the wake-up's transaction), not when a request of this loaded process saw it.
    await eventually(
      async () => ((await a.owner.get(`/api/v1/conversations/${conv['uid-2']}`)).body.conversation.status === 'active' ? true : undefined),
      15_000,
      25,
    );
    const woke = await statusEvent(conv['uid-2'], (d) => d.status === 'active');
    expect(Date.parse(woke.occurredAt)).toBeGreaterThanOrEqual(Date.parse(until));
    expect(Date.parse(woke.occurredAt) - Date.parse(until)).toBeLessThan(2_000);
    expect(woke.data).toEqual(expect.objectContaining({ previousStatus: 'snoozed', snoozedUntil: null, changedBy: null }));
    const detail = await a.owner.get(`/api/v1/conversations/${conv['uid-2']}`);
    expect(detail.body.conversation).toEqual(expect.objectContaining({ status: 'active', snoozedUntil: null }));
    // Woken once, announced once.
    expect(await announced([conv['uid-2']], 'active')).toHaveLength(1);
    expect(bus.of('conversation.status_changed').filter((e) => e.data.conversationId === conv['uid-2'] && e.data.status === 'active')).toHaveLength(
      1,
    );
  });

  it('a snoozed conversation returns to active at once when the contact writes again', async () => {
    const res = await setStatus(a.owner, conv['uid-3'], { status: 'snoozed', snoozedUntil: inFuture(3_600_000) });
    expect(res.body.status).toBe('snoozed');
    expect((await inbound('uid-3', 'are you there?')).status).toBe(200);
    const woke = await statusEvent(conv['uid-3'], (d) => d.status === 'active');
    expect(woke.data).toEqual(expect.objectContaining({ previousStatus: 'snoozed', snoozedUntil: null, changedBy: null }));
    const detail = await a.owner.get(`/api/v1/conversations/${conv['uid-3']}`);
    expect(detail.body.conversation).toEqual(expect.objectContaining({ status: 'active', snoozedUntil: null, messageCount: 2 }));
    // So does a pending one.
    expect((await inbound('uid-1', 'any news?')).status).toBe(200);
    await statusEvent(conv['uid-1'], (d) => d.status === 'active' && d.previousStatus === 'pending');
  });

  it('messages arriving together into a closed conversation reopen it once and are all counted', async () => {
    // A conversation of its own, so the other tests' counts of status events stay theirs.
    await bus.inbound(a.orgId, { accountId, fromUid: 'uid-burst', content: 'first' });
    const listed = () => a.owner.get('/api/v1/conversations?limit=100').then((r) => r.body.data.find((c: any) => c.threadId === 'uid-burst'));
    const id = (await eventually(listed)).id;
    expect((await setStatus(a.owner, id, { status: 'closed' })).body.status).toBe('closed');
    // Published back to back, as the connector relays a burst: they reach messaging's consumer in one batch or a few.
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const base = Date.now();
    await Promise.all(
      texts.map((content, i) => bus.inbound(a.orgId, { accountId, fromUid: 'uid-burst', content, sentAt: new Date(base + i).toISOString() })),
    );
    const after = await eventually(async () => {
      const c = await listed();
      return c.messageCount === 1 + texts.length ? c : undefined;
    });
    expect(after).toEqual(
      expect.objectContaining({ status: 'active', unreadCount: 1 + texts.length, lastMessage: expect.objectContaining({ content: 'five' }) }),
    );
    await statusEvent(id, (d) => d.status === 'active' && d.previousStatus === 'closed');
    // Every message is counted (above), so every change they made is committed with its event.
    expect(await announced([id], 'active')).toHaveLength(1);
    expect(bus.of('conversation.status_changed').filter((e) => e.data.conversationId === id && e.data.status === 'active')).toHaveLength(1);
    expect(
      bus
        .of('message.received')
        .filter((e) => e.data.conversationId === id)
        .map((e) => e.data.content),
    ).toEqual(['first', ...texts]);
  });

  it('archive, close and reopen still work, publish conversation.status_changed, and reopen ends a snooze', async () => {
    const id = conv['uid-2'];
    const archived = await a.owner.post(`/api/v1/conversations/${id}/archive`);
    expect(archived.body.conversation.status).toBe('archived');
    await statusEvent(id, (d) => d.status === 'archived' && d.previousStatus === 'active');
    await eventually(async () => bus.of('conversation.archived').find((e) => e.data.id === id));
    expect((await a.owner.post(`/api/v1/conversations/${id}/close`)).body.conversation.status).toBe('closed');
    await statusEvent(id, (d) => d.status === 'closed' && d.previousStatus === 'archived');
    // Closing again changes nothing and announces nothing.
    const closedEvents = () => bus.of('conversation.status_changed').filter((e) => e.data.conversationId === id && e.data.status === 'closed').length;
    expect((await a.owner.post(`/api/v1/conversations/${id}/close`)).status).toBe(200);

    expect((await setStatus(a.owner, id, { status: 'snoozed', snoozedUntil: inFuture(3_600_000) })).body.status).toBe('snoozed');
    const reopened = await a.owner.post(`/api/v1/conversations/${id}/reopen`);
    expect(reopened.body.conversation).toEqual(expect.objectContaining({ status: 'active', snoozedUntil: null }));
    await statusEvent(id, (d) => d.status === 'active' && d.previousStatus === 'snoozed' && d.changedBy === a.user.id);
    expect(closedEvents()).toBe(1);
  });

  it('several instances waking at once wake (and announce) each due conversation exactly once', async () => {
    // 60 due snoozes written behind the API, then three wake-up runs at once on their own pools beside the
    // service's own job: each conversation must come back once, with one event.
    const url = stack.databaseUrl('messaging');
    const setup = testPool(url, 2);
    const ids = Array.from({ length: 60 }, () => randomUUID());
    await setup.query(
      `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, status, snoozed_until)
       SELECT id, $2, $3, 'user', 'bulk-' || id::text, 'snoozed', now() - interval '1 second' FROM unnest($1::uuid[]) AS id`,
      [ids, a.orgId, accountId],
    );
    const pools = [testPool(url, 2), testPool(url, 2), testPool(url, 2)];
    try {
      const woken = await Promise.all(pools.map((pool) => wakeSnoozed({ pool } as never)));
      expect(woken.reduce((n, w) => n + w, 0)).toBeLessThanOrEqual(ids.length);
      // The service's own job may have claimed some (SKIP LOCKED hands each row to one waker) and still be committing.
      const active = async () =>
        (
          await setup.query(
            `SELECT count(*)::int AS n FROM conversations WHERE id = ANY($1::uuid[]) AND status = 'active' AND snoozed_until IS NULL`,
            [ids],
          )
        ).rows[0].n;
      await eventually(async () => ((await active()) === ids.length ? true : undefined));
      // Every one is active, so every wake-up is committed, each with its event.
      const events = await announced(ids, 'active');
      expect(events).toHaveLength(ids.length);
      const onBus = bus.of('conversation.status_changed').filter((e) => ids.includes(e.data.conversationId));
      expect(onBus).toHaveLength(ids.length);
      expect(new Set(onBus.map((e) => e.data.conversationId)).size).toBe(ids.length);
    } finally {
      await Promise.all([setup, ...pools].map((p) => p.end()));
    }
  });
});
