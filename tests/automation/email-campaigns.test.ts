import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { eventually } from '@crm/testing';
import { auditEntryFor } from '../support/audit';
import { client, Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { fakeCrmLists, Member } from './campaign-fakes';
import { member, org } from './support';

interface Mail {
  from: string;
  to: string[];
  raw: string;
}

const SMTP_USER = 'mailer';
const SMTP_PASSWORD = 'hunter2-very-secret';

/**
 * A local mail server that keeps what it is sent. It takes only SMTP_USER/SMTP_PASSWORD; recipients at
 * reject.test are refused for good (550); a recipient at busy.test is answered 421 (try later) twice, then taken.
 */
async function fakeSmtp() {
  const received: Mail[] = [];
  const busyTries = new Map<string, number>();
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) return cb(null, { user: SMTP_USER });
      cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, cb) {
      if (address.address.endsWith('@reject.test')) return cb(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
      if (address.address.endsWith('@busy.test')) {
        const n = (busyTries.get(address.address) ?? 0) + 1;
        busyTries.set(address.address, n);
        if (n <= 2) return cb(Object.assign(new Error('Too busy, try again later'), { responseCode: 421 }));
      }
      cb();
    },
    onData(stream, session, cb) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as AddressInfo).port;
  return { received, busyTries, port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const decodeQp = (s: string) => s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h) => String.fromCharCode(parseInt(h, 16)));
/** A header of a raw message, unfolded. */
const header = (raw: string, name: string) =>
  new RegExp(`^${name}:(.*(?:\\r\\n[ \\t].*)*)`, 'mi')
    .exec(raw.split('\r\n\r\n')[0])?.[1]
    .replace(/\r\n[ \t]+/g, ' ')
    .trim();

const PUBLIC_URL = 'https://crm.acme.test';

