import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@redis/client';
import { loadConfig, start as startMessaging, sweepOrphanAttachments } from '@crm/messaging';
import { eventually, infra, testPool } from '@crm/testing';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { orgWithKey } from './support';

// Scheduled messages (issue #26 item 5) through the gateway with the real connector (sandbox network) and crm:
// POST /conversations/:id/messages with sendAt → 202; GET/PUT/DELETE /scheduled-messages; sent by messaging's timer
// (ClaimLoop with nextDueInMs) within 2 s of sendAt, once across two messaging instances and across a restart, as
// the normal send would have sent it; cancelIfReplied cancelled by the contact's message; a send the connector
// cannot make fails with its error.
describe('scheduled messages', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let agent: { api: Client; id: string };
  let accountId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-scheduled-'));
  const conv: Record<string, string> = {};
  const second: { stop(): Promise<void> }[] = [];

  const inbound = (fromUid: string, content: string) =>
    a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid, fromName: fromUid, content });
  const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
  const schedule = (as: Client, convId: string, body: object) => as.post(`/api/v1/conversations/${convId}/messages`, body);
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  /** The scheduled message once it left `scheduled`. */
  const settled = (id: string, timeoutMs = 15_000) =>
    eventually(
      async () => {
        const res = await a.owner.get(`/api/v1/scheduled-messages/${id}`);
        return res.body.status !== 'scheduled' ? res.body : undefined;
      },
      timeoutMs,
      25,
    );
  const networkSent = async () =>
    (await a.owner.get(`/sandbox/accounts/${accountId}/sent`)).body.data as Array<{ content: string; threadId: string }>;
  const storedMessage = async (convId: string, messageId: string) =>
    (await a.owner.get(`/api/v1/conversations/${convId}?limit=100`)).body.messages.find((m: any) => m.id === messageId);
  /** How late the stored message went out, in ms past sendAt. */
  const lateness = async (s: { conversationId: string; messageId: string; sendAt: string }) =>
    Date.parse((await storedMessage(s.conversationId, s.messageId)).sentAt) - Date.parse(s.sendAt);

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      serviceEnv: {
        // A send left pending by a crash may be taken over after 1 s (the crash-recovery test).
        messaging: { ATTACHMENTS_DIR: dir, IDEMPOTENCY_PENDING_TIMEOUT_MS: '1000' },
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' },
      },
    });
    a = await orgWithKey(stack.url, 'Sched A');
    b = await orgWithKey(stack.url, 'Sched B');
    agent = await member(stack.url, a.owner, 'agent', 'sched agent');
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
  }, 120_000);
  afterAll(async () => {
    for (const s of second) await s.stop().catch(() => undefined);
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('POST with sendAt → 202 scheduled; it is sent within 2 s of sendAt exactly as a normal send, once', async () => {
    // 4 s ahead: the checks of "nothing went out yet" below are over well before, even on a loaded machine.
    const sendAt = inMs(4_000);
    const res = await schedule(agent.api, conv['uid-1'], { content: 'Reminder: your order ships today', sendAt });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.any(String),
      conversationId: conv['uid-1'],
      content: 'Reminder: your order ships today',
      contentType: 'text',
      attachments: [],
      sendAt,
      cancelIfReplied: false,
      status: 'scheduled',
      messageId: null,
      error: null,
      cancelReason: null,
      createdBy: agent.id,
      createdAt: expect.any(String),
    });
    expect((await a.owner.get(`/api/v1/scheduled-messages/${res.body.id}`)).body).toEqual(res.body);
    // Nothing went out yet.
    expect((await networkSent()).filter((m) => m.content === 'Reminder: your order ships today')).toHaveLength(0);

    const done = await settled(res.body.id);
    expect(done).toEqual({ ...res.body, status: 'sent', messageId: expect.any(String) });
    const late = await lateness(done);
    expect(late).toBeGreaterThanOrEqual(-50);
    expect(late).toBeLessThan(2_000);

    // The stored message is the one a normal send by the same user makes.
    const normal = await agent.api.post(`/api/v1/conversations/${conv['uid-1']}/messages`, { content: 'a normal send' });
    expect(normal.status).toBe(201);
    const [scheduledMsg, normalMsg] = [await storedMessage(conv['uid-1'], done.messageId), await storedMessage(conv['uid-1'], normal.body.id)];
    const shape = (m: any) => ({
      senderName: m.senderName,
      senderUid: m.senderUid,
      sentByUserId: m.sentByUserId,
      source: m.source,
      isFromChatnet: m.isFromChatnet,
      status: m.status,
    });
    expect(shape(scheduledMsg)).toEqual(shape(normalMsg));
    expect(scheduledMsg).toEqual(expect.objectContaining({ content: 'Reminder: your order ships today', sentByUserId: agent.id, source: 'ui' }));
    // The marker: one more due at once; once it is sent, the timer has claimed again after the reminder was sent,
    // so a second send of the reminder would be on the network by now.
    const marker = await schedule(agent.api, conv['uid-1'], { content: 'marker after the reminder', sendAt: inMs(500) });
    expect(marker.status).toBe(202);
    expect((await settled(marker.body.id)).status).toBe('sent');
    expect((await networkSent()).filter((m) => m.content === 'Reminder: your order ships today')).toHaveLength(1);
  });

  it('without sendAt the send is immediate (201), as before', async () => {
    const res = await a.owner.post(`/api/v1/conversations/${conv['uid-3']}/messages`, { content: 'right now', sendAt: null });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(expect.objectContaining({ content: 'right now', status: 'sent' }));
  });

  it('400 naming the field: sendAt in the past, more than 90 days ahead or malformed, cancelIfReplied not a boolean, no content; list and PUT filters', async () => {
    const id = conv['uid-2'];
    const cases: Array<[object, string]> = [
      [{ content: 'x', sendAt: inMs(-60_000) }, 'sendAt'],
      [{ content: 'x', sendAt: inMs(91 * 86_400_000) }, 'sendAt'],
      [{ content: 'x', sendAt: 'next tuesday' }, 'sendAt'],
      [{ content: 'x', sendAt: 12345 }, 'sendAt'],
      [{ content: 'x', sendAt: inMs(60_000), cancelIfReplied: 'yes' }, 'cancelIfReplied'],
      [{ content: '  ', sendAt: inMs(60_000) }, 'content'],
      // A scheduled message quotes nothing: refused, not silently dropped.
      [{ content: 'x', sendAt: inMs(60_000), replyToMessageId: '00000000-0000-4000-8000-000000000001' }, 'replyToMessageId'],
    ];
    for (const [body, field] of cases) {
      const res = await schedule(a.owner, id, body);
      expect([JSON.stringify(body), res.status, fieldOf(res)]).toEqual([JSON.stringify(body), 400, field]);
    }
    // 89 days ahead is fine.
    const far = await schedule(a.owner, id, { content: 'far ahead', sendAt: inMs(89 * 86_400_000) });
    expect(far.status).toBe(202);
    expect((await a.owner.get('/api/v1/scheduled-messages?status=later')).status).toBe(400);
    expect(fieldOf(await a.owner.get('/api/v1/scheduled-messages?conversationId=nope'))).toBe('conversationId');
    const put = (body: object) => a.owner.put(`/api/v1/scheduled-messages/${far.body.id}`, body);
    expect(fieldOf(await put({}))).toBe('content');
    expect(fieldOf(await put({ sendAt: inMs(-1_000) }))).toBe('sendAt');
    expect(fieldOf(await put({ sendAt: inMs(100 * 86_400_000) }))).toBe('sendAt');
    expect(fieldOf(await put({ content: ' ' }))).toBe('content');
    expect((await a.owner.del(`/api/v1/scheduled-messages/${far.body.id}`)).status).toBe(204);
  });

  it('GET lists with {data, pagination}, filtered by conversation and status; PUT changes content and sendAt; DELETE cancels (204), then 409', async () => {
    const first = (await schedule(a.owner, conv['uid-2'], { content: 'first', sendAt: inMs(3_600_000) })).body;
    const later = (await schedule(a.owner, conv['uid-2'], { content: 'later', sendAt: inMs(7_200_000), cancelIfReplied: true })).body;
    const other = (await schedule(a.owner, conv['uid-3'], { content: 'other', sendAt: inMs(3_600_000) })).body;

    const list = await a.owner.get(`/api/v1/scheduled-messages?conversationId=${conv['uid-2']}&status=scheduled`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((m: any) => m.id)).toEqual([later.id, first.id]);
    expect(list.body.pagination).toEqual({ total: 2, page: 1, limit: 20, pages: 1 });
    const paged = await a.owner.get(`/api/v1/scheduled-messages?conversationId=${conv['uid-2']}&status=scheduled&limit=1&page=2`);
    expect(paged.body.data.map((m: any) => m.id)).toEqual([first.id]);
    expect(paged.body.pagination).toEqual({ total: 2, page: 2, limit: 1, pages: 2 });
    const all = (await a.owner.get('/api/v1/scheduled-messages?limit=100')).body.data.map((m: any) => m.id);
    expect(all).toEqual(expect.arrayContaining([first.id, later.id, other.id]));
    const sent = (await a.owner.get('/api/v1/scheduled-messages?status=sent')).body.data;
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(sent.every((m: any) => m.status === 'sent')).toBe(true);

    const newTime = inMs(5_400_000);
    const changed = await a.owner.put(`/api/v1/scheduled-messages/${first.id}`, { content: 'first, edited', sendAt: newTime });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ ...first, content: 'first, edited', sendAt: newTime });
    expect((await a.owner.put(`/api/v1/scheduled-messages/${first.id}`, { content: 'only content' })).body).toEqual(
      expect.objectContaining({ content: 'only content', sendAt: newTime }),
    );

    expect((await a.owner.del(`/api/v1/scheduled-messages/${first.id}`)).status).toBe(204);
    const cancelled = (await a.owner.get(`/api/v1/scheduled-messages/${first.id}`)).body;
    expect(cancelled).toEqual(expect.objectContaining({ status: 'cancelled', cancelReason: null, messageId: null }));
    expect(
      (await a.owner.get(`/api/v1/scheduled-messages?status=cancelled&conversationId=${conv['uid-2']}`)).body.data.map((m: any) => m.id),
    ).toContain(first.id);
    // Only while scheduled.
    expect((await a.owner.del(`/api/v1/scheduled-messages/${first.id}`)).status).toBe(409);
    expect((await a.owner.put(`/api/v1/scheduled-messages/${first.id}`, { content: 'again' })).status).toBe(409);
    const sentOne = sent[0];
    expect((await a.owner.put(`/api/v1/scheduled-messages/${sentOne.id}`, { content: 'too late' })).status).toBe(409);
    expect((await a.owner.del(`/api/v1/scheduled-messages/${sentOne.id}`)).status).toBe(409);
    for (const m of [later, other]) expect((await a.owner.del(`/api/v1/scheduled-messages/${m.id}`)).status).toBe(204);
  });

  it("404: another org's scheduled messages and conversations, malformed and unknown ids", async () => {
    const mine = (await schedule(a.owner, conv['uid-3'], { content: 'org a only', sendAt: inMs(3_600_000) })).body;
    expect((await b.owner.get(`/api/v1/scheduled-messages/${mine.id}`)).status).toBe(404);
    expect((await b.owner.put(`/api/v1/scheduled-messages/${mine.id}`, { content: 'hijack' })).status).toBe(404);
    expect((await b.owner.del(`/api/v1/scheduled-messages/${mine.id}`)).status).toBe(404);
    expect((await b.owner.get('/api/v1/scheduled-messages')).body).toEqual({ data: [], pagination: { total: 0, page: 1, limit: 20, pages: 0 } });
    expect((await b.owner.get(`/api/v1/scheduled-messages?conversationId=${conv['uid-3']}`)).body.data).toEqual([]);
    expect((await schedule(b.owner, conv['uid-3'], { content: 'x', sendAt: inMs(60_000) })).status).toBe(404);
    expect((await a.owner.get('/api/v1/scheduled-messages/nope')).status).toBe(404);
    expect((await a.owner.get('/api/v1/scheduled-messages/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await schedule(a.owner, 'nope', { content: 'x', sendAt: inMs(60_000) })).status).toBe(404);
    expect((await a.owner.get(`/api/v1/scheduled-messages/${mine.id}`)).body.status).toBe('scheduled');
    expect((await a.owner.del(`/api/v1/scheduled-messages/${mine.id}`)).status).toBe(204);
  });

  it('an agent under "assigned" visibility sees only scheduled messages of conversations they can see; the others are 404', async () => {
    expect((await a.owner.put(`/api/v1/conversations/${conv['uid-2']}/assignee`, { userId: agent.id })).status).toBe(200);
    const visible = (await schedule(a.owner, conv['uid-2'], { content: 'for the agent', sendAt: inMs(3_600_000) })).body;
    const hidden = (await schedule(a.owner, conv['uid-3'], { content: 'not for the agent', sendAt: inMs(3_600_000) })).body;
    expect((await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' })).status).toBe(200);
    try {
      const ids = (await agent.api.get('/api/v1/scheduled-messages?status=scheduled&limit=100')).body.data.map((m: any) => m.id);
      expect(ids).toContain(visible.id);
      expect(ids).not.toContain(hidden.id);
      expect((await agent.api.get(`/api/v1/scheduled-messages?conversationId=${conv['uid-3']}`)).body.data).toEqual([]);
      expect((await agent.api.get(`/api/v1/scheduled-messages/${visible.id}`)).status).toBe(200);
      expect((await agent.api.get(`/api/v1/scheduled-messages/${hidden.id}`)).status).toBe(404);
      expect((await agent.api.put(`/api/v1/scheduled-messages/${hidden.id}`, { content: 'x' })).status).toBe(404);
      expect((await agent.api.del(`/api/v1/scheduled-messages/${hidden.id}`)).status).toBe(404);
      expect((await schedule(agent.api, conv['uid-3'], { content: 'x', sendAt: inMs(60_000) })).status).toBe(404);
      // The owner still sees both.
      const owners = (await a.owner.get('/api/v1/scheduled-messages?status=scheduled&limit=100')).body.data.map((m: any) => m.id);
      expect(owners).toEqual(expect.arrayContaining([visible.id, hidden.id]));
      expect((await agent.api.del(`/api/v1/scheduled-messages/${visible.id}`)).status).toBe(204);
    } finally {
      expect((await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'all' })).status).toBe(200);
    }
    expect((await a.owner.del(`/api/v1/scheduled-messages/${hidden.id}`)).status).toBe(204);
  });

  it('cancelIfReplied: a message from the contact after scheduling cancels it (customer_replied); others stay scheduled', async () => {
    const cancelMe = (await schedule(a.owner, conv['uid-1'], { content: 'follow-up if silent', sendAt: inMs(3_600_000), cancelIfReplied: true }))
      .body;
    const keep = (await schedule(a.owner, conv['uid-1'], { content: 'send anyway', sendAt: inMs(3_600_000) })).body;
    const elsewhere = (await schedule(a.owner, conv['uid-2'], { content: 'other chat', sendAt: inMs(3_600_000), cancelIfReplied: true })).body;
    expect(cancelMe).toEqual(expect.objectContaining({ cancelIfReplied: true, status: 'scheduled' }));
    expect((await inbound('uid-1', 'actually, I have a question')).status).toBe(200);
    const done = await settled(cancelMe.id);
    expect(done).toEqual({ ...cancelMe, status: 'cancelled', cancelReason: 'customer_replied' });
    expect((await a.owner.get(`/api/v1/scheduled-messages/${keep.id}`)).body.status).toBe('scheduled');
    expect((await a.owner.get(`/api/v1/scheduled-messages/${elsewhere.id}`)).body.status).toBe('scheduled');
    expect((await a.owner.del(`/api/v1/scheduled-messages/${cancelMe.id}`)).status).toBe(409);
    for (const m of [keep, elsewhere]) expect((await a.owner.del(`/api/v1/scheduled-messages/${m.id}`)).status).toBe(204);
  });

  it('a scheduled message keeps its uploads through the orphan sweep and sends them', async () => {
    const upload = async (name: string, text: string) => {
      const fd = new FormData();
      fd.append('file', new Blob([Buffer.from(text)], { type: 'text/plain' }), name);
      const r = await fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${a.token}` }, body: fd });
      expect(r.status).toBe(201);
      return (await r.json()) as { id: string };
    };
    const [kept, orphan] = [await upload('price-list.txt', 'prices'), await upload('stray.txt', 'nobody sends me')];
    // 5 s ahead: the sweep below runs while it is still only scheduled, even on a loaded machine.
    const res = await schedule(a.owner, conv['uid-2'], { content: 'the price list', attachments: [kept.id], sendAt: inMs(5_000) });
    expect(res.status).toBe(202);
    expect(res.body.attachments).toEqual([expect.objectContaining({ id: kept.id, filename: 'price-list.txt' })]);
    // Both uploads look a day old: the sweeper takes the stray one only.
    const db = testPool(stack.databaseUrl('messaging'), 1);
    try {
      await db.query(`UPDATE attachments SET uploaded_at = now() - interval '25 hours' WHERE id = ANY($1::uuid[])`, [[kept.id, orphan.id]]);
      const config = loadConfig({ ...stack.env, DATABASE_URL: stack.databaseUrl('messaging'), ATTACHMENTS_DIR: dir });
      expect(await sweepOrphanAttachments({ config, pool: db, log: { warn: () => undefined, info: () => undefined } as never })).toBe(1);
      expect((await db.query('SELECT id FROM attachments WHERE id = ANY($1::uuid[])', [[kept.id, orphan.id]])).rows.map((r) => r.id)).toEqual([
        kept.id,
      ]);
    } finally {
      await db.end();
    }
    const done = await settled(res.body.id);
    expect(done.status).toBe('sent');
    expect((await storedMessage(conv['uid-2'], done.messageId)).attachments.map((f: any) => f.id)).toEqual([kept.id]);
    const network = (await networkSent()).filter((m: any) => m.content === 'the price list') as any[];
    expect(network.map((m) => m.attachments.map((f: any) => f.fileName))).toEqual([['price-list.txt']]);
  });

  it('with two messaging instances each scheduled message is sent once, within 2 s of its time, the earlier written later still on time', async () => {
    const other = await startMessaging(
      loadConfig({
        ...stack.env,
        DATABASE_URL: stack.databaseUrl('messaging'),
        GRPC_PORT: '0',
        HTTP_PORT: '0',
        METRICS_PORT: '0',
        ATTACHMENTS_DIR: dir,
      }),
    );
    second.push(other);
    try {
      const made: any[] = [];
      // Written last-first: the earlier ones arrive while both instances sleep for a later one (their NOTIFY re-arms them).
      // The first is due 6 s after the first request: all six are written before any falls due, even on a loaded machine.
      for (const [i, ms] of [
        [0, 8_000],
        [1, 7_000],
        [2, 6_500],
        [3, 6_500],
        [4, 6_500],
        [5, 6_000],
      ] as const) {
        const res = await schedule(a.owner, conv[`uid-${(i % 3) + 1}`], { content: `twin-${i}`, sendAt: inMs(ms) });
        expect(res.status).toBe(202);
        made.push(res.body);
      }
      const done = await Promise.all(made.map((m) => settled(m.id)));
      for (const d of done) {
        expect(d.status).toBe('sent');
        const late = await lateness(d);
        // The failure names the message and says how late (or early) it went.
        expect([d.content, late >= -50 && late < 2_000 ? 'on time' : `${late} ms past sendAt`]).toEqual([d.content, 'on time']);
      }
      // The marker: one more due at once; once it is sent, both instances' timers have claimed past the twins' times
      // (either may send it), so a second send of a twin would be on the network by now.
      const marker = await schedule(a.owner, conv['uid-1'], { content: 'marker after the twins', sendAt: inMs(500) });
      expect(marker.status).toBe(202);
      expect((await settled(marker.body.id)).status).toBe('sent');
      const network = await networkSent();
      for (const m of made) expect([m.content, network.filter((n) => n.content === m.content).length]).toEqual([m.content, 1]);
      for (const d of done) {
        const msgs = (await a.owner.get(`/api/v1/conversations/${d.conversationId}?limit=100`)).body.messages.filter(
          (m: any) => m.content === d.content,
        );
        expect(msgs.map((m: any) => m.id)).toEqual([d.messageId]);
      }
    } finally {
      await second.pop()?.stop();
    }
  }, 60_000);

  it('survives a restart: one due while messaging was down is sent when it starts, one due after the restart within 2 s of its time', async () => {
    // Due in 3 s (messaging is stopped before then, even on a loaded machine) and in 15 s (after the restart is over).
    const whileDown = (await schedule(a.owner, conv['uid-3'], { content: 'due while down', sendAt: inMs(3_000) })).body;
    const after = (await schedule(a.owner, conv['uid-3'], { content: 'due after restart', sendAt: inMs(15_000) })).body;
    await stack.stopService('messaging');
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(whileDown.sendAt) + 500 - Date.now())));
    const startedAt = Date.now();
    await stack.startService('messaging');
    const startedIn = Date.now() - startedAt;
    const first = await settled(whileDown.id);
    expect(first.status).toBe('sent');
    // Sent as the service came up (the loop looks at the table when it starts).
    expect(Date.parse((await storedMessage(first.conversationId, first.messageId)).sentAt) - startedAt).toBeLessThan(startedIn + 2_000);
    expect(Date.now()).toBeLessThan(Date.parse(after.sendAt)); // the restart did not take past the second one's time
    const second = await settled(after.id, 25_000);
    expect(second.status).toBe('sent');
    const late = await lateness(second);
    expect(late).toBeGreaterThanOrEqual(-50);
    expect(late).toBeLessThan(2_000);
    const network = await networkSent();
    expect(network.filter((m) => m.content === 'due while down')).toHaveLength(1);
    expect(network.filter((m) => m.content === 'due after restart')).toHaveLength(1);
  }, 60_000);

  it('a crash between the network send and the commit: the next claim stores the message the network took, and sends nothing again', async () => {
    const content = 'sent before the crash';
    // 5 s ahead: the crash's traces below are in place before it falls due, even on a loaded machine.
    const res = await schedule(a.owner, conv['uid-3'], { content, sendAt: inMs(5_000) });
    expect(res.status).toBe(202);
    const id = res.body.id;
    // What a crashed instance leaves: its idempotency key (the scheduled message's id) pending in messaging, and the
    // connector's record that the network took the message under that clientMessageId.
    const db = testPool(stack.databaseUrl('messaging'), 1);
    const redis = createClient({ url: infra.redisUrl });
    redis.on('error', () => undefined);
    await redis.connect();
    try {
      const print = createHash('sha256')
        .update(JSON.stringify([accountId, 'user', 'uid-3', content, 'text', []]))
        .digest('hex');
      await db.query(
        `INSERT INTO send_requests (org_id, idempotency_key, fingerprint, status, created_at) VALUES ($1, $2, $3, 'pending', now() - interval '5 seconds')`,
        [a.orgId, id, print],
      );
      const tookAt = new Date().toISOString();
      await redis.set(
        `${stack.env.REDIS_PREFIX}chatnet:sent:${accountId}:${id}`,
        JSON.stringify({ chatnetMessageId: 'net-before-crash', sentAt: tookAt }),
        { EX: 600 },
      );
      const done = await settled(id);
      expect(done).toEqual(expect.objectContaining({ status: 'sent', messageId: expect.any(String), error: null }));
      expect(await storedMessage(conv['uid-3'], done.messageId)).toEqual(expect.objectContaining({ content, sentAt: tookAt }));
      // The network was not asked again.
      expect((await networkSent()).filter((m) => m.content === content)).toHaveLength(0);
      const stored = (await a.owner.get(`/api/v1/conversations/${conv['uid-3']}?limit=100`)).body.messages.filter((m: any) => m.content === content);
      expect(stored).toHaveLength(1);
    } finally {
      await db.end();
      redis.destroy();
    }
  });

  it('a send the connector cannot make (the network unreachable) fails with its error', async () => {
    // 6 s ahead: the connector is down before it falls due, even on a loaded machine.
    const doomed = (await schedule(a.owner, conv['uid-1'], { content: 'into the void', sendAt: inMs(6_000) })).body;
    await stack.stopService('chatnet-connector');
    const done = await settled(doomed.id);
    expect(done).toEqual({ ...doomed, status: 'failed', error: expect.stringMatching(/\S/), messageId: null });
    expect((await a.owner.put(`/api/v1/scheduled-messages/${doomed.id}`, { content: 'retry' })).status).toBe(409);
  }, 30_000);
});
