import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { io as connectSocket, Socket } from 'socket.io-client';
import { eventually } from '@crm/testing';
import { client, Client, email } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { startReceiver, verifySignature, type Receiver } from '../webhooks/support';
import { eventBus, orgWithKey } from './support';

// Private notes inside a conversation, through the gateway with the real connector (sandbox network), crm,
// identity (mentions resolved to users of the org), automation (mention notifications) and webhooks:
// POST/GET/DELETE /api/v1/conversations/:id/notes, the detail's timeline, conversation.note_created.
describe('private notes and @mentions in a conversation', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let rx: Receiver;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let author: User;
  let colleague: User;
  let lead: User;
  let outsider: User;
  let socket: Socket;
  let hookSecret: string;
  let accountId: string;
  let convId: string;
  const pushed: any[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-notes-'));

  interface User {
    api: Client;
    id: string;
    email: string;
    token: string;
  }

  async function member(owner: Client, role: 'agent' | 'team_lead', fullName: string): Promise<User> {
    const address = email(role);
    const created = await owner.post('/api/v1/users', { email: address, fullName, role, password: 'correct horse battery' });
    if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${JSON.stringify(created.body)}`);
    const login = await client(stack.url).post('/api/v1/auth/login', { email: address, password: 'correct horse battery' });
    return { api: client(stack.url).as(login.body.token), id: created.body.id, email: address, token: login.body.token };
  }

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging', 'automation', 'webhooks'],
      serviceEnv: {
        messaging: { ATTACHMENTS_DIR: dir },
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' },
        webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s' },
      },
    });
    bus = await eventBus(stack);
    rx = await startReceiver();
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    author = await member(a.owner, 'agent', 'Anh Agent');
    colleague = await member(a.owner, 'agent', 'Binh Agent');
    lead = await member(a.owner, 'team_lead', 'Lan Lead');
    outsider = await member(b.owner, 'agent', 'Other Org');

    const hook = await a.owner.post('/api/v1/webhook-settings', { url: rx.url('/notes'), events: ['conversation.note_created'] });
    expect(hook.status).toBe(201);
    hookSecret = hook.body.secret;

    const created = await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' });
    accountId = created.body.id;
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    expect(
      (await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-notes', fromName: 'Mai Tran', content: 'Can I get a quote?' }))
        .status,
    ).toBe(200);
    convId = (await eventually(async () => (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data[0])).id;

    socket = await new Promise<Socket>((resolve, reject) => {
      const s = connectSocket(stack.url, { auth: { token: colleague.token }, transports: ['websocket'], reconnection: false });
      s.once('connect', () => resolve(s));
      s.once('connect_error', reject);
    });
    socket.on('notification', (payload) => pushed.push(payload));
  }, 120_000);
  afterAll(async () => {
    socket?.disconnect();
    await bus?.close();
    await rx?.close();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const notesUrl = () => `/api/v1/conversations/${convId}/notes`;
  const mentionsOf = async (u: User) => (await u.api.get('/api/v1/notifications')).body.data.filter((n: any) => n.type === 'mention');
  const sentToNetwork = async () => (await a.owner.get(`/sandbox/accounts/${accountId}/sent`)).body.data;

  let note: any;

  it('POST /notes → 201 {id, content, authorId, mentions, createdAt}: mentions by id and by email resolved to users of the org, each once', async () => {
    const content = [
      `@[user:${colleague.id}] can you call her back?`,
      `cc @${lead.email.toUpperCase()} and @[user:${colleague.id}] again,`,
      `not @[user:${outsider.id}] (another org), @${outsider.email}, @[user:${randomUUID()}] or @nobody@example.test;`,
      `note to self @[user:${author.id}]`,
    ].join('\n');
    const res = await author.api.post(notesUrl(), { content: `  ${content}  ` });
    expect(res.status).toBe(201);
    note = res.body;
    expect(note).toEqual({
      id: expect.any(String),
      content,
      authorId: author.id,
      mentions: [colleague.id, lead.id, author.id],
      createdAt: expect.any(String),
    });
  });

  it('publishes conversation.note_created through the outbox, with a preview naming the mentioned users', async () => {
    const event = await eventually(async () => bus.of('conversation.note_created').find((e) => e.data.noteId === note.id));
    expect(event.orgId).toBe(a.orgId);
    expect(event.data).toEqual(
      expect.objectContaining({
        conversationId: convId,
        noteId: note.id,
        authorId: author.id,
        authorName: 'Anh Agent',
        contactName: 'Mai Tran',
        mentions: [colleague.id, lead.id, author.id],
        contentPreview: expect.stringMatching(/^@Binh Agent can you call her back\? cc @/),
      }),
    );
  });

  it('notifies each mentioned user once (notification and socket), not the author, nobody of another org', async () => {
    const [forColleague] = await eventually(async () => {
      const got = await mentionsOf(colleague);
      return got.length ? got : undefined;
    });
    expect(forColleague).toEqual({
      id: expect.any(String),
      type: 'mention',
      title: 'Anh Agent mentioned you in the conversation with Mai Tran',
      message: expect.stringContaining('Anh Agent: @Binh Agent can you call her back?'),
      resourceId: convId,
      read: false,
      createdAt: expect.any(String),
    });
    expect(await eventually(async () => (await mentionsOf(lead)).length === 1)).toBe(true);
    const live = await eventually(async () => pushed.find((p) => p.type === 'mention'));
    expect(live).toEqual(expect.objectContaining({ id: forColleague.id, userId: colleague.id, resourceId: convId }));
    expect(await mentionsOf(author)).toEqual([]);
    expect(await mentionsOf(outsider)).toEqual([]);
    expect(await mentionsOf(colleague)).toHaveLength(1);
  });

  it('delivers a signed conversation.note_created webhook', async () => {
    const got = await eventually(async () => rx.at('/notes').find((r) => r.json.data?.noteId === note.id));
    expect(got.json.type).toBe('conversation.note_created');
    expect(got.json.data).toEqual(
      expect.objectContaining({ conversationId: convId, authorId: author.id, mentions: [colleague.id, lead.id, author.id] }),
    );
    expect(verifySignature(hookSecret, got)).toBe(true);
  });

  it('the detail keeps messages as they were and adds a timeline where the note is private; nothing reached the chat network', async () => {
    const detail = (await a.owner.get(`/api/v1/conversations/${convId}`)).body;
    expect(detail.messages.map((m: any) => m.content)).toEqual(['Can I get a quote?']);
    expect(detail.conversation.messageCount).toBe(1);
    expect(detail.timeline).toEqual([
      { kind: 'note', private: true, ...note },
      expect.objectContaining({ kind: 'message', id: detail.messages[0].id, content: 'Can I get a quote?', isFromChatnet: true }),
    ]);
    expect(await sentToNetwork()).toEqual([]);
  });

  it('a page of the timeline holds the notes of its own time range only', async () => {
    expect(
      (await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-notes', fromName: 'Mai Tran', content: 'Still there?' })).status,
    ).toBe(200);
    await eventually(async () => (await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages.length === 2);
    const later = (await author.api.post(notesUrl(), { content: 'She wrote again' })).body;

    // Newest first: page 1 = "Still there?" and the note after it; page 2 = the first note and the first message.
    const page1 = (await a.owner.get(`/api/v1/conversations/${convId}?limit=1&page=1`)).body.timeline;
    expect(page1.map((t: any) => [t.kind, t.content])).toEqual([
      ['note', later.content],
      ['message', 'Still there?'],
    ]);
    const page2 = (await a.owner.get(`/api/v1/conversations/${convId}?limit=1&page=2`)).body.timeline;
    expect(page2.map((t: any) => [t.kind, t.content])).toEqual([
      ['note', note.content],
      ['message', 'Can I get a quote?'],
    ]);
    expect((await a.owner.get(`/api/v1/conversations/${convId}?limit=1&page=3`)).body.timeline).toEqual([]);
    expect((await a.owner.get(`/api/v1/conversations/${convId}`)).body.timeline.map((t: any) => t.kind)).toEqual([
      'note',
      'message',
      'note',
      'message',
    ]);
    expect(await sentToNetwork()).toEqual([]);
  });

  it('GET /notes lists the notes newest first with page/limit', async () => {
    const all = await colleague.api.get(notesUrl());
    expect(all.status).toBe(200);
    expect(all.body.data.map((n: any) => n.authorId)).toEqual([author.id, author.id]);
    expect(all.body.data[1]).toEqual(note);
    expect(all.body.pagination).toEqual({ total: 2, page: 1, limit: 50, pages: 1 });
    const second = await colleague.api.get(`${notesUrl()}?limit=1&page=2`);
    expect(second.body).toEqual({ data: [note], pagination: { total: 2, page: 2, limit: 1, pages: 2 } });
    expect((await colleague.api.get(`${notesUrl()}?limit=abc`)).status).toBe(400);
  });

  it('400 naming content: missing, blank, not a string, longer than 5000 characters, more than 50 different mentions', async () => {
    const tooMany = Array.from({ length: 51 }, (_, i) => `@u${i}@example.test`).join(' ');
    for (const payload of [{}, { content: '   ' }, { content: 42 }, { content: 'x'.repeat(5001) }, { content: tooMany }]) {
      const res = await author.api.post(notesUrl(), payload);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_argument');
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'content' })]);
    }
    expect((await author.api.post(notesUrl(), { content: 'y'.repeat(5000) })).status).toBe(201);
  });

  it("another org's conversation, an unknown or malformed id is 404 for every note route", async () => {
    for (const path of [notesUrl(), `/api/v1/conversations/${randomUUID()}/notes`, '/api/v1/conversations/not-an-id/notes']) {
      const asOther = path === notesUrl() ? b.owner : a.owner;
      expect((await asOther.post(path, { content: 'hello' })).status).toBe(404);
      expect((await asOther.get(path)).status).toBe(404);
      expect((await asOther.del(`${path}/${note.id}`)).status).toBe(404);
    }
    expect((await outsider.api.get(notesUrl())).status).toBe(404);
  });

  it('DELETE: another agent 403; the author or a team lead 204; then 404; a note under another conversation 404', async () => {
    const mine = (await author.api.post(notesUrl(), { content: 'to be removed by me' })).body;
    expect((await colleague.api.del(`${notesUrl()}/${note.id}`)).status).toBe(403);
    expect((await author.api.del(`${notesUrl()}/${mine.id}`)).status).toBe(204);
    expect((await author.api.del(`${notesUrl()}/${mine.id}`)).status).toBe(404);
    expect((await author.api.del(`${notesUrl()}/not-an-id`)).status).toBe(404);

    expect((await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-other', fromName: 'Hoa Le', content: 'Hi' })).status).toBe(
      200,
    );
    const other = await eventually(async () =>
      (await a.owner.get(`/api/v1/conversations?chatnetAccountId=${accountId}`)).body.data.find((c: any) => c.id !== convId),
    );
    expect((await lead.api.del(`/api/v1/conversations/${other.id}/notes/${note.id}`)).status).toBe(404);

    expect((await lead.api.del(`${notesUrl()}/${note.id}`)).status).toBe(204);
    const left = (await a.owner.get(notesUrl())).body.data.map((n: any) => n.id);
    expect(left).not.toContain(note.id);
    expect(left).not.toContain(mine.id);
    expect((await a.owner.get(`/api/v1/conversations/${convId}`)).body.timeline.filter((t: any) => t.kind === 'note').map((t: any) => t.id)).toEqual(
      left,
    );
  });
});
