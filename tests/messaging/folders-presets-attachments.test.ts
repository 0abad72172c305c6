import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

/** multipart/form-data with one file under `field`. */
function form(field: string, name: string, type: string, bytes: Buffer) {
  const fd = new FormData();
  fd.append(field, new Blob([bytes], { type }), name);
  return fd;
}

// Chat folders organise conversations, presets hold reusable replies, attachments are uploaded once,
// served back with auth, and sent with a message. All of them belong to one organization.
describe('chat folders, presets and attachments', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let accountA: string;
  let conv1: string;
  let conv2: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-files-'));

  const upload = (token: string, fd: FormData) =>
    fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: fd }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  const download = (token: string | undefined, url: string) =>
    fetch(`${stack.url}${url}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging'],
      serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir } },
    });
    bus = await eventBus(stack);
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    accountA = connector.account(a.orgId);
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-1', fromName: 'Anh' });
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-2', fromName: 'Binh' });
    const list = await eventually(async () => {
      const r = await a.owner.get('/api/v1/conversations');
      return r.body.data.length === 2 && r.body.data;
    });
    [conv1, conv2] = list.map((c: any) => c.id);
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('chat folders', () => {
    let folderId: string;

    it('POST /chat/folders creates a folder (201) with conversationCount 0', async () => {
      const res = await a.owner.post('/api/v1/chat/folders', { name: 'VIP', color: '#f59e0b' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(String), name: 'VIP', color: '#F59E0B', conversationCount: 0, createdAt: expect.any(String) });
      folderId = res.body.id;
      const noColor = await a.owner.post('/api/v1/chat/folders', { name: 'Later' });
      expect(noColor.body.color).toBe('#6B7280');
    });

    it('POST /chat/folders with a missing name, a bad color or a taken name is 400/409', async () => {
      expect((await a.owner.post('/api/v1/chat/folders', { color: '#fff' })).body.error.details[0].field).toBe('name');
      const badColor = await a.owner.post('/api/v1/chat/folders', { name: 'X', color: 'blue' });
      expect(badColor.status).toBe(400);
      expect(badColor.body.error.details[0].field).toBe('color');
      const taken = await a.owner.post('/api/v1/chat/folders', { name: 'vip' });
      expect(taken.status).toBe(409);
      expect(taken.body.error.code).toBe('folder_name_taken');
      // Names are per organization.
      expect((await b.owner.post('/api/v1/chat/folders', { name: 'VIP' })).status).toBe(201);
    });

    it('conversations are put in folders; counts, filters and the conversation show it', async () => {
      const res = await a.owner.post(`/api/v1/chat/folders/${folderId}/conversations`, { conversationIds: [conv1, conv2] });
      expect(res.status).toBe(200);
      expect(res.body.conversationCount).toBe(2);
      // Adding again is a no-op.
      expect((await a.owner.post(`/api/v1/chat/folders/${folderId}/conversations`, { conversationIds: [conv1] })).body.conversationCount).toBe(2);
      const inFolder = await a.owner.get(`/api/v1/conversations?folderId=${folderId}`);
      expect(inFolder.body.data.map((c: any) => c.id).sort()).toEqual([conv1, conv2].sort());
      expect(inFolder.body.data[0].folderIds).toEqual([folderId]);
      expect((await a.owner.get(`/api/v1/conversations/${conv1}`)).body.conversation.folderIds).toEqual([folderId]);

      const removed = await a.owner.del(`/api/v1/chat/folders/${folderId}/conversations/${conv2}`);
      expect(removed.status).toBe(204);
      const folders = await a.owner.get('/api/v1/chat/folders');
      expect(folders.status).toBe(200);
      expect(folders.body).toEqual([
        expect.objectContaining({ id: folderId, name: 'VIP', conversationCount: 1 }),
        expect.objectContaining({ name: 'Later', conversationCount: 0 }),
      ]);
      expect((await a.owner.del(`/api/v1/chat/folders/${folderId}/conversations/${conv2}`)).status).toBe(404);
      expect((await a.owner.post(`/api/v1/chat/folders/${folderId}/conversations`, { conversationIds: [] })).status).toBe(400);
      expect((await a.owner.post(`/api/v1/chat/folders/${folderId}/conversations`, { conversationIds: ['nope'] })).status).toBe(404);
    });

    it('PUT /chat/folders/:id renames and recolours; only sent fields change', async () => {
      const res = await a.owner.put(`/api/v1/chat/folders/${folderId}`, { name: 'Top customers' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ name: 'Top customers', color: '#F59E0B', conversationCount: 1 }));
      expect((await a.owner.put(`/api/v1/chat/folders/${folderId}`, { color: '#000' })).body.color).toBe('#000');
      expect((await a.owner.put(`/api/v1/chat/folders/${folderId}`, { name: '' })).status).toBe(400);
      expect((await a.owner.put(`/api/v1/chat/folders/${folderId}`, { name: 'Later' })).status).toBe(409);
    });

    it("org B cannot see, change, fill or delete org A's folders, nor file A's conversations", async () => {
      const bFolders = await b.owner.get('/api/v1/chat/folders');
      expect(bFolders.body.map((f: any) => f.name)).toEqual(['VIP']);
      expect((await b.owner.put(`/api/v1/chat/folders/${folderId}`, { name: 'mine' })).status).toBe(404);
      expect((await b.owner.del(`/api/v1/chat/folders/${folderId}`)).status).toBe(404);
      expect((await b.owner.post(`/api/v1/chat/folders/${folderId}/conversations`, { conversationIds: [conv1] })).status).toBe(404);
      expect((await b.owner.del(`/api/v1/chat/folders/${folderId}/conversations/${conv1}`)).status).toBe(404);
      const bFolder = bFolders.body[0].id;
      expect((await b.owner.post(`/api/v1/chat/folders/${bFolder}/conversations`, { conversationIds: [conv1] })).status).toBe(404);
      expect((await a.owner.get('/api/v1/chat/folders')).body[0].conversationCount).toBe(1);
    });

    it('DELETE /chat/folders/:id removes the folder (204) but not its conversations', async () => {
      expect((await a.owner.del(`/api/v1/chat/folders/${folderId}`)).status).toBe(204);
      expect((await a.owner.del(`/api/v1/chat/folders/${folderId}`)).status).toBe(404);
      expect((await a.owner.get(`/api/v1/conversations/${conv1}`)).body.conversation.folderIds).toEqual([]);
      expect((await a.owner.get('/api/v1/conversations')).body.pagination.total).toBe(2);
    });
  });

  describe('chat presets', () => {
    let presetId: string;

    it('POST /chat/presets creates (201); GET lists them as an array, optionally by category', async () => {
      const res = await a.owner.post('/api/v1/chat/presets', { name: 'Greeting', content: 'Hello! How can we help?', category: 'general' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        name: 'Greeting',
        content: 'Hello! How can we help?',
        category: 'general',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      presetId = res.body.id;
      await a.owner.post('/api/v1/chat/presets', { name: 'Shipping', content: 'Ships in 2 days', category: 'orders' });
      const list = await a.owner.get('/api/v1/chat/presets');
      expect(list.status).toBe(200);
      expect(list.body.map((p: any) => p.name)).toEqual(['Greeting', 'Shipping']);
      expect((await a.owner.get('/api/v1/chat/presets?category=orders')).body.map((p: any) => p.name)).toEqual(['Shipping']);
      expect((await a.owner.get(`/api/v1/chat/presets/${presetId}`)).body.name).toBe('Greeting');
    });

    it('a preset without name or content is 400', async () => {
      expect((await a.owner.post('/api/v1/chat/presets', { content: 'x' })).body.error.details[0].field).toBe('name');
      expect((await a.owner.post('/api/v1/chat/presets', { name: 'x' })).body.error.details[0].field).toBe('content');
    });

    it('PUT /chat/presets/:id updates only the sent fields', async () => {
      const res = await a.owner.put(`/api/v1/chat/presets/${presetId}`, { content: 'Hi! What can we do for you?' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ name: 'Greeting', content: 'Hi! What can we do for you?', category: 'general' }));
      expect((await a.owner.put(`/api/v1/chat/presets/${presetId}`, { name: '  ' })).status).toBe(400);
    });

    it("org B neither sees nor touches org A's presets; DELETE removes (204)", async () => {
      expect((await b.owner.get('/api/v1/chat/presets')).body).toEqual([]);
      expect((await b.owner.get(`/api/v1/chat/presets/${presetId}`)).status).toBe(404);
      expect((await b.owner.put(`/api/v1/chat/presets/${presetId}`, { name: 'x' })).status).toBe(404);
      expect((await b.owner.del(`/api/v1/chat/presets/${presetId}`)).status).toBe(404);
      expect((await a.owner.get('/api/v1/chat/presets/not-a-uuid')).status).toBe(404);
      expect((await a.owner.del(`/api/v1/chat/presets/${presetId}`)).status).toBe(204);
      expect((await a.owner.get(`/api/v1/chat/presets/${presetId}`)).status).toBe(404);
    });
  });

  describe('attachments', () => {
    let attachment: any;
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(2048, 7)]);

    it('POST /chat/attachments stores the file (201) and serves it back by url with auth', async () => {
      const res = await upload(a.token, form('file', 'photo of shelf.png', 'image/png', png));
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        filename: 'photo of shelf.png',
        size: png.length,
        contentType: 'image/png',
        url: `/api/v1/chat/attachments/${res.body.id}`,
        uploadedAt: expect.any(String),
        expiredAt: null,
      });
      attachment = res.body;
      expect(existsSync(path.join(dir, a.orgId, attachment.id))).toBe(true);

      const got = await download(a.token, attachment.url);
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('image/png');
      expect(got.headers.get('content-disposition')).toMatch(/^inline; filename="photo of shelf.png"/);
      expect(Buffer.from(await got.arrayBuffer()).equals(png)).toBe(true);
    });

    it('anything but a plain image is served as a download, under a safe name', async () => {
      const html = await upload(a.token, form('file', '../../evil"name.html', 'text/html', Buffer.from('<script>alert(1)</script>')));
      expect(html.status).toBe(201);
      expect(html.body.filename).toBe('evilname.html');
      const got = await download(a.token, html.body.url);
      expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="evilname.html"/);
      expect(got.headers.get('x-content-type-options')).toBe('nosniff');
      // Nothing escaped the organization's folder.
      expect(readdirSync(dir).sort()).toEqual([a.orgId]);
    });

    it('an upload without a file, with another field name, or over 25 MB is refused (400/400/413)', async () => {
      expect((await upload(a.token, new FormData())).status).toBe(400);
      const wrongField = await upload(a.token, form('document', 'a.txt', 'text/plain', Buffer.from('x')));
      expect(wrongField.status).toBe(400);
      expect(wrongField.body.error.details[0].field).toBe('file');
      const empty = await upload(a.token, form('file', 'empty.txt', 'text/plain', Buffer.alloc(0)));
      expect(empty.status).toBe(400);
      const big = await upload(a.token, form('file', 'big.bin', 'application/octet-stream', Buffer.alloc(25 * 1024 * 1024 + 1)));
      expect(big.status).toBe(413);
      expect(big.body.error.code).toBe('payload_too_large');
    });

    it('a file of exactly 25 MB is accepted', async () => {
      const res = await upload(a.token, form('file', 'max.bin', 'application/octet-stream', Buffer.alloc(25 * 1024 * 1024, 1)));
      expect(res.status).toBe(201);
      expect(res.body.size).toBe(25 * 1024 * 1024);
      const got = await download(a.token, res.body.url);
      expect((await got.arrayBuffer()).byteLength).toBe(25 * 1024 * 1024);
    }, 30_000);

    it('attachments need a token and are 404 for another org, a malformed or an unknown id', async () => {
      expect((await download(undefined, attachment.url)).status).toBe(401);
      expect((await download(b.token, attachment.url)).status).toBe(404);
      expect((await download(a.token, '/api/v1/chat/attachments/not-a-uuid')).status).toBe(404);
      expect((await download(a.token, '/api/v1/chat/attachments/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    });

    it('a message carries uploaded attachments; both APIs list them; an attachment is sent only once', async () => {
      const res = await a.owner.post(`/api/v1/conversations/${conv1}/messages`, { content: 'Here is the photo', attachments: [attachment.id] });
      expect(res.status).toBe(201);
      expect(res.body.attachments).toEqual([attachment]);
      expect(connector.sent.at(-1)).toEqual(expect.objectContaining({ content: 'Here is the photo' }));
      const detail = await a.owner.get(`/api/v1/conversations/${conv1}`);
      expect(detail.body.messages[0].attachments).toEqual([attachment]);
      const pub = await a.pub.get(`/api/public/conversations/${conv1}/messages`);
      expect(pub.body.messages[0]).toEqual(expect.objectContaining({ senderType: 'user', senderName: 'Olive Owner', attachments: [attachment] }));
      const again = await a.owner.post(`/api/v1/conversations/${conv1}/messages`, { content: 'again', attachments: [{ id: attachment.id }] });
      expect(again.status).toBe(400);
      expect(again.body.error.message).toMatch(/already sent/);
    });

    it('a message of attachments alone goes to the connector as files (ids it fetches the bytes by), with no text', async () => {
      const bytes = Buffer.from('%PDF-1.4');
      const file = await upload(a.token, form('file', 'invoice.pdf', 'application/pdf', bytes));
      const res = await a.owner.post(`/api/v1/conversations/${conv2}/messages`, { attachments: [file.body.id] });
      expect(res.status).toBe(201);
      expect(res.body.content).toBe('');
      expect(connector.sent.at(-1)).toEqual(
        expect.objectContaining({
          content: '',
          attachments: [
            {
              id: file.body.id,
              fileName: 'invoice.pdf',
              mimeType: 'application/pdf',
              size: bytes.length,
              sha256: createHash('sha256').update(bytes).digest('hex'),
            },
          ],
        }),
      );
    });

    it("org B cannot send org A's attachment", async () => {
      const file = await upload(a.token, form('file', 'secret.txt', 'text/plain', Buffer.from('secret')));
      const accountB = connector.account(b.orgId);
      await bus.inbound(b.orgId, { accountId: accountB, fromUid: 'uid-b', fromName: 'B contact' });
      const convB = await eventually(async () => (await b.owner.get('/api/v1/conversations')).body.data[0]);
      const res = await b.owner.post(`/api/v1/conversations/${convB.id}/messages`, { content: 'x', attachments: [file.body.id] });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('attachments');
    });
  });
});
