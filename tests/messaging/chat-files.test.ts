import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { devInternalAuth } from '@crm/grpc-kit';
import { eventually } from '@crm/testing';
import { client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { addUser } from '../chatnet-connector/support';
import { orgWithKey } from './support';

// Issue #15 item 1, files both ways. Through the gateway with the sandbox network, the real connector, messaging and
// crm: a message sent with attachments delivers the files themselves (the network records the SHA-256 of the bytes it
// got), and files a contact sends are stored like uploads and listed on the message, served back with the caller's
// credential only.
// Above the gateway's 1 MB JSON limit, so a push with a bigger file shows the sandbox route's own body limit.
const LIMIT = 1_500_000;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const png = (extra = 2_000) => Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d494844520000004000000030', 'hex'), randomBytes(extra)]);
const pdf = (extra = 3_000) => Buffer.concat([Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'), randomBytes(extra)]);

describe('files both ways on the chat network', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let accountId: string;
  let convId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-files-'));

  const upload = async (token: string, name: string, type: string, bytes: Buffer) => {
    const fd = new FormData();
    fd.append('file', new Blob([bytes], { type }), name);
    const r = await fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: fd });
    return { status: r.status, body: (await r.json()) as any };
  };
  const download = async (token: string | undefined, url: string) => {
    const r = await fetch(`${stack.url}${url}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: r.status, bytes: Buffer.from(await r.arrayBuffer()), type: r.headers.get('content-type') };
  };
  const inbound = (body: Record<string, unknown>) =>
    a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-files', fromName: 'Mai Tran', ...body });
  const file = (fileName: string, mimeType: string, bytes: Buffer) => ({ fileName, mimeType, contentBase64: bytes.toString('base64') });

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      // One limit for both sides of the attachment port, small enough to cross without a 25 MB body.
      env: { ATTACHMENT_MAX_BYTES: String(LIMIT) },
      serviceEnv: { messaging: { ATTACHMENTS_DIR: dir }, 'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' } },
    });
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    accountId = (await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' })).body.id;
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    expect((await inbound({ content: 'Hello shop' })).status).toBe(200);
    convId = (await eventually(async () => (await a.owner.get('/api/v1/conversations')).body.data[0])).id;
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('POST /conversations/:id/messages with 2 attachments → the network receives both files: sandbox sent lists their sha256', async () => {
    const photo = png(5_000);
    const quote = pdf(150_000);
    const up1 = await upload(a.token, 'catalogue.png', 'image/png', photo);
    const up2 = await upload(a.token, 'báo giá.pdf', 'application/pdf', quote);
    expect([up1.status, up2.status]).toEqual([201, 201]);
    const sent = await a.owner.post(`/api/v1/conversations/${convId}/messages`, { content: 'Here you go', attachments: [up1.body.id, up2.body.id] });
    expect(sent.status).toBe(201);
    expect(sent.body.attachments.map((f: any) => f.id)).toEqual(expect.arrayContaining([up1.body.id, up2.body.id]));

    const network = await a.owner.get(`/sandbox/accounts/${accountId}/sent`);
    expect(network.status).toBe(200);
    const item = network.body.data.find((m: any) => m.content === 'Here you go');
    expect(item.attachments).toEqual([
      { fileName: 'catalogue.png', mimeType: 'image/png', size: photo.length, sha256: sha256(photo) },
      { fileName: 'báo giá.pdf', mimeType: 'application/pdf', size: quote.length, sha256: sha256(quote) },
    ]);
    // A message of files only goes out without text.
    const solo = await upload(a.token, 'only.pdf', 'application/pdf', pdf());
    expect((await a.owner.post(`/api/v1/conversations/${convId}/messages`, { content: '', attachments: [solo.body.id] })).status).toBe(201);
    const latest = (await a.owner.get(`/sandbox/accounts/${accountId}/sent`)).body.data[0];
    expect(latest).toEqual(
      expect.objectContaining({
        content: '',
        attachments: [expect.objectContaining({ fileName: 'only.pdf', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })],
      }),
    );
  });

  it('an inbound photo and PDF are stored and listed on the message; each url serves the same bytes with a credential (401 without, 404 for another org)', async () => {
    const photo = png(4_000);
    const quote = pdf(1_100_000);
    const res = await inbound({
      content: '',
      chatnetMessageId: 'net-files-1',
      attachments: [file('IMG_0001.png', 'image/png', photo), file('../../etc/quote\u0007.pdf', 'application/pdf', quote)],
    });
    expect(res.status).toBe(200);

    const message = await eventually(async () => {
      const detail = await a.owner.get(`/api/v1/conversations/${convId}`);
      return detail.body.messages.find((m: any) => m.content === '' && m.isFromChatnet && m.attachments.length === 2);
    });
    expect(message.attachments).toEqual([
      expect.objectContaining({
        id: expect.any(String),
        filename: 'IMG_0001.png',
        contentType: 'image/png',
        size: photo.length,
        url: expect.stringMatching(/^\/api\/v1\/chat\/attachments\//),
      }),
      // The sender's name is cleaned like an upload's: no path, no control characters.
      expect.objectContaining({ filename: 'quote.pdf', contentType: 'application/pdf', size: quote.length }),
    ]);
    const [p, q] = message.attachments;
    const got = await download(a.token, p.url);
    expect([got.status, got.type, sha256(got.bytes)]).toEqual([200, 'image/png', sha256(photo)]);
    expect(sha256((await download(a.token, q.url)).bytes)).toBe(sha256(quote));
    expect((await download(undefined, p.url)).status).toBe(401);
    expect((await download(b.token, p.url)).status).toBe(404);
    // On messaging's attachments port the connector reads a file only for an org another party vouched for (the
    // call it is serving: messaging's, or the gateway's user's), and only that org's; crm may not at all.
    const seed = stack.env.INTERNAL_AUTH_SEED;
    const DOWNLOAD = 'messaging.v1.Http/DownloadAttachment';
    const originFor = (orgId: string) =>
      devInternalAuth('messaging', seed).sign({ orgId }, 'connector.v1.ConnectorService/SendChatMessage').split('~')[0];
    const direct = (who: 'connector' | 'crm', orgId: string, origin?: string) =>
      fetch(`${stack.env.MESSAGING_HTTP_URL}/v1/attachments/${p.id}`, {
        headers: {
          authorization: `Bearer ${devInternalAuth(who, seed).sign({ orgId, origin }, DOWNLOAD)}`,
          ...(origin ? { 'x-crm-origin': origin } : {}),
        },
      });
    expect((await direct('connector', a.orgId, originFor(a.orgId))).status).toBe(200);
    expect((await direct('connector', b.orgId, originFor(b.orgId))).status).toBe(404);
    // Alone (its own say-so) or with an origin for another org: refused whichever org it names.
    expect((await direct('connector', a.orgId)).status).toBe(403);
    expect((await direct('connector', a.orgId, originFor(b.orgId))).status).toBe(403);
    expect((await direct('crm', a.orgId)).status).toBe(403);
    // The same files through the public API's message shape.
    const pub = await a.pub.get(`/api/public/conversations/${convId}/messages`);
    expect(pub.body.messages.find((m: any) => m.id === message.id).attachments.map((f: any) => f.id)).toEqual([p.id, q.id]);
  });

  it('an agent limited to assigned conversations gets 404 for the files of a conversation hidden from them', async () => {
    const agent = await addUser(client(stack.url), a.owner, 'agent');
    const token = (await client(stack.url).post('/api/v1/auth/login', { email: agent.user.email, password: 'correct horse battery' })).body
      .token as string;
    const detail = await a.owner.get(`/api/v1/conversations/${convId}`);
    const url = detail.body.messages.find((m: any) => m.attachments.length === 2).attachments[0].url;
    expect((await download(token, url)).status).toBe(200);
    expect((await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' })).status).toBe(200);
    expect((await download(token, url)).status).toBe(404);
    expect((await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'all' })).status).toBe(200);
    expect((await download(token, url)).status).toBe(200);
  });

  describe('POST /sandbox/accounts/:id/inbound refuses bad files with 400 naming the field; the message is not delivered', () => {
    const expectField = (res: { status: number; body: any }, field: string, code?: string) => {
      expect([res.status, res.body.error.details?.map((d: any) => d.field)]).toEqual([400, expect.arrayContaining([field])]);
      if (code) expect(res.body.error.code).toBe(code);
    };

    it('bad base64', async () => {
      expectField(
        await inbound({ content: '', attachments: [{ fileName: 'a.png', mimeType: 'image/png', contentBase64: 'not base64!' }] }),
        'attachments.0.contentBase64',
      );
    });

    it('more than 10 files', async () => {
      const eleven = Array.from({ length: 11 }, (_, i) => file(`p${i}.png`, 'image/png', png(10)));
      expectField(await inbound({ content: '', attachments: eleven }), 'attachments');
    });

    it('a file larger than the attachment limit', async () => {
      expectField(await inbound({ content: 'big', attachments: [file('big.pdf', 'application/pdf', pdf(LIMIT))] }), 'attachments.0.contentBase64');
    });

    it('content that contradicts the declared type (a PDF sent as image/png)', async () => {
      expectField(
        await inbound({ content: '', attachments: [file('fake.png', 'image/png', pdf())] }),
        'attachments.0.mimeType',
        'content_type_mismatch',
      );
    });

    it('neither content nor files; a missing mimeType', async () => {
      expectField(await inbound({ content: '' }), 'content');
      expectField(
        await inbound({ content: 'x', attachments: [{ fileName: 'a.png', contentBase64: png(10).toString('base64') }] }),
        'attachments.0.mimeType',
      );
    });

    it('nothing of a refused push reaches the conversation; another org pushing to the account is 404', async () => {
      const before = (await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages.length;
      const other = await b.owner.post(`/sandbox/accounts/${accountId}/inbound`, {
        fromUid: 'x',
        content: '',
        attachments: [file('p.png', 'image/png', png(10))],
      });
      expect(other.status).toBe(404);
      await new Promise((r) => setTimeout(r, 300));
      expect((await a.owner.get(`/api/v1/conversations/${convId}`)).body.messages.length).toBe(before);
    });
  });
});
