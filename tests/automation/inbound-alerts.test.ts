import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { SMTPServer } from 'smtp-server';
import { io as connectSocket, Socket } from 'socket.io-client';
import { eventually } from '@crm/testing';
import { processedBy } from '../support/consumers';
import { client, Client, email } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from '../messaging/support';
import { connectPatiently } from '../support/patient-client';

interface Mail {
  to: string[];
  raw: string;
}

/**
 * A local mail server that keeps what it is sent; recipients at reject.test are refused (as in invitation-mail.test.ts),
 * and kept in `refused`.
 */
async function fakeSmtp() {
  const received: Mail[] = [];
  const refused: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, cb) {
      if (address.address.endsWith('@reject.test')) {
        refused.push(address.address);
        return cb(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
      }
      cb();
    },
    onData(stream, session, cb) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as AddressInfo).port;
  return { received, refused, port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const decodeQp = (s: string) => s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h) => String.fromCharCode(parseInt(h, 16)));

interface User {
  api: Client;
  id: string;
  email: string;
  token: string;
}

// Alerts on inbound messages (messaging's message.received → automation): a `new_message` notification for the
// conversation's assignee, or, unassigned, for the users listed in the account's assignment settings; one unread per
// user and conversation; pushed to the user's socket; and, with SMTP configured, an email to users who opted in
// (GET/PUT /profile/notifications), at most one per user and conversation per 15 minutes.
describe('inbound-message alerts: notifications, socket push, email', () => {
  let smtp: Awaited<ReturnType<typeof fakeSmtp>>;
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let u1: User;
  let u2: User;
  let u3: User;
  let bounced: User;
  let rrAccount: string;
  let manualAccount: string;
  let bareAccount: string;
  let bouncedAccount: string;
  let socket: Socket;
  let db: PgClient;
  const pushed: any[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'alerts-'));

  const member = async (name: string, address = email(name)): Promise<User> => {
    const password = 'correct horse battery';
    const created = await a.owner.post('/api/v1/users', { email: address, fullName: `${name} user`, role: 'agent', password });
    if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${JSON.stringify(created.body)}`);
    const login = await client(stack.url).post('/api/v1/auth/login', { email: address, password });
    return { api: client(stack.url).as(login.body.token), id: created.body.id, email: address, token: login.body.token };
  };
  const assignment = async (accountId: string, mode: string, userIds: string[]) =>
    expect((await a.owner.put(`/api/v1/chatnet-accounts/${accountId}/assignment`, { mode, userIds })).status).toBe(200);

  beforeAll(async () => {
    smtp = await fakeSmtp();
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging', 'automation'],
      serviceEnv: {
        messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir },
        automation: {
          CRM_ADDR: crm.addr,
          SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
          MAIL_FROM: 'Acme CRM <crm@acme.test>',
          PUBLIC_URL: 'https://crm.acme.test',
        },
      },
    });
    bus = await eventBus(stack);
    db = await connectPatiently(stack.databaseUrl('automation'));
    a = await orgWithKey(stack.url, 'Acme');
    u1 = await member('one');
    u2 = await member('two');
    u3 = await member('three');
    bounced = await member('bounced', email('bounced').replace('@example.test', '@reject.test'));
    rrAccount = connector.account(a.orgId);
    manualAccount = connector.account(a.orgId);
    bareAccount = connector.account(a.orgId);
    bouncedAccount = connector.account(a.orgId);
    await assignment(rrAccount, 'round_robin', [u1.id, u2.id]);
    await assignment(manualAccount, 'manual', [u1.id, u2.id]);
    await assignment(bouncedAccount, 'manual', [bounced.id]);
    // u1 and the user whose mailbox refuses mail opted in; u2 and u3 did not.
    expect((await u1.api.put('/api/v1/profile/notifications', { notifyByEmail: true })).status).toBe(200);
    expect((await bounced.api.put('/api/v1/profile/notifications', { notifyByEmail: true })).status).toBe(200);

    socket = await new Promise<Socket>((resolve, reject) => {
      const s = connectSocket(stack.url, { auth: { token: u1.token }, transports: ['websocket'], reconnection: false });
      s.once('connect', () => resolve(s));
      s.once('connect_error', reject);
    });
    socket.on('notification', (payload) => pushed.push(payload));
  }, 120_000);
  afterAll(async () => {
    socket?.disconnect();
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    await smtp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let seq = 0;
  /** A message from the network on a thread (a new one unless given), as the connector announces it. */
  const inbound = (accountId: string, content: string, threadId = `thread-${++seq}`, fromName = 'Lan Nguyen') =>
    bus.inbound(a.orgId, { accountId, fromUid: threadId, threadId, fromName, content });
  /** The message.received messaging published for a message (content is unique per test). */
  const receivedEvent = (content: string) => eventually(async () => bus.of('message.received').find((e) => e.data.content === content), 15_000);
  const alertsOf = async (u: { api: Client }, conversationId: string) =>
    (await u.api.get('/api/v1/notifications?limit=100')).body.data.filter((n: any) => n.type === 'new_message' && n.resourceId === conversationId);
  const owner = () => ({ api: a.owner });
  const mailsTo = (u: User) => smtp.received.filter((m) => m.to.includes(u.email));
  /** automation's trigger consumer, which raises the alerts, has committed its handling of these message.received events. */
  const alertsDecided = (...eventIds: string[]) => processedBy(db, `${stack.env.EVENTS_EXCHANGE}.automation.triggers`, eventIds);
  /** The notification.created events of the new_message alerts automation raised for these users (what alert emails follow). */
  const announcedAlerts = async (...users: User[]) =>
    (
      await db.query<{ id: string }>(
        `SELECT id FROM outbox WHERE type = 'notification.created' AND org_id = $1 AND data->>'type' = 'new_message' AND data->>'userId' = ANY($2::text[])`,
        [a.orgId, users.map((u) => u.id)],
      )
    ).rows.map((r) => r.id);
  /** automation's email-alerts consumer has committed its handling of every alert announced for these users so far. */
  const emailsDecided = async (...users: User[]) =>
    processedBy(db, `${stack.env.EVENTS_EXCHANGE}.automation.email-alerts`, await announcedAlerts(...users));

  let rrConversation: string;
  it('a message in an assigned conversation notifies its assignee only (the event carries assigneeId); the socket gets it', async () => {
    const content = 'Hi, is the blue one in stock?';
    await inbound(rrAccount, content, 'rr-1');
    const event = await receivedEvent(content);
    rrConversation = event.data.conversationId;
    // Round robin chose u1 in the transaction that stored the message, so the event already names them.
    expect(event.data).toEqual(expect.objectContaining({ assigneeId: u1.id, eligibleUserIds: [] }));
    const [n] = await eventually(async () => {
      const got = await alertsOf(u1, rrConversation);
      return got.length ? got : undefined;
    });
    expect(n).toEqual({
      id: expect.any(String),
      type: 'new_message',
      title: 'New message from Lan Nguyen',
      message: content,
      resourceId: rrConversation,
      read: false,
      createdAt: expect.any(String),
    });
    const live = await eventually(async () => pushed.find((p) => p.id === n.id));
    expect(live).toEqual(
      expect.objectContaining({ userId: u1.id, type: 'new_message', title: 'New message from Lan Nguyen', resourceId: rrConversation }),
    );
    await alertsDecided(event.id);
    expect(await alertsOf(u2, rrConversation)).toEqual([]);
    expect(await alertsOf(u3, rrConversation)).toEqual([]);
    expect(await alertsOf(owner(), rrConversation)).toEqual([]);
  });

  let manualConversation: string;
  const longTail = 'SECRET-TAIL-BEYOND-THE-PREVIEW';
  const longMessage = `Hello, I would like a quote for ${'ten boxes of green tea, '.repeat(6)}${longTail}`;
  it('unassigned, on an account listing two agents: both are notified, with a preview of at most 120 characters', async () => {
    await inbound(manualAccount, longMessage, 'manual-1', 'Mai Tran');
    const event = await receivedEvent(longMessage);
    manualConversation = event.data.conversationId;
    expect(event.data).toEqual(expect.objectContaining({ assigneeId: null, eligibleUserIds: [u1.id, u2.id] }));
    for (const u of [u1, u2]) {
      const [n] = await eventually(async () => {
        const got = await alertsOf(u, manualConversation);
        return got.length ? got : undefined;
      });
      expect(n.title).toBe('New message from Mai Tran');
      expect(Array.from(n.message as string).length).toBeLessThanOrEqual(120);
      expect(n.message).toMatch(/^Hello, I would like a quote for ten boxes/);
      expect(n.message).not.toContain(longTail);
    }
    await alertsDecided(event.id);
    expect(await alertsOf(u3, manualConversation)).toEqual([]);
    expect(await alertsOf(owner(), manualConversation)).toEqual([]);
  });

  it('no agents listed on the account: nobody is notified', async () => {
    const content = 'Anyone there?';
    await inbound(bareAccount, content, 'bare-1');
    const event = await receivedEvent(content);
    expect(event.data).toEqual(expect.objectContaining({ assigneeId: null, eligibleUserIds: [] }));
    await alertsDecided(event.id);
    for (const u of [u1, u2, u3, owner()]) expect(await alertsOf(u, event.data.conversationId)).toEqual([]);
  });

  it('a second message while the first alert is unread updates that one instead of adding another; after reading, the next adds one', async () => {
    const second = 'Also, do you deliver to Da Nang?';
    await inbound(manualAccount, second, 'manual-1', 'Mai Tran');
    for (const u of [u1, u2]) {
      await eventually(async () => {
        const got = await alertsOf(u, manualConversation);
        return got.length === 1 && got[0].message === second;
      });
    }
    const [first] = await alertsOf(u1, manualConversation);
    expect((await u1.api.post(`/api/v1/notifications/${first.id}/read`)).status).toBe(200);

    const third = 'Hello? Still waiting.';
    await inbound(manualAccount, third, 'manual-1', 'Mai Tran');
    const got = await eventually(async () => {
      const list = await alertsOf(u1, manualConversation);
      return list.length === 2 ? list : undefined;
    });
    expect(got.map((n: any) => [n.message, n.read])).toEqual([
      [third, false],
      [second, true],
    ]);
    // u2 never read theirs: still one, now showing the latest message.
    await eventually(async () => {
      const list = await alertsOf(u2, manualConversation);
      return list.length === 1 && list[0].message === third;
    });
    // The socket heard of each new notification, not of the bumps. The push follows the commit: wait for the new
    // one's (the bump of the second message came before it, so it would be here by then too).
    await eventually(async () => pushed.some((p) => p.id === got[0].id));
    expect(pushed.filter((p) => p.resourceId === manualConversation)).toHaveLength(2);
  });

  it('email: an opted-in user gets one short email per conversation (preview, link, no more); throttled for 15 minutes; opted-out users get none', async () => {
    // The assigned conversation of the first test and the two-agent one each mailed u1 once.
    const mails = await eventually(async () => {
      const got = mailsTo(u1);
      return got.length >= 2 ? got : undefined;
    }, 15_000);
    const bodies = mails.map((m) => decodeQp(m.raw));
    const manual = bodies.find((b) => b.includes('Subject: New message from Mai Tran'));
    expect(manual).toBeDefined();
    expect(manual).toContain('From: Acme CRM <crm@acme.test>');
    expect(manual).toContain('https://crm.acme.test');
    expect(manual).toContain('Hello, I would like a quote for ten boxes');
    expect(manual).not.toContain(longTail);
    expect(bodies.some((b) => b.includes('Subject: New message from Lan Nguyen') && b.includes('Hi, is the blue one in stock?'))).toBe(true);

    // The third message raised a new notification for u1 (the first was read) within the window: no second email.
    // Every alert raised so far has been through the email consumer (u3 had none).
    expect(await announcedAlerts(u1)).toHaveLength(3);
    await emailsDecided(u1, u2, u3);
    expect(mailsTo(u1)).toHaveLength(2);
    expect(mailsTo(u2)).toEqual([]);
    expect(mailsTo(u3)).toEqual([]);
  });

  it('email: a refused delivery is logged and the notification stands', async () => {
    const content = 'Please call me back';
    await inbound(bouncedAccount, content, 'bounced-1');
    const event = await receivedEvent(content);
    await eventually(async () => (await alertsOf(bounced, event.data.conversationId)).length === 1);
    // The mail server refused it, and the consumer committed its handling of the alert all the same (not retried).
    await eventually(async () => smtp.refused.includes(bounced.email));
    await emailsDecided(bounced);
    expect(smtp.received.filter((m) => m.to.includes(bounced.email))).toEqual([]);
    // Not counted as sent: the next alert within 15 minutes is tried again.
    expect((await db.query('SELECT 1 FROM email_alerts_sent WHERE user_id = $1', [bounced.id])).rowCount).toBe(0);
    expect(await alertsOf(bounced, event.data.conversationId)).toHaveLength(1);
  });

  describe('GET / PUT /api/v1/profile/notifications', () => {
    it('defaults to notifyByEmail false; PUT sets the caller’s own; GET reads it back', async () => {
      expect(await u3.api.get('/api/v1/profile/notifications')).toEqual(expect.objectContaining({ status: 200, body: { notifyByEmail: false } }));
      expect(await u3.api.put('/api/v1/profile/notifications', { notifyByEmail: true })).toEqual(
        expect.objectContaining({ status: 200, body: { notifyByEmail: true } }),
      );
      expect((await u3.api.get('/api/v1/profile/notifications')).body).toEqual({ notifyByEmail: true });
      expect((await u2.api.get('/api/v1/profile/notifications')).body).toEqual({ notifyByEmail: false });
      expect((await u3.api.put('/api/v1/profile/notifications', { notifyByEmail: false })).body).toEqual({ notifyByEmail: false });
    });

    it('a teammate reading the user does not see the preference', async () => {
      const res = await u2.api.get(`/api/v1/users/${u1.id}`);
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('notifyByEmail');
    });

    it('400 naming notifyByEmail when it is missing or not a boolean; 401 without a token', async () => {
      for (const bad of [{}, { notifyByEmail: 'true' }, { notifyByEmail: 1 }, { notifyByEmail: null }]) {
        const res = await u3.api.put('/api/v1/profile/notifications', bad);
        expect(res.status).toBe(400);
        expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'notifyByEmail' })]);
      }
      expect((await u3.api.get('/api/v1/profile/notifications')).body).toEqual({ notifyByEmail: false });
      expect((await client(stack.url).get('/api/v1/profile/notifications')).status).toBe(401);
      expect((await client(stack.url).put('/api/v1/profile/notifications', { notifyByEmail: true })).status).toBe(401);
    });
  });
});
