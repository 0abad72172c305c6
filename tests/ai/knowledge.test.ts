import { randomUUID } from 'node:crypto';
import { client, Client, email, newOrg, Res } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { FakeMessaging, startFakeMessaging } from './support/fake-messaging';
import { minimalPdf } from './support/minimal-pdf';

const WARRANTY = [
  '# Chính sách bảo hành',
  '',
  'Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng kể từ ngày mua. Khách mang máy và hoá đơn đến cửa hàng gần nhất.',
  '',
  '## Đổi trả',
  '',
  'Sản phẩm lỗi do nhà sản xuất được đổi mới trong 7 ngày đầu. Hàng đã qua sử dụng không được hoàn tiền.',
].join('\n');

const SHIPPING_EN =
  'Delivery times. Orders inside Ho Chi Minh City arrive within 24 hours. Orders to other provinces take 2 to 4 working days, ' +
  'and shipping is free for orders over 500,000 VND.';

// The knowledge base through the gateway (ai's KnowledgeService on its own PostgreSQL): articles typed or uploaded
// (text, Markdown, PDF), searched with accents ignored, and reply drafts of the offline engine answered from them
// with their sources; every write needs settings:edit, and nothing of one organization reaches another.
describe('AI knowledge base: articles, search, uploads, and drafts that cite them', () => {
  let stack: Stack;
  let api: Client;
  let owner: Client;
  let ownerToken: string;
  let agent: Client;
  let agentToken: string;
  let orgB: Client;
  let orgBId: string;
  let orgA: string;
  let messaging: FakeMessaging;

  /** A multipart upload to POST /ai/knowledge as `token`. */
  async function upload(token: string, parts: { file?: { bytes: Buffer; name: string; type: string }; title?: string }): Promise<Res> {
    const fd = new FormData();
    if (parts.title !== undefined) fd.append('title', parts.title);
    if (parts.file) fd.append('file', new Blob([new Uint8Array(parts.file.bytes)], { type: parts.file.type }), parts.file.name);
    const res = await fetch(`${stack.url}/api/v1/ai/knowledge`, {
      method: 'POST',
      headers: token ? { authorization: `Bearer ${token}` } : {},
      body: fd,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  /** A one-message conversation of `orgId` from a customer, and a draft of the reply to it. */
  async function draftFor(as: Client, orgId: string, content: string, tone = 'friendly') {
    const c = messaging.addConversation(orgId, { contactName: 'Lan', messages: [{ content, fromCustomer: true, senderName: 'Lan' }] });
    const res = await as.post('/api/v1/ai/reply-draft', { conversationId: c.id, messageId: c.messageIds[0], tone });
    expect(res.status).toBe(200);
    return res.body;
  }

  beforeAll(async () => {
    messaging = await startFakeMessaging();
    stack = await startStack({ services: ['ai'], serviceEnv: { ai: { MESSAGING_ADDR: messaging.address } } });
    api = client(stack.url);
    const a = await newOrg(api, 'Lumi Home');
    owner = a.owner;
    ownerToken = a.token;
    orgA = a.user.orgId;
    // An agent (no settings:edit), signed in with a token of its own for the uploads.
    const agentEmail = email('agent');
    expect(
      (await owner.post('/api/v1/users', { email: agentEmail, fullName: 'Andy Agent', role: 'agent', password: 'correct horse battery' })).status,
    ).toBe(201);
    agentToken = (await api.post('/api/v1/auth/login', { email: agentEmail, password: 'correct horse battery' })).body.token;
    agent = api.as(agentToken);
    const b = await newOrg(api, 'Globex');
    orgB = b.owner;
    orgBId = b.user.orgId;
  });
  afterAll(async () => {
    await stack?.stop();
    await messaging?.stop();
  });

  describe('articles: create, read, list, change, delete', () => {
    let warrantyId: string;

    it('POST /ai/knowledge {title, content} → 201 with the chunks it was cut into', async () => {
      const res = await owner.post('/api/v1/ai/knowledge', { title: 'Chính sách bảo hành', content: WARRANTY });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        title: 'Chính sách bảo hành',
        chunks: 2,
        source: 'text',
        fileName: null,
        createdAt: expect.stringMatching(/Z$/),
        updatedAt: expect.stringMatching(/Z$/),
      });
      warrantyId = res.body.id;
    });

    it('GET /ai/knowledge/:id gives the article whole, to an agent too', async () => {
      const res = await agent.get(`/api/v1/ai/knowledge/${warrantyId}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: warrantyId,
        title: 'Chính sách bảo hành',
        content: WARRANTY,
        chunks: 2,
        contentType: null,
        source: 'text',
      });
      expect(res.body.createdBy).toEqual(expect.any(String));
    });

    it('GET /ai/knowledge lists the newest first with an excerpt and pagination', async () => {
      const shipping = await owner.post('/api/v1/ai/knowledge', { title: 'Delivery', content: SHIPPING_EN });
      expect(shipping.status).toBe(201);
      const res = await agent.get('/api/v1/ai/knowledge?limit=1');
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ total: 2, page: 1, limit: 1, pages: 2 });
      expect(res.body.data).toEqual([
        expect.objectContaining({ id: shipping.body.id, title: 'Delivery', excerpt: expect.stringMatching(/^Delivery times\./) }),
      ]);
      expect(res.body.data[0].content).toBeUndefined();
      const second = await agent.get('/api/v1/ai/knowledge?limit=1&page=2');
      expect(second.body.data.map((a: { id: string }) => a.id)).toEqual([warrantyId]);
    });

    it.each([
      ['bao hanh', 'unaccented'],
      ['BẢO HÀNH', 'accented, upper case'],
      ['bảo hanh 24 thang', 'mixed, across the words of a passage'],
      ['bao ha', 'the last word still being typed'],
    ])('GET /ai/knowledge?search=%s (%s) finds the Vietnamese article with the passage that matched', async (search) => {
      const res = await agent.get(`/api/v1/ai/knowledge?search=${encodeURIComponent(search)}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([warrantyId]);
      expect(res.body.data[0].excerpt).toMatch(/bảo hành chính hãng 24 tháng/);
      expect(res.body.pagination.total).toBe(1);
    });

    it('a search that matches nothing, or only punctuation, is an empty page', async () => {
      for (const search of ['nồi chiên', '&|!:*']) {
        const res = await agent.get(`/api/v1/ai/knowledge?search=${encodeURIComponent(search)}`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ data: [], pagination: { total: 0, page: 1, limit: 20, pages: 0 } });
      }
    });

    it('PUT /ai/knowledge/:id with new text cuts it again: search finds the new words, not the old', async () => {
      const created = await owner.post('/api/v1/ai/knowledge', { title: 'Giờ mở cửa', content: 'Cửa hàng mở cửa từ 8 giờ đến 21 giờ.' });
      const id = created.body.id;
      const res = await owner.put(`/api/v1/ai/knowledge/${id}`, { content: 'Cửa hàng mở cửa từ 9 giờ đến 22 giờ, cả Chủ nhật.' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id, title: 'Giờ mở cửa', content: 'Cửa hàng mở cửa từ 9 giờ đến 22 giờ, cả Chủ nhật.', chunks: 1 });
      expect((await agent.get('/api/v1/ai/knowledge?search=chu%20nhat')).body.data.map((a: { id: string }) => a.id)).toEqual([id]);
      expect((await agent.get('/api/v1/ai/knowledge?search=21%20gio')).body.data).toEqual([]);
      const renamed = await owner.put(`/api/v1/ai/knowledge/${id}`, { title: 'Opening hours' });
      expect(renamed.body).toMatchObject({ title: 'Opening hours', content: 'Cửa hàng mở cửa từ 9 giờ đến 22 giờ, cả Chủ nhật.' });
      expect((await agent.get('/api/v1/ai/knowledge?search=opening')).body.data.map((a: { id: string }) => a.id)).toEqual([id]);
    });

    it('DELETE /ai/knowledge/:id → 204; the article is gone from reads and search', async () => {
      const created = await owner.post('/api/v1/ai/knowledge', { title: 'Tạm thời', content: 'Khuyến mãi tháng mười giảm giá máy ép chậm.' });
      const del = await owner.del(`/api/v1/ai/knowledge/${created.body.id}`);
      expect(del.status).toBe(204);
      expect((await owner.get(`/api/v1/ai/knowledge/${created.body.id}`)).status).toBe(404);
      expect((await owner.get('/api/v1/ai/knowledge?search=may%20ep%20cham')).body.data).toEqual([]);
      expect((await owner.del(`/api/v1/ai/knowledge/${created.body.id}`)).status).toBe(404);
    });

    describe('errors', () => {
      it('401 without a token, on every route', async () => {
        const id = randomUUID();
        const calls = [
          api.get('/api/v1/ai/knowledge'),
          api.post('/api/v1/ai/knowledge', { title: 't', content: 'c' }),
          api.get(`/api/v1/ai/knowledge/${id}`),
          api.put(`/api/v1/ai/knowledge/${id}`, { title: 't' }),
          api.del(`/api/v1/ai/knowledge/${id}`),
          upload('', { file: { bytes: Buffer.from('x'), name: 'a.txt', type: 'text/plain' } }),
        ];
        expect((await Promise.all(calls)).map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401]);
      });

      it('403 for an agent writing (typed, uploaded, changed, deleted), and nothing changes', async () => {
        const res = [
          await agent.post('/api/v1/ai/knowledge', { title: 'Agent note', content: 'text' }),
          await agent.put(`/api/v1/ai/knowledge/${warrantyId}`, { title: 'Hijacked' }),
          await agent.del(`/api/v1/ai/knowledge/${warrantyId}`),
        ];
        expect(res.map((r) => r.status)).toEqual([403, 403, 403]);
        expect((await upload(agentToken, { file: { bytes: Buffer.from('Agent file'), name: 'a.txt', type: 'text/plain' } })).status).toBe(403);
        expect((await agent.get(`/api/v1/ai/knowledge/${warrantyId}`)).body.title).toBe('Chính sách bảo hành');
        expect((await agent.get('/api/v1/ai/knowledge?search=agent')).body.data).toEqual([]);
      });

      it.each([
        [{ content: 'no title' }, 'title'],
        [{ title: '   ', content: 'blank title' }, 'title'],
        [{ title: 'x'.repeat(201), content: 'long title' }, 'title'],
        [{ title: 'No content' }, 'content'],
        [{ title: 'Blank content', content: ' \n ' }, 'content'],
        [{ title: 'Number', content: 42 }, 'content'],
        [{ title: 'NUL', content: 'a\u0000b' }, 'content'],
      ])('POST /ai/knowledge %j → 400 naming %s', async (payload, field) => {
        const res = await owner.post('/api/v1/ai/knowledge', payload);
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe(field);
      });

      it.each([
        [{}, 'title'],
        [{ title: '' }, 'title'],
        [{ content: '' }, 'content'],
      ])('PUT /ai/knowledge/:id %j → 400 naming %s', async (payload, field) => {
        const res = await owner.put(`/api/v1/ai/knowledge/${warrantyId}`, payload);
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe(field);
      });

      it.each([
        ['limit=many', 'limit'],
        ['page=x', 'page'],
        [`search=${'a'.repeat(201)}`, 'search'],
      ])('GET /ai/knowledge?%s → 400 naming %s', async (q, field) => {
        const res = await agent.get(`/api/v1/ai/knowledge?${q}`);
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe(field);
      });

      it('413 naming content for text past 200,000 characters (created or changed), and nothing is stored', async () => {
        const content = 'a'.repeat(200_001);
        const created = await owner.post('/api/v1/ai/knowledge', { title: 'Too long', content });
        expect(created.status).toBe(413);
        expect(created.body.error.details).toEqual([{ field: 'content', message: 'must be at most 200,000 characters of text' }]);
        const changed = await owner.put(`/api/v1/ai/knowledge/${warrantyId}`, { content });
        expect(changed.status).toBe(413);
        expect(changed.body.error.details[0].field).toBe('content');
        expect((await owner.get('/api/v1/ai/knowledge?search=too%20long')).body.data).toEqual([]);
        expect((await owner.get(`/api/v1/ai/knowledge/${warrantyId}`)).body.content).toBe(WARRANTY);
      });

      it('404 for an unknown id, a malformed one, and another organization’s article (read, change, delete)', async () => {
        for (const [as, id] of [
          [owner, randomUUID()],
          [owner, 'not-an-id'],
          [orgB, warrantyId],
        ] as const) {
          expect((await as.get(`/api/v1/ai/knowledge/${id}`)).status).toBe(404);
          expect((await as.put(`/api/v1/ai/knowledge/${id}`, { title: 'Mine now' })).status).toBe(404);
          expect((await as.del(`/api/v1/ai/knowledge/${id}`)).status).toBe(404);
        }
        expect((await owner.get(`/api/v1/ai/knowledge/${warrantyId}`)).body.title).toBe('Chính sách bảo hành');
      });

      it('another organization’s list and search never show these articles', async () => {
        expect((await orgB.get('/api/v1/ai/knowledge')).body).toEqual({ data: [], pagination: { total: 0, page: 1, limit: 20, pages: 0 } });
        expect((await orgB.get('/api/v1/ai/knowledge?search=bao%20hanh')).body.data).toEqual([]);
      });
    });
  });

  describe('uploads (multipart/form-data, field file)', () => {
    it('a Markdown file with a title → 201 from the file, its text readable and searchable', async () => {
      const md = '# Thanh toán\n\nShop nhận **chuyển khoản** qua ngân hàng và thanh toán khi nhận hàng (COD).\n';
      const res = await upload(ownerToken, {
        title: 'Cách thanh toán',
        file: { bytes: Buffer.from(md), name: 'thanh-toan.md', type: 'application/octet-stream' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ title: 'Cách thanh toán', chunks: 1, source: 'file', fileName: 'thanh-toan.md' });
      const got = await owner.get(`/api/v1/ai/knowledge/${res.body.id}`);
      expect(got.body).toMatchObject({ content: md.trim(), contentType: 'text/markdown' });
      const found = await agent.get('/api/v1/ai/knowledge?search=chuyen%20khoan');
      expect(found.body.data.map((a: { id: string }) => a.id)).toEqual([res.body.id]);
      expect(found.body.data[0].excerpt).toBe('Shop nhận chuyển khoản qua ngân hàng và thanh toán khi nhận hàng (COD).');
    });

    it('a text file without a title is titled by its name', async () => {
      const res = await upload(ownerToken, { file: { bytes: Buffer.from('Hotline: 1900 1234, 8h-21h.'), name: 'hotline.txt', type: 'text/plain' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ title: 'hotline', source: 'file', fileName: 'hotline.txt' });
    });

    it('a PDF with a text layer → 201 with its text extracted (offline)', async () => {
      const pdf = minimalPdf(['Blender warranty', 'Every Lumi blender has a 24 month warranty from the day of purchase.']);
      const res = await upload(ownerToken, { file: { bytes: pdf, name: 'warranty-en.pdf', type: 'application/pdf' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ title: 'warranty-en', source: 'file', fileName: 'warranty-en.pdf', chunks: 1 });
      const got = await owner.get(`/api/v1/ai/knowledge/${res.body.id}`);
      expect(got.body.content).toContain('Every Lumi blender has a 24 month warranty from the day of purchase.');
      expect(got.body.contentType).toBe('application/pdf');
    });

    it.each([
      ['a Word document', { bytes: Buffer.from('PK\u0003\u0004 word'), name: 'policy.docx', type: 'application/msword' }, /text \(\.txt\), Markdown/],
      ['a .pdf that is not a PDF', { bytes: Buffer.from('just text'), name: 'fake.pdf', type: 'application/pdf' }, /not a PDF/],
      ['text that is not UTF-8', { bytes: Buffer.from([0x47, 0x69, 0xe1, 0x20, 0xff]), name: 'latin1.txt', type: 'text/plain' }, /UTF-8/],
      ['an empty file', { bytes: Buffer.alloc(0), name: 'empty.txt', type: 'text/plain' }, /no text/],
    ])('%s → 400 naming file', async (_what, file, message) => {
      const res = await upload(ownerToken, { file });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'file', message: expect.stringMatching(message) }]);
    });

    it('a form without a file → 400 naming file; a title past 200 characters → 400 naming title', async () => {
      const none = await upload(ownerToken, { title: 'Only a title' });
      expect(none.status).toBe(400);
      expect(none.body.error.details[0].field).toBe('file');
      const long = await upload(ownerToken, { title: 'x'.repeat(201), file: { bytes: Buffer.from('text'), name: 'a.txt', type: 'text/plain' } });
      expect(long.status).toBe(400);
      expect(long.body.error.details[0].field).toBe('title');
    });

    it('a file past 2 MB → 413 naming file, and nothing is stored', async () => {
      const before = (await owner.get('/api/v1/ai/knowledge')).body.pagination.total;
      const res = await upload(ownerToken, { file: { bytes: Buffer.alloc(2 * 1024 * 1024 + 1, 0x61), name: 'big.txt', type: 'text/plain' } });
      expect(res.status).toBe(413);
      expect(res.body.error.details).toEqual([{ field: 'file', message: 'must be at most 2 MB' }]);
      expect((await owner.get('/api/v1/ai/knowledge')).body.pagination.total).toBe(before);
    });
  });

  describe('POST /ai/reply-draft answers from the knowledge base (offline engine) and cites it', () => {
    it('a Vietnamese question answered in an article: the draft quotes its passage and lists it in sources', async () => {
      const warranty = (await agent.get('/api/v1/ai/knowledge?search=bao%20hanh%20may%20xay')).body.data[0];
      const d = await draftFor(agent, orgA, 'Chào shop, máy xay sinh tố bên mình bảo hành bao lâu vậy?');
      expect(d.engine).toBe('local');
      expect(d.draft).toContain('Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng kể từ ngày mua.');
      expect(d.draft).toMatch(/^Dạ em chào anh\/chị Lan ạ!/);
      expect(d.sources).toEqual([
        { id: warranty.id, title: 'Chính sách bảo hành', excerpt: expect.stringMatching(/^Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng/) },
      ]);
      expect(d.confidence).toBeGreaterThan(0.7);
    });

    it('the same question typed without diacritics finds the same article', async () => {
      const accented = await draftFor(agent, orgA, 'Chào shop, máy xay sinh tố bên mình bảo hành bao lâu vậy?');
      const plain = await draftFor(agent, orgA, 'chao shop, may xay sinh to ben minh bao hanh bao lau vay?');
      expect(plain.sources).toEqual(accented.sources);
      expect(plain.draft).toContain('bảo hành chính hãng 24 tháng');
    });

    it('an English question quotes the English article; an upset customer hears an apology first', async () => {
      const d = await draftFor(agent, orgA, 'How long does delivery to other provinces take?');
      expect(d.sources.map((s: { title: string }) => s.title)).toEqual(['Delivery']);
      expect(d.draft).toContain('Orders to other provinces take 2 to 4 working days');
      const upset = await draftFor(agent, orgA, 'This is terrible, my order is late again! How long does delivery to other provinces take?');
      expect(upset.sources.map((s: { title: string }) => s.title)).toEqual(['Delivery']);
      expect(upset.draft).toMatch(/We are sorry about this experience\..*2 to 4 working days/);
    });

    it('a question no article answers: the template draft and no sources', async () => {
      const d = await draftFor(agent, orgA, 'Shop có bán nồi chiên không dầu không ạ?');
      expect(d.sources).toEqual([]);
      expect(d.draft).not.toContain('theo thông tin của');
    });

    it('a deleted article is no longer cited', async () => {
      const created = await owner.post('/api/v1/ai/knowledge', {
        title: 'Trả góp',
        content: 'Shop hỗ trợ trả góp 0% lãi suất qua thẻ tín dụng cho đơn từ 3 triệu.',
      });
      const question = 'Mua máy có trả góp qua thẻ tín dụng được không shop?';
      expect((await draftFor(agent, orgA, question)).sources.map((s: { id: string }) => s.id)).toEqual([created.body.id]);
      await owner.del(`/api/v1/ai/knowledge/${created.body.id}`);
      expect((await draftFor(agent, orgA, question)).sources).toEqual([]);
    });

    it('another organization’s draft never cites this organization’s articles, only its own', async () => {
      const question = 'Máy xay sinh tố bảo hành bao lâu vậy shop?';
      const none = await draftFor(orgB, orgBId, question);
      expect(none.sources).toEqual([]);
      expect(none.draft).not.toContain('24 tháng');
      const own = await orgB.post('/api/v1/ai/knowledge', {
        title: 'Bảo hành Globex',
        content: 'Máy xay sinh tố Globex được bảo hành 12 tháng tại nhà.',
      });
      const cited = await draftFor(orgB, orgBId, question);
      expect(cited.sources.map((s: { id: string }) => s.id)).toEqual([own.body.id]);
      expect(cited.draft).toContain('12 tháng');
      expect(cited.draft).not.toContain('24 tháng');
      // And the first organization still answers from its own.
      expect((await draftFor(agent, orgA, question)).draft).toContain('24 tháng');
    });
  });
});
