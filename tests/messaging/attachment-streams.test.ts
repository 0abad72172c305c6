import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client as PgClient } from 'pg';
import { devInternalAuth } from '@crm/grpc-kit';
import { eventually } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';
import { connectPatiently } from '../support/patient-client';

// Full collections between memory samples, so the figures are what is held, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = 1024 * 1024;
const BOUNDARY = 'test-boundary-7f3a';

/** multipart/form-data with one file under `field`. */
function form(field: string, name: string, type: string, bytes: Buffer) {
  const fd = new FormData();
  fd.append(field, new Blob([bytes], { type }), name);
  return fd;
}

/**
 * POST a multipart body of `size` random bytes produced as it is sent (64 KB at a time) with node:http: the
 * test never holds the file either (fetch keeps a streamed request body in memory until it is done).
 */
function streamUpload(url: string, token: string, size: number, filename: string): Promise<{ status: number; body: any; sha256: string }> {
  const hash = createHash('sha256');
  const parts = function* () {
    yield Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    for (let sent = 0; sent < size; sent += 64 * 1024) {
      const chunk = randomBytes(Math.min(64 * 1024, size - sent));
      hash.update(chunk);
      yield chunk;
    }
    yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  };
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), sha256: hash.digest('hex') }));
      },
    );
    req.on('error', reject);
    Readable.from(parts()).pipe(req);
  });
}