// Email campaigns (type email): the org's SMTP channel (GET/PUT/DELETE /settings/email, its test send), a
// campaign rendered per recipient and sent over SMTP (no address or a suppressed one → skipped; 550 → failed;
// 421 → retried), the signed unsubscribe link that fills the org's suppression list, and the open pixel behind openRate.
describe('email campaigns', () => {
  let smtp: Awaited<ReturnType<typeof fakeSmtp>>;
  let crm: Awaited<ReturnType<typeof fakeCrmLists>>;
  let stack: Stack;
  let acme: Awaited<ReturnType<typeof org>>;
  let globex: Awaited<ReturnType<typeof org>>;
  let lead: Client;
  let agent: Client;
  let anonymous: Client;
  let templateId: string;
  let htmlTemplateId: string;

  const channel = () => ({
    host: '127.0.0.1',
    port: smtp.port,
    secure: false,
    user: SMTP_USER,
    password: SMTP_PASSWORD,
    fromAddress: 'news@acme.test',
    fromName: 'Acme News',
  });

  beforeAll(async () => {
    smtp = await fakeSmtp();
    crm = await fakeCrmLists();
    stack = await startStack({
      services: ['automation'],
      serviceEnv: {
        automation: {
          CRM_ADDR: crm.addr,
          PUBLIC_URL,
          // The local mail server is on loopback, which the SSRF guard refuses unless the operator allows it.
          EMAIL_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1',
          // The local mail server listens on a port of the system's choosing; 587 stays allowed beside it.
          SMTP_ALLOWED_PORTS: `587,${smtp.port}`,
          CAMPAIGN_POLL_MS: '100',
          CAMPAIGN_SEND_PER_MINUTE: '6000',
          CAMPAIGN_RETRY_SCHEDULE: '300ms,300ms,300ms',
        },
      },
    });
    anonymous = client(stack.url);
    acme = await org(stack, 'Acme');
    globex = await org(stack, 'Globex');
    lead = (await member(stack, acme.owner, 'team_lead')).api;
    agent = (await member(stack, acme.owner, 'agent')).api;
    templateId = (await lead.post('/api/v1/automation/templates', { name: 'Text', content: 'Hello {{name}}, your code is {{code}}.' })).body.id;
    htmlTemplateId = (await lead.post('/api/v1/automation/templates', { name: 'Html', content: '<p>Dear <b>{{name}}</b>, code {{code}}</p>' })).body
      .id;
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await crm?.stop();
    await smtp?.close();
  });

  const person = (name: string, email: string): Partial<Member> => ({ name, email });

  async function launch(members: Array<Partial<Member>>, body: Record<string, unknown> = {}) {
    const list = crm.list(acme.orgId, members.length, `List ${Math.random().toString(36).slice(2, 8)}`, (i) => members[i]);
    const created = await lead.post('/api/v1/campaigns', {
      name: 'Spring news',
      type: 'email',
      subject: 'News for {{name}}',
      listId: list.id,
      templateId,
      variables: { code: 'SPRING' },
      ...body,
    });
    expect(created.status).toBe(201);
    expect((await lead.post(`/api/v1/campaigns/${created.body.id}/activate`)).status).toBe(200);
    return { id: created.body.id as string, members: list.members };
  }

  const completed = (id: string) =>
    eventually(
      async () => {
        const c = (await lead.get(`/api/v1/campaigns/${id}`)).body;
        return c.status === 'completed' ? c : undefined;
      },
      20_000,
      100,
    );

  const recipientsOf = async (id: string) => (await lead.get(`/api/v1/campaigns/${id}/recipients`)).body.data as any[];
  const mailsTo = (address: string) => smtp.received.filter((m) => m.to.includes(address));
  const linkPath = (raw: string, prefix: '/u/' | '/o/') => {
    const m = new RegExp(`${PUBLIC_URL.replace(/\./g, '\\.')}(${prefix}[A-Za-z0-9_-]+(?:\\.gif)?)`).exec(decodeQp(raw));
    return m![1];
  };

  it('without an org channel or SMTP_URL, an email campaign is still created as a draft (201); starting it and a test send are 422 naming the missing channel', async () => {
    expect((await lead.get('/api/v1/settings/email')).body).toEqual(
      expect.objectContaining({ source: 'none', configured: false, passwordSet: false, host: null }),
    );
    const list = crm.list(acme.orgId, 1);
    const created = await lead.post('/api/v1/campaigns', {
      name: 'No channel',
      type: 'email',
      subject: 'Hi',
      listId: list.id,
      templateId,
      variables: { code: 'A' },
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('draft');
    const res = await lead.post(`/api/v1/campaigns/${created.body.id}/activate`);
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual(expect.objectContaining({ code: 'channel_unavailable', message: expect.stringMatching(/no email channel/) }));
    expect((await lead.get(`/api/v1/campaigns/${created.body.id}`)).body.status).toBe('draft');
    const test = await acme.owner.post('/api/v1/settings/email/test', { to: 'owner@acme.test' });
    expect(test.status).toBe(422);
    expect(test.body.error.code).toBe('channel_unavailable');
  });

  it('PUT /settings/email: 400 names the field, 403 below admin, a private host is refused, the password is never echoed', async () => {
    for (const [patch, field] of [
      [{ host: '' }, 'host'],
      [{ host: 'smtp://mail.acme.test' }, 'host'],
      [{ port: 0 }, 'port'],
      [{ port: 70_000 }, 'port'],
      [{ port: '25' }, 'port'],
      // Not an SMTP port this server allows: the channel cannot be aimed at another service.
      [{ port: 8080 }, 'port'],
      [{ secure: 'yes' }, 'secure'],
      [{ fromAddress: 'not an address' }, 'fromAddress'],
      [{ fromName: 'Acme\r\nBcc: x@evil.test' }, 'fromName'],
      // 10.0.0.0/8 is private and not in EMAIL_ALLOWED_PRIVATE_ADDRESSES: refused at save.
      [{ host: '10.1.2.3' }, 'host'],
    ] as const) {
      const res = await acme.owner.put('/api/v1/settings/email', { ...channel(), ...patch });
      expect({ patch, status: res.status, fields: res.body.error?.details?.map((d: any) => d.field) }).toEqual({
        patch,
        status: 400,
        fields: [field],
      });
    }
    expect((await lead.put('/api/v1/settings/email', channel())).status).toBe(403);
    expect((await agent.get('/api/v1/settings/email')).status).toBe(403);
    expect((await anonymous.get('/api/v1/settings/email')).status).toBe(401);

    const saved = await acme.owner.put('/api/v1/settings/email', channel());
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({
      source: 'organization',
      configured: true,
      host: '127.0.0.1',
      port: smtp.port,
      secure: false,
      user: SMTP_USER,
      passwordSet: true,
      fromAddress: 'news@acme.test',
      fromName: 'Acme News',
      updatedAt: expect.any(String),
    });
    const read = await lead.get('/api/v1/settings/email');
    expect(read.body).toEqual(saved.body);
    expect(JSON.stringify(read.body)).not.toContain(SMTP_PASSWORD);
    // Another org has its own (no) channel.
    expect((await globex.owner.get('/api/v1/settings/email')).body.source).toBe('none');

    const entry = await auditEntryFor(acme.owner, 'settings.email_updated', null);
    expect(entry.details).toEqual({ changed: ['host', 'port', 'secure', 'user', 'fromAddress', 'fromName'], passwordChanged: true });
    expect(JSON.stringify(entry)).not.toContain(SMTP_PASSWORD);
  });

  it('POST /settings/email/test sends through the channel; a refused login is a 502 with the SMTP error and no secret', async () => {
    expect((await lead.post('/api/v1/settings/email/test', { to: 'x@acme.test' })).status).toBe(403);
    expect((await acme.owner.post('/api/v1/settings/email/test', { to: 'nope' })).body.error.details).toEqual([
      { field: 'to', message: expect.any(String) },
    ]);
    const ok = await acme.owner.post('/api/v1/settings/email/test', { to: 'owner@acme.test' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ delivered: true });
    expect(mailsTo('owner@acme.test')).toHaveLength(1);
    expect(header(mailsTo('owner@acme.test')[0].raw, 'From')).toBe('Acme News <news@acme.test>');

    const wrong = 'wrong-password-123';
    expect((await acme.owner.put('/api/v1/settings/email', { ...channel(), password: wrong })).status).toBe(200);
    const refused = await acme.owner.post('/api/v1/settings/email/test', { to: 'owner@acme.test' });
    expect(refused.status).toBe(502);
    // A sentence of ours with the reply code, never the server's own text.
    expect(refused.body.error).toEqual({
      code: 'smtp_error',
      message: 'The mail server refused the sign-in (535): check the user name and password',
    });
    expect(JSON.stringify(refused.body)).not.toContain('Invalid username or password');
    expect(JSON.stringify(refused.body)).not.toContain(wrong);
    // Saved again without a password: the stored one stays (same host).
    expect((await acme.owner.put('/api/v1/settings/email', { ...channel() })).status).toBe(200);
    const { password: _omitted, ...withoutPassword } = channel();
    expect((await acme.owner.put('/api/v1/settings/email', withoutPassword)).body.passwordSet).toBe(true);
    expect((await acme.owner.post('/api/v1/settings/email/test', { to: 'owner@acme.test' })).status).toBe(200);
  });

  it('an email campaign needs a subject (400) and sends the rendered email with List-Unsubscribe; the link suppresses the address', async () => {
    const list = crm.list(acme.orgId, 1);
    const noSubject = await lead.post('/api/v1/campaigns', { name: 'x', type: 'email', listId: list.id, templateId, variables: { code: 'A' } });
    expect(noSubject.status).toBe(400);
    expect(noSubject.body.error.details).toEqual([{ field: 'subject', message: 'is required' }]);
    const badPlaceholder = await lead.post('/api/v1/campaigns', {
      name: 'x',
      type: 'email',
      subject: 'Hi {{nickname}}',
      listId: list.id,
      templateId,
      variables: { code: 'A' },
    });
    expect(badPlaceholder.status).toBe(400);

    const first = await launch([person('Chi', 'chi@example.test')]);
    const done = await completed(first.id);
    expect(done).toEqual(expect.objectContaining({ type: 'email', subject: 'News for {{name}}', sentCount: 1, openRate: 0 }));
    const [mail] = mailsTo('chi@example.test');
    expect(mail.from).toBe('news@acme.test');
    expect(header(mail.raw, 'Subject')).toBe('News for Chi');
    expect(decodeQp(mail.raw)).toContain('Hello Chi, your code is SPRING.');
    const unsubscribe = linkPath(mail.raw, '/u/');
    expect(header(mail.raw, 'List-Unsubscribe')).toBe(`<${PUBLIC_URL}${unsubscribe}>`);
    expect(header(mail.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');

    // A forged or altered token is a 404 and suppresses nobody.
    const tampered = unsubscribe.slice(0, -2) + (unsubscribe.endsWith('AA') ? 'BB' : 'AA');
    expect((await anonymous.get(tampered)).status).toBe(404);
    expect((await anonymous.get('/u/not-a-token')).status).toBe(404);
    // A link checker's HEAD unsubscribes nobody either.
    expect((await fetch(stack.url + unsubscribe, { method: 'HEAD' })).status).toBe(200);
    expect((await lead.get('/api/v1/email-suppressions')).body.data).toEqual([]);

    // The link needs no sign-in: a page that asks, with a button posting to the same link. Opening it (as a mail
    // scanner or a link preview does) unsubscribes nobody.
    const page = await anonymous.get(unsubscribe);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.body).toContain('Stop sending these emails to chi@example.test?');
    expect(page.body).toContain('<form method="post">');
    expect((await lead.get('/api/v1/email-suppressions')).body.data).toEqual([]);
    // The button: a browser's form POST, answered with a page.
    const confirmed = await anonymous.post(unsubscribe, '', { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toContain('chi@example.test will not receive these emails any more');
    // One-click (RFC 8058) POSTs to the same address; repeating changes nothing.
    const oneClick = await anonymous.post(unsubscribe, 'List-Unsubscribe=One-Click', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(oneClick.status).toBe(200);
    expect(oneClick.body).toEqual({ unsubscribed: true });
    const suppressed = await lead.get('/api/v1/email-suppressions');
    expect(suppressed.body).toEqual({
      data: [{ email: 'chi@example.test', reason: 'unsubscribed', campaignId: first.id, createdAt: expect.any(String) }],
      pagination: { total: 1, page: 1, limit: 50, pages: 1 },
    });
    expect((await globex.owner.get('/api/v1/email-suppressions')).body.data).toEqual([]);
    expect((await agent.get('/api/v1/email-suppressions')).status).toBe(403);
  });

  it('a later campaign: no address and the suppressed address are skipped, one email goes out; the pixel raises openRate once', async () => {
    const before = smtp.received.length;
    const c = await launch([person('Anh', 'anh@example.test'), person('Bao', ''), person('Chi', 'CHI@example.test')], {
      templateId: htmlTemplateId,
      variables: { code: 'A&B' },
    });
    const done = await completed(c.id);
    expect(done.counts).toEqual({ total: 3, sent: 1, failed: 0, skipped: 2, pending: 0, replied: 0, cancelled: 0, seen: 0 });
    expect(smtp.received.length - before).toBe(1);
    const [mail] = mailsTo('anh@example.test');
    // HTML template: values are HTML-escaped into it.
    expect(decodeQp(mail.raw)).toContain('<p>Dear <b>Anh</b>, code A&#38;B</p>');

    const byName = Object.fromEntries((await recipientsOf(c.id)).map((r) => [r.name, r]));
    expect(byName.Anh).toEqual(expect.objectContaining({ status: 'sent', error: null, seenAt: null }));
    expect(byName.Bao).toEqual(expect.objectContaining({ status: 'skipped', error: 'The contact has no email address' }));
    expect(byName.Chi).toEqual(expect.objectContaining({ status: 'skipped', error: expect.stringMatching(/suppression list/) }));

    const pixel = linkPath(mail.raw, '/o/');
    expect((await anonymous.get(pixel.replace(/.{6}\.gif$/, 'AAAAAA.gif'))).status).toBe(404);
    const hit = await anonymous.get(pixel);
    expect(hit.status).toBe(200);
    expect(hit.headers.get('content-type')).toBe('image/gif');
    expect((await anonymous.get(pixel)).status).toBe(200);
    const opened = (await lead.get(`/api/v1/campaigns/${c.id}`)).body;
    expect(opened).toEqual(expect.objectContaining({ sentCount: 1, openRate: 1 }));
    expect(opened.counts.seen).toBe(1);
    expect((await lead.get('/api/v1/campaigns')).body.find((x: any) => x.id === c.id).openRate).toBe(1);
    expect((await recipientsOf(c.id)).find((r) => r.name === 'Anh').seenAt).toEqual(expect.any(String));
    // The unsubscribe token is not a pixel token (and the other way round).
    expect((await anonymous.get(`${linkPath(mail.raw, '/u/').replace('/u/', '/o/')}.gif`)).status).toBe(404);
  });

  it('SMTP 550 fails the recipient with the reason; 421 is retried until the server takes it', async () => {
    const c = await launch([person('Rejected', 'gone@reject.test'), person('Busy', 'later@busy.test')]);
    const done = await completed(c.id);
    expect(done.counts).toEqual(expect.objectContaining({ total: 2, sent: 1, failed: 1, skipped: 0 }));
    const byName = Object.fromEntries((await recipientsOf(c.id)).map((r) => [r.name, r]));
    expect(byName.Rejected).toEqual(expect.objectContaining({ status: 'failed', error: expect.stringMatching(/^SMTP: .*550/), attempts: 1 }));
    expect(byName.Busy).toEqual(expect.objectContaining({ status: 'sent', attempts: 3 }));
    expect(smtp.busyTries.get('later@busy.test')).toBe(3);
    expect(mailsTo('later@busy.test')).toHaveLength(1);
  });

  it('DELETE /email-suppressions/:email: admins only, 404 for an address not on this org list', async () => {
    expect((await lead.del('/api/v1/email-suppressions/chi%40example.test')).status).toBe(403);
    expect((await globex.owner.del('/api/v1/email-suppressions/chi%40example.test')).status).toBe(404);
    expect((await acme.owner.del('/api/v1/email-suppressions/not-an-address')).body.error.details).toEqual([
      { field: 'email', message: expect.any(String) },
    ]);
    expect((await acme.owner.del('/api/v1/email-suppressions/CHI%40example.test')).status).toBe(204);
    expect((await acme.owner.del('/api/v1/email-suppressions/chi%40example.test')).status).toBe(404);
    expect((await lead.get('/api/v1/email-suppressions')).body.data).toEqual([]);
  });

  it('a login the mail server refuses pauses the campaign with the reason; fixed and activated again, it completes', async () => {
    expect((await acme.owner.put('/api/v1/settings/email', { ...channel(), password: 'expired-password' })).status).toBe(200);
    const c = await launch([person('Em', 'em@example.test'), person('Giang', 'giang@example.test')]);
    const paused = await eventually(
      async () => {
        const body = (await lead.get(`/api/v1/campaigns/${c.id}`)).body;
        return body.status === 'paused' ? body : undefined;
      },
      15_000,
      100,
    );
    expect(paused.lastError).toMatch(/535/);
    expect(paused.lastError).not.toContain('expired-password');
    expect(paused.counts).toEqual(expect.objectContaining({ sent: 0, failed: 0, pending: 2 }));

    expect((await acme.owner.put('/api/v1/settings/email', channel())).status).toBe(200);
    expect((await lead.post(`/api/v1/campaigns/${c.id}/activate`)).status).toBe(200);
    expect((await completed(c.id)).counts).toEqual(expect.objectContaining({ sent: 2, failed: 0 }));
    expect(mailsTo('em@example.test')).toHaveLength(1);
  });

  it('campaigns of another org are 404; DELETE /settings/email falls back to no channel (422 again)', async () => {
    const c = await launch([person('Dung', 'dung@example.test')]);
    expect((await globex.owner.get(`/api/v1/campaigns/${c.id}`)).status).toBe(404);
    expect((await globex.owner.get(`/api/v1/campaigns/${c.id}/recipients`)).status).toBe(404);
    await completed(c.id);

    expect((await lead.del('/api/v1/settings/email')).status).toBe(403);
    expect((await acme.owner.del('/api/v1/settings/email')).status).toBe(204);
    expect((await acme.owner.del('/api/v1/settings/email')).status).toBe(404);
    await auditEntryFor(acme.owner, 'settings.email_cleared', null);
    expect((await lead.get('/api/v1/settings/email')).body.source).toBe('none');
    const list = crm.list(acme.orgId, 1);
    const draft = await lead.post('/api/v1/campaigns', {
      name: 'x',
      type: 'email',
      subject: 'Hi',
      listId: list.id,
      templateId,
      variables: { code: 'A' },
    });
    expect(draft.status).toBe(201);
    expect((await lead.post(`/api/v1/campaigns/${draft.body.id}/activate`)).body.error.code).toBe('channel_unavailable');
  });
});
