import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { inboxFixture, member, type InboxFixture } from './inbox-support';
import { connectPatiently } from '../support/patient-client';

// Issue #29 item 6: with csat {enabled, message} a conversation that closes (by anyone) sends the question (source
// "auto"); the contact's next message within 24 h that is a rating is stored as the conversation's csat (shown by every
// conversation shape) and published as conversation.csat_received, without reopening it; the message after it is its
// comment. GET /api/v1/analytics/csat sums the answers to the questions sent in a range.
const QUESTION = 'How did we do? Reply 1 to 5, or with ⭐ to ⭐⭐⭐⭐⭐';
const UIDS = ['cs-text', 'cs-stars', 'cs-moved-on', 'cs-face', 'cs-off', 'cs-lead'];

describe('CSAT', () => {
  let f: InboxFixture;
  let agent: { api: Client; id: string };
  let lead: { api: Client; id: string };
  let db: PgClient;
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const conversation = async (id: string) => (await f.a.owner.get(`/api/v1/conversations/${id}`)).body;
  const close = async (id: string) => expect((await f.a.owner.post(`/api/v1/conversations/${id}/close`, {})).status).toBe(200);
  const write = (uid: string, content: string) => f.bus.inbound(f.a.orgId, { accountId: f.accountA, fromUid: uid, content });
  /** The contact's message, once stored. */
  const stored = (id: string, content: string) => eventually(async () => (await conversation(id)).messages.find((m: any) => m.content === content));
  const asked = (id: string) => stored(id, QUESTION);
  const csatEvents = (id: string) => f.bus.of('conversation.csat_received').filter((e) => e.data.conversationId === id);
  let from: string;

  beforeAll(async () => {
    // The account's send budget for automatic messages (5 per 10 s by default) would hold back the questions of a quick test.
    f = await inboxFixture('csat', UIDS, { SEND_LIMITS: 'total=1500/day,100/10s;auto=300/day,50/10s' });
    agent = await member(f.stack.url, f.a.owner, 'agent', 'cs-agent');
    lead = await member(f.stack.url, f.a.owner, 'team_lead', 'cs-lead');
    db = await connectPatiently(f.stack.databaseUrl('messaging'));
    from = new Date(Date.now() - 1000).toISOString();
    expect((await f.a.owner.put('/api/v1/settings/inbox', { csat: { enabled: true, message: QUESTION } })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await f?.stop();
  });

  it('closing sends the question (source auto); a rating with text is stored with its comment, published, and the conversation stays closed', async () => {
    const id = f.conv['cs-text'];
    expect((await f.a.owner.put(`/api/v1/conversations/${id}/assignee`, { userId: agent.id })).status).toBe(200);
    await close(id);
    expect(await asked(id)).toEqual(expect.objectContaining({ source: 'auto', sentByUserId: null }));
    expect(f.connector.sent.filter((s) => s.threadId === 'cs-text' && s.content === QUESTION)).toHaveLength(1);
    await write('cs-text', '5 - quick and friendly');
    await stored(id, '5 - quick and friendly');
    const after = (await conversation(id)).conversation;
    expect(after.status).toBe('closed');
    expect(after.csat).toEqual({ rating: 5, comment: 'quick and friendly', respondedAt: expect.any(String) });
    const event = await eventually(async () => csatEvents(id)[0]);
    expect(event.data).toEqual({
      conversationId: id,
      contactId: after.contactId,
      chatnetAccountId: f.accountA,
      assigneeId: agent.id,
      rating: 5,
      comment: 'quick and friendly',
      respondedAt: after.csat.respondedAt,
    });
  });

  it('stars are a rating; the next message is its comment; the one after reopens the conversation', async () => {
    const id = f.conv['cs-stars'];
    await close(id);
    await asked(id);
    await write('cs-stars', '⭐⭐⭐⭐');
    await stored(id, '⭐⭐⭐⭐');
    expect((await conversation(id)).conversation.csat).toEqual({ rating: 4, comment: null, respondedAt: expect.any(String) });
    await write('cs-stars', 'Fast, but I had to ask twice');
    await stored(id, 'Fast, but I had to ask twice');
    const commented = (await conversation(id)).conversation;
    expect(commented.status).toBe('closed');
    expect(commented.csat).toEqual(expect.objectContaining({ rating: 4, comment: 'Fast, but I had to ask twice' }));
    // Answers to the survey wait for no reply.
    const row = (await f.a.owner.get('/api/v1/conversations?status=closed&limit=100')).body.data.find((c: any) => c.id === id);
    expect(row.isReplied).toBe(true);
    await write('cs-stars', 'One more question about my order');
    await eventually(async () => ((await conversation(id)).conversation.status === 'active' ? true : undefined));
    expect((await conversation(id)).conversation.csat.comment).toBe('Fast, but I had to ask twice');
    expect(csatEvents(id)).toHaveLength(1);
  });

  it('a reply that is no rating reopens the conversation and ends the survey unanswered', async () => {
    const id = f.conv['cs-moved-on'];
    await close(id);
    await asked(id);
    await write('cs-moved-on', 'Actually, can you change my address?');
    await eventually(async () => ((await conversation(id)).conversation.status === 'active' ? true : undefined));
    expect((await conversation(id)).conversation.csat).toBeNull();
    // Closed again (a second question), the contact's "5" answers that one.
    await close(id);
    await eventually(async () => ((await conversation(id)).messages.filter((m: any) => m.content === QUESTION).length === 2 ? true : undefined));
    await write('cs-moved-on', '5');
    await eventually(async () => (await conversation(id)).conversation.csat?.rating);
  });

  it('faces are ratings, and every conversation shape shows csat', async () => {
    const id = f.conv['cs-face'];
    // Through the bulk route this time: every way of closing asks.
    expect((await f.a.owner.post('/api/v1/conversations/bulk', { ids: [id], action: 'status', status: 'closed' })).status).toBe(200);
    await asked(id);
    await write('cs-face', '😞');
    await eventually(async () => (await conversation(id)).conversation.csat);
    const list = (await f.a.owner.get(`/api/v1/conversations?status=closed&limit=100`)).body.data.find((c: any) => c.id === id);
    expect(list.csat).toEqual({ rating: 2, comment: null, respondedAt: expect.any(String) });
    const pub = (await f.a.pub.get('/api/public/conversations?limit=100')).body.conversations.find((c: any) => c.id === id);
    expect(pub.csat).toEqual(list.csat);
    const never = (await f.a.owner.get(`/api/v1/conversations/${f.conv['cs-off']}`)).body.conversation;
    expect(never.csat).toBeNull();
  });

  it('a conversation closed again while its question waits for an answer is not asked twice', async () => {
    const id = f.conv['cs-lead'];
    await close(id);
    await asked(id);
    expect((await f.a.owner.post(`/api/v1/conversations/${id}/reopen`, {})).status).toBe(200);
    await close(id);
    // Queued, if at all, in the closing transaction.
    const { rows } = await db.query("SELECT count(*)::int AS n FROM auto_messages WHERE conversation_id = $1 AND kind = 'csat'", [id]);
    expect(rows[0].n).toBe(1);
  });

  it('with CSAT off, closing asks nothing', async () => {
    expect((await f.a.owner.put('/api/v1/settings/inbox', { csat: { enabled: false } })).status).toBe(200);
    const id = f.conv['cs-off'];
    await close(id);
    // The question would have been queued in the closing transaction.
    const { rows } = await db.query('SELECT count(*)::int AS n FROM auto_messages WHERE conversation_id = $1', [id]);
    expect(rows[0].n).toBe(0);
    expect((await f.a.owner.get('/api/v1/settings/inbox')).body.csat).toEqual({ enabled: false, message: QUESTION });
    expect((await f.a.owner.put('/api/v1/settings/inbox', { csat: { enabled: true } })).status).toBe(200);
  });

  it('GET /analytics/csat: responses, average, distribution and response rate of the questions sent; filters; 400 and 403; another org sees none', async () => {
    const path = '/api/v1/analytics/csat';
    const res = await lead.api.get(`${path}?from=${encodeURIComponent(from)}`);
    expect(res.status).toBe(200);
    // Questions: cs-text, cs-stars, cs-moved-on (twice), cs-face, cs-lead = 6; answered: 5, 4, 5, 2.
    expect(res.body).toEqual({
      responses: 4,
      questions: 6,
      average: 4,
      distribution: { '1': 0, '2': 1, '3': 0, '4': 1, '5': 2 },
      responseRate: 0.67,
    });
    expect((await f.a.owner.get(`${path}?assigneeId=${agent.id}`)).body).toEqual(
      expect.objectContaining({ responses: 1, questions: 1, average: 5, responseRate: 1 }),
    );
    expect((await f.a.owner.get(`${path}?chatnetAccountId=${f.accountA}`)).body.responses).toBe(4);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await f.a.owner.get(`${path}?from=${encodeURIComponent(future)}`)).body).toEqual({
      responses: 0,
      questions: 0,
      average: null,
      distribution: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 },
      responseRate: null,
    });
    for (const [q, field] of [
      ['from=yesterday', 'from'],
      ['to=2020-13-01', 'to'],
      ['assigneeId=me', 'assigneeId'],
      ['chatnetAccountId=1', 'chatnetAccountId'],
    ]) {
      const bad = await f.a.owner.get(`${path}?${q}`);
      expect([bad.status, fieldOf(bad)]).toEqual([400, field]);
    }
    expect((await agent.api.get(path)).status).toBe(403);
    expect((await f.b.owner.get(path)).body).toEqual(expect.objectContaining({ responses: 0, questions: 0 }));
    expect((await f.b.owner.get(`${path}?chatnetAccountId=${f.accountA}`)).body.responses).toBe(0);
  });
});