/** Live memory of this process: collected twice, a tick apart, so freed buffers are really gone from the count. */
async function held(): Promise<number> {
  gc();
  await new Promise((r) => setTimeout(r, 5));
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

// Uploads and downloads stream: the gateway authenticates and proxies them to messaging's HTTP endpoint with the
// caller signed for messaging; messaging writes to disk as bytes arrive, checks the content against the claimed
// type and the org's storage quota, and deletes uploads no message took within ATTACHMENTS_ORPHAN_HOURS.
describe('attachment streams', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let db: PgClient;
  let big: { id: string; url: string; sha256: string };
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-streams-'));
  const filesOf = (orgId: string) => (existsSync(path.join(dir, orgId)) ? readdirSync(path.join(dir, orgId)).sort() : []);

  const upload = (token: string, body: FormData) =>
    fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  const download = (token: string, url: string) => fetch(`${stack.url}${url}`, { headers: { authorization: `Bearer ${token}` } });
  const sha256Of = async (res: Response) => {
    const hash = createHash('sha256');
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
    return hash.digest('hex');
  };

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging'],
      // A JSON body limit far below the files: uploads never pass through the gateway's body parser.
      env: { BODY_LIMIT: '1kb' },
      serviceEnv: {
        messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir, ATTACHMENTS_QUOTA_MB: '30' },
      },
    });
    bus = await eventBus(stack);
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    db = await connectPatiently(stack.databaseUrl('messaging'));
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('POST /chat/attachments streams a 20 MB file through: neither the gateway nor messaging holds it (201)', async () => {
    const before = await held();
    let peak = before;
    let sampling = true;
    // Two full collections of this process (the whole stack lives in it) take a while, and longer on a loaded machine:
    // the sampler waits four times as long as its last sample took (100 ms at least), so the transfer always keeps
    // four fifths of the time. A fixed 100 ms once left it almost none on a slow CI machine (the upload timed out).
    const sampler = (async () => {
      let took = 0;
      while (sampling) {
        await new Promise((r) => setTimeout(r, Math.max(100, 4 * took)));
        const t0 = performance.now();
        peak = Math.max(peak, await held());
        took = performance.now() - t0;
      }
    })();
    const res = await streamUpload(`${stack.url}/api/v1/chat/attachments`, a.token, 20 * MB, 'site survey.bin').finally(() => (sampling = false));
    await sampler;
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      filename: 'site survey.bin',
      size: 20 * MB,
      contentType: 'application/octet-stream',
      url: `/api/v1/chat/attachments/${res.body.id}`,
      uploadedAt: expect.any(String),
      expiredAt: null,
    });
    // Gateway, messaging and this test share one process: all three together never held half the file (holding
    // it whole, as a buffered upload and one gRPC message, costs two to three times its size).
    expect(peak - before).toBeLessThan(10 * MB);
    big = { id: res.body.id, url: res.body.url, sha256: res.sha256 };
    expect(filesOf(a.orgId)).toEqual([big.id]);
  }, 60_000);

  it('GET /chat/attachments/:id streams the same bytes back with length, type, disposition and nosniff', async () => {
    const got = await download(a.token, big.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-length')).toBe(String(20 * MB));
    expect(got.headers.get('content-type')).toBe('application/octet-stream');
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="site survey.bin"; filename*=UTF-8''site%20survey.bin`);
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(got.headers.get('etag')).toBe(`"${big.sha256}"`);
    expect(await sha256Of(got)).toBe(big.sha256);
  }, 30_000);

  it("another org's attachment is 404", async () => {
    const res = await download(b.token, big.url);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('an upload past the org quota is 413 storage_quota_exceeded and nothing is kept; the quota is per org', async () => {
    // Org A keeps 20 MB of its 30 MB: 11 MB more does not fit.
    const res = await upload(a.token, form('file', 'more.bin', 'application/octet-stream', Buffer.alloc(11 * MB, 3)));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('storage_quota_exceeded');
    expect(res.body.requestId).toEqual(expect.any(String));
    expect(filesOf(a.orgId)).toEqual([big.id]);
    expect((await db.query('SELECT count(*)::int AS n FROM attachments WHERE org_id = $1', [a.orgId])).rows[0].n).toBe(1);
    // Org B's storage is its own.
    const other = await upload(b.token, form('file', 'more.bin', 'application/octet-stream', Buffer.alloc(11 * MB, 3)));
    expect(other.status).toBe(201);
  }, 30_000);

  it('a file whose bytes contradict its declared type or extension is 400 content_type_mismatch naming file', async () => {
    const exe = Buffer.concat([Buffer.from('4d5a90000300000004000000ffff0000', 'hex'), randomBytes(4096)]);
    const cases: [string, string, Buffer][] = [
      ['cat.png', 'image/png', exe],
      ['setup.png', 'application/octet-stream', exe],
      ['report.pdf', 'application/pdf', Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(512)])],
      ['notes.txt', 'text/plain', Buffer.concat([Buffer.from('hello'), Buffer.alloc(64), randomBytes(256)])],
      ['clip.mp4', 'video/mp4', Buffer.from('definitely not a video container')],
    ];
    for (const [name, type, bytes] of cases) {
      const res = await upload(a.token, form('file', name, type, bytes));
      expect({ name, status: res.status, code: res.body.error?.code }).toEqual({ name, status: 400, code: 'content_type_mismatch' });
      expect(res.body.error.details[0].field).toBe('file');
    }
    expect(filesOf(a.orgId)).toEqual([big.id]);
  });

  it('files whose bytes match are kept: images, Office (ZIP), audio, video, text in any 8-bit encoding, untyped programs', async () => {
    const cases: [string, string, Buffer][] = [
      ['photo.jpg', 'image/jpeg', Buffer.concat([Buffer.from('ffd8ffe000104a464946', 'hex'), randomBytes(1024)])],
      [
        'offer.docx',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        Buffer.concat([Buffer.from('504b0304', 'hex'), randomBytes(512)]),
      ],
      ['voice.mp3', 'audio/mpeg', Buffer.concat([Buffer.from('ID3'), randomBytes(512)])],
      ['clip.mp4', 'video/mp4', Buffer.concat([Buffer.from('000000206674797069736f6d', 'hex'), randomBytes(512)])],
      ['price list.csv', 'text/csv', Buffer.from('name;price\r\nB\xe1nh m\xec;20000\r\n', 'latin1')],
      ['tool.exe', 'application/octet-stream', Buffer.concat([Buffer.from('MZ'), randomBytes(512)])],
    ];
    for (const [name, type, bytes] of cases) {
      const res = await upload(a.token, form('file', name, type, bytes));
      expect({ name, status: res.status }).toEqual({ name, status: 201 });
      const got = await download(a.token, res.body.url);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    }
  });

  describe("messaging's HTTP endpoint", () => {
    const direct = (pathname: string, init: RequestInit = {}) => fetch(`${stack.env.MESSAGING_HTTP_URL}${pathname}`, init);
    const ctxA = () => ({ orgId: a.orgId, userId: a.user.id, role: 'owner', requestId: 'direct-test' });
    const DOWNLOAD = 'messaging.v1.Http/DownloadAttachment';

    it('refuses a request without a token, with a forged one or one for another service (401)', async () => {
      const forged = devInternalAuth('gateway', 'f'.repeat(64)).sign(ctxA(), DOWNLOAD);
      const forCrm = devInternalAuth('gateway', stack.env.INTERNAL_AUTH_SEED).sign(ctxA(), 'crm.v1.CrmService/GetContact');
      for (const authorization of [undefined, `Bearer ${forged}`, `Bearer ${forCrm}`, `Bearer ${a.token}`]) {
        const headers: Record<string, string> = authorization ? { authorization } : {};
        const get = await direct(`/v1/attachments/${big.id}`, { headers });
        expect(get.status).toBe(401);
        expect(((await get.json()) as { error: { code: string } }).error.code).toBe('internal_credential_refused');
        const post = await direct('/v1/attachments', { method: 'POST', headers, body: form('file', 'x.txt', 'text/plain', Buffer.from('x')) });
        expect(post.status).toBe(401);
      }
      expect(filesOf(a.orgId).filter((f) => f.endsWith('.part'))).toEqual([]);
    });

    it("refuses another service's credential (403) and serves only the signed org's files", async () => {
      const automation = devInternalAuth('automation', stack.env.INTERNAL_AUTH_SEED).sign(ctxA(), DOWNLOAD);
      expect((await direct(`/v1/attachments/${big.id}`, { headers: { authorization: `Bearer ${automation}` } })).status).toBe(403);
      const gateway = devInternalAuth('gateway', stack.env.INTERNAL_AUTH_SEED);
      const asA = await direct(`/v1/attachments/${big.id}`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${gateway.sign(ctxA(), DOWNLOAD)}` },
      });
      expect(asA.status).toBe(200);
      const asB = gateway.sign({ orgId: b.orgId, userId: b.user.id, role: 'owner' }, DOWNLOAD);
      expect((await direct(`/v1/attachments/${big.id}`, { headers: { authorization: `Bearer ${asB}` } })).status).toBe(404);
    });
  });

  it('uploads no message took within ATTACHMENTS_ORPHAN_HOURS are deleted, file and row; sent and recent ones stay', async () => {
    const accountA = connector.account(a.orgId);
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-1', fromName: 'Anh' });
    const conv = await eventually(async () => (await a.owner.get('/api/v1/conversations')).body.data[0]);
    const sent = await upload(a.token, form('file', 'sent.txt', 'text/plain', Buffer.from('sent with a message')));
    expect((await a.owner.post(`/api/v1/conversations/${conv.id}/messages`, { content: 'see file', attachments: [sent.body.id] })).status).toBe(201);
    const recent = await upload(a.token, form('file', 'recent.txt', 'text/plain', Buffer.from('uploaded just now')));
    await db.query(`UPDATE attachments SET uploaded_at = now() - interval '25 hours' WHERE id = ANY($1::uuid[])`, [[big.id, sent.body.id]]);
    // The sweep sleeps until the oldest upload falls due (a day away): a write that moves a due time earlier wakes it.
    await db.query(`SELECT pg_notify('messaging_attachments_due', '')`);

    // The sweep takes the back-dated orphan only.
    // Its row goes first (the download is 404 from then on), its file just after (the sweeper's order: a crash in
    // between leaves harmless bytes, never a row without its file).
    await eventually(async () => (await download(a.token, big.url)).status === 404 && !filesOf(a.orgId).includes(big.id), 15_000);
    expect(filesOf(a.orgId)).not.toContain(big.id);
    expect((await download(a.token, sent.body.url)).status).toBe(200);
    expect((await download(a.token, recent.body.url)).status).toBe(200);
    // The space is free again.
    expect((await upload(a.token, form('file', 'more.bin', 'application/octet-stream', Buffer.alloc(11 * MB, 3)))).status).toBe(201);
  }, 30_000);

  it('with messaging unreachable, uploads and downloads are 503 with the usual error body', async () => {
    const one = await upload(a.token, form('file', 'late.txt', 'text/plain', Buffer.from('x')));
    expect(one.status).toBe(201);
    await stack.stopService('messaging');
    const up = await upload(a.token, form('file', 'late.txt', 'text/plain', Buffer.from('x')));
    expect(up.status).toBe(503);
    expect(up.body).toEqual({ error: { code: 'unavailable', message: expect.stringMatching(/messaging/) }, requestId: expect.any(String) });
    const down = await download(a.token, one.body.url);
    expect(down.status).toBe(503);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe('unavailable');
  });
});
