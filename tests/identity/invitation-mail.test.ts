import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { Client, client, email, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

interface Mail {
  from: string;
  to: string[];
  raw: string;
}

/** A local mail server that keeps what it is sent; recipients at reject.test are refused. */
async function fakeSmtp() {
  const received: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, cb) {
      if (address.address.endsWith('@reject.test')) return cb(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
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
  return { received, port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Quoted-printable soft line breaks and escapes undone, so links and names can be searched for. */
const decodeQp = (s: string) => s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h) => String.fromCharCode(parseInt(h, 16)));

describe('invitation mail through SMTP', () => {
  let smtp: Awaited<ReturnType<typeof fakeSmtp>>;
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;

  beforeAll(async () => {
    smtp = await fakeSmtp();
    stack = await startStack({ serviceEnv: { identity: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: 'Acme CRM <crm@acme.test>' } } });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme & Sons');
  });
  afterAll(async () => {
    await stack.stop();
    await smtp.close();
  });

  it('an invited user gets the link by mail (invitationSent true) and can set a password with it', async () => {
    const to = email('invited');
    const res = await acme.owner.post('/api/v1/users', { email: to, fullName: 'Lan <b>Tran</b>', role: 'agent' });
    expect(res.status).toBe(201);
    expect(res.body.invitationSent).toBe(true);
    const mail = smtp.received.find((m) => m.to.includes(to));
    expect(mail).toBeDefined();
    expect(mail!.from).toBe('crm@acme.test');
    const body = decodeQp(mail!.raw);
    expect(body).toContain('Subject: Join Acme & Sons');
    expect(body).toContain(res.body.inviteUrl);
    // The name is the user's text: escaped in the HTML part, never markup.
    expect(body).toContain('Lan &#60;b&#62;Tran&#60;/b&#62;');
    const token = new URL(res.body.inviteUrl).searchParams.get('token');
    const accepted = await api.post('/api/v1/auth/invitations/accept', { token, password: 'a long enough password 1' });
    expect(accepted.status).toBe(200);
  });

  it('a user created with a password gets no mail', async () => {
    const to = email('withpw');
    const res = await acme.owner.post('/api/v1/users', { email: to, fullName: 'Has Password', role: 'agent', password: 'a long enough password 2' });
    expect(res.status).toBe(201);
    expect(res.body.invitationSent).toBe(false);
    expect(smtp.received.some((m) => m.to.includes(to))).toBe(false);
  });

  it('a refused mail leaves the user created with invitationSent false and the link to share', async () => {
    const res = await acme.owner.post('/api/v1/users', { email: `nobody.${Date.now()}@reject.test`, fullName: 'Refused', role: 'agent' });
    expect(res.status).toBe(201);
    expect(res.body.invitationSent).toBe(false);
    expect(res.body.inviteUrl).toMatch(/accept-invitation\?token=/);
    const list = await acme.owner.get('/api/v1/users?limit=100');
    expect(list.body.data.map((u: { email: string }) => u.email)).toContain(res.body.email);
  });
});
