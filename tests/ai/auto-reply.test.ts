import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { devInternalAuth, status } from '@crm/grpc-kit';
import { eventually } from '@crm/testing';
import { auditEntryFor } from '../support/audit';
import { startStack, type Stack } from '../support/stack';
import { callerMetadata, rawCall } from '../support/raw-grpc';
import { member } from '../messaging/inbox-support';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from '../messaging/support';

// Issue #32 item 5, end to end with the real messaging and ai behind the gateway (a fake connector takes the sends):
// PUT /api/v1/ai/config autoReply lists org A's account; a customer's message there gets the offline engine's answer
// (source "ai", a private note with its sources, an audit entry with the prompt hash, provider and model) when its
// computed confidence reaches minConfidence, and is handed to a person (the account's rotation, conversation.assigned
// reason ai_handoff, a private note saying why) below it, when the customer asks for a person, or past
// maxRepliesPerConversation AI replies in a row; onlyOutsideBusinessHours follows messaging's business hours; other
// accounts and other orgs are untouched.
describe('guarded AI auto-reply', () => {
  let stack: Stack;
  let dir: string;
  let db: PgClient;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let agent: Awaited<ReturnType<typeof member>>;
  let accountA: string;
  let accountA2: string;
  let accountB: string;
  const PRICE = 'How much is the blue jacket?';

  const config = (body: unknown) => a.owner.put('/api/v1/ai/config', body);
  const inbound = (accountId: string, fromUid: string, content: string, orgId = a.orgId) =>
    bus.inbound(orgId, { accountId, fromUid, fromName: 'Lan Nguyen', content });
  const conversationOf = (threadId: string, owner = a.owner) =>
    eventually(async () => (await owner.get('/api/v1/conversations?limit=100')).body.data.find((c: any) => c.threadId === threadId), 15_000);
  const detail = async (id: string) => (await a.owner.get(`/api/v1/conversations/${id}`)).body;
  const aiMessages = async (id: string) => (await detail(id)).messages.filter((m: any) => m.source === 'ai');
  const notes = async (id: string): Promise<string[]> =>
    (await a.owner.get(`/api/v1/conversations/${id}/notes`)).body.data.map((n: any) => n.content);
  /** The assistant's rows for a conversation, oldest first: written with the message, so their absence is final. */
  const rows = async (conversationId: string) =>
    (await db.query('SELECT status, reason FROM ai_auto_replies WHERE conversation_id = $1 ORDER BY created_at', [conversationId])).rows;
  const done = (conversationId: string, n: number) =>
    eventually(async () => {
      const r = await rows(conversationId);
      return r.length >= n && r[n - 1].status !== 'pending' ? r[n - 1] : undefined;
    }, 20_000);
  const assignedEvents = (conversationId: string) =>
    bus.of('conversation.assigned').filter((e) => e.data.conversationId === conversationId && e.data.reason === 'ai_handoff');
  /** messaging's copy of A's settings once ai's announcement arrived. */
  const copyOf = async (orgId: string) => (await db.query('SELECT * FROM ai_auto_reply_settings WHERE org_id = $1', [orgId])).rows[0];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ai-auto-reply-'));
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging', 'ai'],
      serviceEnv: {
        messaging: {
          CONNECTOR_ADDR: connector.addr,
          CRM_ADDR: crm.addr,
          ATTACHMENTS_DIR: dir,
          SEND_LIMITS: 'total=1500/day,100/10s;ui=1000/day,50/10s;ai=300/day,50/10s',
        },
      },
    });
    bus = await eventBus(stack);
    db = new PgClient({ connectionString: stack.databaseUrl('messaging') });
    await db.connect();
    a = await orgWithKey(stack.url, 'Auto A');
    b = await orgWithKey(stack.url, 'Auto B');
    accountA = connector.account(a.orgId);
    accountA2 = connector.account(a.orgId);
    accountB = connector.account(b.orgId);
    agent = await member(stack.url, a.owner, 'agent', 'auto-agent');
    // The account's rotation lists the agent; manual mode, so only a hand-off assigns.
    expect((await a.owner.put(`/api/v1/chatnet-accounts/${accountA}/assignment`, { mode: 'manual', userIds: [agent.id] })).status).toBe(200);
    // Org A lists B's account too: it must change nothing for B's customers.
    const res = await config({
      autoReply: { enabled: true, chatnetAccountIds: [accountA, accountB], minConfidence: 0.6, maxRepliesPerConversation: 2 },
    });
    expect(res.status).toBe(200);
    await eventually(async () => (await copyOf(a.orgId))?.enabled === true, 15_000);
    // The in-memory set follows the copy's NOTIFY: a probe thread is written to until a message of it is queued.
    const probe = await eventually(
      async () => {
        await inbound(accountA, 'ar-probe', 'hi');
        const c = await conversationOf('ar-probe');
        return (await rows(c.id)).length > 0 ? c : undefined;
      },
      15_000,
      500,
    );
    await done(probe.id, 1);
  }, 90_000);
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('above the threshold: the answer is sent with source ai, its sources are a private note, and the audit log has it', async () => {
    await inbound(accountA, 'ar-price', PRICE);
    const conv = await conversationOf('ar-price');
    expect(await done(conv.id, 1)).toEqual({ status: 'replied', reason: 'local' });
    const [answer] = await aiMessages(conv.id);
    expect(answer).toEqual(expect.objectContaining({ source: 'ai', sentByUserId: null, senderName: 'AI assistant' }));
    expect(answer.content).toContain(PRICE);
    expect(connector.sent.filter((s) => s.threadId === 'ar-price').map((s) => s.content)).toEqual([answer.content]);
    expect(await notes(conv.id)).toEqual([
      'AI assistant answered (local, local-templates-v1; confidence 0.75, threshold 0.6).\nSources: none (answered from the conversation alone).',
    ]);
    const entry = await auditEntryFor(a.owner, 'ai_reply.sent', conv.id);
    expect(entry).toEqual(expect.objectContaining({ actorId: null, actorType: 'system', resourceType: 'conversation' }));
    expect(entry.details).toEqual({
      messageId: answer.id,
      inReplyTo: expect.any(String),
      promptHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      provider: 'local',
      model: 'local-templates-v1',
      confidence: 0.75,
      minConfidence: 0.6,
    });
    expect(assignedEvents(conv.id)).toEqual([]);
  });

  it('a question answered in the knowledge base: the reply quotes the article and the note lists it as the source', async () => {
    const article = await a.owner.post('/api/v1/ai/knowledge', {
      title: 'Chính sách bảo hành',
      content: 'Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng kể từ ngày mua. Khách mang máy và hoá đơn đến cửa hàng gần nhất.',
    });
    expect(article.status).toBe(201);
    await inbound(accountA, 'ar-warranty', 'Chào shop, máy xay sinh tố bên mình bảo hành bao lâu vậy?');
    const conv = await conversationOf('ar-warranty');
    expect(await done(conv.id, 1)).toEqual({ status: 'replied', reason: 'local' });
    const [answer] = await aiMessages(conv.id);
    expect(answer.content).toContain('Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng kể từ ngày mua.');
    const [note] = await notes(conv.id);
    expect(note).toContain('Sources:\n- Chính sách bảo hành: Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng');
    // Other tests ask what no article answers.
    expect((await a.owner.del(`/api/v1/ai/knowledge/${article.body.id}`)).status).toBe(204);
  });

  it('below the threshold: handed to the rotation’s person (conversation.assigned ai_handoff) with a note saying why; nothing sent', async () => {
    await inbound(accountA, 'ar-low', 'Let me think about it');
    const conv = await conversationOf('ar-low');
    expect(await done(conv.id, 1)).toEqual({ status: 'handed_off', reason: 'low_confidence' });
    const event = await eventually(async () => assignedEvents(conv.id)[0]);
    expect(event.data).toEqual(expect.objectContaining({ assigneeId: agent.id, previousAssigneeId: null, assignedBy: null, reason: 'ai_handoff' }));
    expect((await detail(conv.id)).conversation.assigneeId).toBe(agent.id);
    expect(await notes(conv.id)).toEqual([
      "AI assistant handed this conversation to a person: the assistant's confidence (0.4) is below the threshold (0.6): a person should answer.",
    ]);
    expect(await aiMessages(conv.id)).toEqual([]);
    expect(connector.sent.filter((s) => s.threadId === 'ar-low')).toEqual([]);
  });

  it.each([
    ['ar-person-vi', 'Cho tôi gặp nhân viên'],
    ['ar-person-folded', 'cho toi gap nhan vien'],
    ['ar-person-en', 'Can I talk to a human?'],
  ])('%s: a customer asking for a person is handed over at once; the assistant then stays quiet until a person replies', async (uid, text) => {
    await inbound(accountA, uid, text);
    const conv = await conversationOf(uid);
    expect(await done(conv.id, 1)).toEqual({ status: 'handed_off', reason: 'asked_for_person' });
    expect(await eventually(async () => assignedEvents(conv.id)[0])).toBeDefined();
    expect(await notes(conv.id)).toEqual(['AI assistant handed this conversation to a person: the customer asked to talk to a person.']);
    // A question it could answer now waits for the person.
    await inbound(accountA, uid, PRICE);
    expect(await done(conv.id, 2)).toEqual({ status: 'skipped', reason: 'waiting_for_person' });
    expect(await aiMessages(conv.id)).toEqual([]);
  });

  it('never more than maxRepliesPerConversation AI replies in a row: then a person takes over; a person’s reply starts the count again', async () => {
    const uid = 'ar-max';
    await inbound(accountA, uid, PRICE);
    const conv = await conversationOf(uid);
    expect((await done(conv.id, 1)).status).toBe('replied');
    await inbound(accountA, uid, 'And how much is the delivery?');
    expect((await done(conv.id, 2)).status).toBe('replied');
    await inbound(accountA, uid, 'Is the red one cheaper?');
    expect(await done(conv.id, 3)).toEqual({ status: 'handed_off', reason: 'max_replies' });
    expect(await aiMessages(conv.id)).toHaveLength(2);
    expect((await notes(conv.id))[0]).toBe(
      'AI assistant handed this conversation to a person: it already answered 2 times in a row without a person replying (the limit is 2).',
    );
    expect(await eventually(async () => assignedEvents(conv.id)[0])).toBeDefined();

    expect(
      (await agent.api.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'Hi Lan, Andy here: the red one is 20% off.' })).status,
    ).toBe(201);
    await inbound(accountA, uid, 'How much is the green one?');
    expect((await done(conv.id, 4)).status).toBe('replied');
    expect(await aiMessages(conv.id)).toHaveLength(3);
  });

  it('onlyOutsideBusinessHours: quiet while the hours are open (none set: always open), answering once they are closed', async () => {
    expect((await config({ autoReply: { onlyOutsideBusinessHours: true } })).status).toBe(200);
    await eventually(async () => (await copyOf(a.orgId))?.only_outside_hours === true, 15_000);
    await inbound(accountA, 'ar-hours', PRICE);
    const conv = await conversationOf('ar-hours');
    expect(await done(conv.id, 1)).toEqual({ status: 'skipped', reason: 'business_hours' });

    const today = new Date().toISOString().slice(0, 10);
    const allWeek = [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, open: '00:00', close: '23:59' }));
    expect((await a.owner.put('/api/v1/settings/business-hours', { timezone: 'UTC', days: allWeek, holidays: [today] })).status).toBe(200);
    await inbound(accountA, 'ar-hours', 'What is the price of the blue jacket?');
    expect((await done(conv.id, 2)).status).toBe('replied');
    expect((await config({ autoReply: { onlyOutsideBusinessHours: false } })).status).toBe(200);
  });

  it('other accounts and other orgs: no row is even queued (B’s account in A’s list counts for nothing); B’s settings are its own', async () => {
    await inbound(accountA2, 'ar-unlisted', PRICE);
    await inbound(accountB, 'ar-org-b', PRICE, b.orgId);
    const unlisted = await conversationOf('ar-unlisted');
    const theirs = await conversationOf('ar-org-b', b.owner);
    // The rows are written in the transaction that stores the message: none now is none ever.
    expect(await rows(unlisted.id)).toEqual([]);
    expect(await rows(theirs.id)).toEqual([]);
    expect((await b.owner.get('/api/v1/ai/config')).body.autoReply).toEqual(expect.objectContaining({ enabled: false, chatnetAccountIds: [] }));
    // A's notes API does not show B's conversation (404 across orgs), and B's own conversation has no assistant note.
    expect((await a.owner.get(`/api/v1/conversations/${theirs.id}/notes`)).status).toBe(404);
    expect((await b.owner.get(`/api/v1/conversations/${theirs.id}/notes`)).body.data).toEqual([]);
  });

  it('ai answers messaging only under the stamp of a customer’s message in that org (issue #27 item 3)', async () => {
    // Each row keeps its message's stamp: the replies above were asked under it.
    const { rows: kept } = await db.query(`SELECT count(*)::int AS n FROM ai_auto_replies WHERE org_id = $1 AND origin IS NULL`, [a.orgId]);
    expect(kept[0].n).toBe(0);
    const AUTO_REPLY = 'ai.v1.AiService/AutoReply';
    const seed = stack.env.INTERNAL_AUTH_SEED;
    /** One call to ai as messaging, for `orgId`, with `origin` beside it: what a process on the internal network can send. */
    const asMessaging = (orgId: string, origin?: string) => {
      const req = { conversationId: randomUUID(), messageId: randomUUID(), contactName: 'X', chatnetAccountId: accountB, messages: [] };
      return rawCall(
        stack.addr('ai'),
        'ai.v1.AiService',
        'AutoReply',
        req,
        callerMetadata(devInternalAuth('messaging', seed).sign({ orgId, origin }, AUTO_REPLY), origin),
      );
    };
    const stampOf = (orgId: string) => devInternalAuth('connector', seed).stampEvent({ id: randomUUID(), type: 'chatnet.inbound', orgId });
    // Messaging's say-so alone, a message of org A vouching for a call naming B, messaging's own stamp: refused.
    expect(await asMessaging(b.orgId)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
    expect(await asMessaging(b.orgId, stampOf(a.orgId))).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_mismatch' });
    const own = devInternalAuth('messaging', seed).stampEvent({ id: randomUUID(), type: 'messaging.contact_link', orgId: b.orgId });
    expect(await asMessaging(b.orgId, own)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
    // A message of B vouches for B (its auto-reply is off: ai says so, no error).
    expect(await asMessaging(b.orgId, stampOf(b.orgId))).toEqual({ code: status.OK, errorCode: '' });
  });
});
