import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { eventContactData } from '../support/event-data';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// Search in the inbox: the conversation list's `search` and GET /api/v1/messages/search find message content,
// contact names and phones whatever the case and the Vietnamese accents, rank the best match first, and never
// reach another organization.
describe('search: conversations?search= and messages/search', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let accountA: string;
  let accountA2: string;
  let accountB: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-search-'));
  const day = 86_400_000;
  const base = Date.parse('2024-05-10T08:00:00.000Z');
  const at = (days: number, minutes = 0) => new Date(base + days * day + minutes * 60_000).toISOString();
  /** conversation id by thread (fromUid) in org A. */
  const conv: Record<string, string> = {};

  const search = (q: string, extra = '', owner = a.owner) => owner.get(`/api/v1/messages/search?q=${encodeURIComponent(q)}${extra}`);
  const listIds = async (term: string, owner = a.owner) => {
    const res = await owner.get(`/api/v1/conversations?limit=100&search=${encodeURIComponent(term)}`);
    expect(res.status).toBe(200);
    return (res.body.data as any[]).map((c) => c.id).sort();
  };

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
    accountA2 = connector.account(a.orgId);
    accountB = connector.account(b.orgId);
    // A contact typed into crm by hand, with a phone (crm stores it as E.164), who then writes on the network.
    crm.add(a.orgId, 'uid-phone', 'Trần Đức Anh', '+84912345678');

    const inbound = [
      // Ranking for "báo giá": as typed (3), folded whole words (2), inside a word (1), words apart (0).
      { fromUid: 'uid-lan', fromName: 'Lan Nguyen', content: 'Cho em xin báo giá ạ', sentAt: at(0) },
      { fromUid: 'uid-lan', fromName: 'Lan Nguyen', content: 'bao gia di shop', sentAt: at(1) },
      { fromUid: 'uid-hoa', fromName: 'Hoa Pham', content: 'BAO GIA lai giup em', sentAt: at(2) },
      { fromUid: 'uid-hoa', fromName: 'Hoa Pham', content: 'shop co bao giat khong', sentAt: at(3) },
      { fromUid: 'uid-hoa', fromName: 'Hoa Pham', content: 'giá này bao nhiêu vậy', sentAt: at(4) },
      { fromUid: 'uid-phone', fromName: 'Anh Tran', content: 'Đơn hàng của em tới đâu rồi', sentAt: at(5) },
      { fromUid: 'uid-xss', fromName: 'Mallory', content: '<script>alert("x")</script> & báo giá ngay', sentAt: at(6) },
      { fromUid: 'uid-quiet', fromName: 'Quiet Person', content: 'cảm ơn shop nhiều', sentAt: at(7) },
      // Short words (one or two letters) match whole words, the term's last one as the start of a word.
      { fromUid: 'uid-lean', fromName: 'Lê An', content: 'Mình cần tư vấn', sentAt: at(9) },
      { fromUid: 'uid-meet', fromName: 'Bảo Ngọc', content: 'Mai gặp lê an nhé', sentAt: at(10) },
      { fromUid: 'uid-anh', fromName: 'Khách Mới', content: 'hoàng lê anh gửi lời chào', sentAt: at(11) },
      { fromUid: 'uid-ole', fromName: 'Ole Hansen', content: 'ole and partners', sentAt: at(12) },
      { fromUid: 'uid-ole', fromName: 'Ole Hansen', content: 'an lê', sentAt: at(13) },
    ];
    for (const m of inbound) await bus.inbound(a.orgId, { accountId: accountA, ...m });
    await bus.inbound(a.orgId, {
      accountId: accountA2,
      fromUid: 'uid-second',
      fromName: 'Second Account',
      content: 'báo giá cho tài khoản hai',
      sentAt: at(8),
    });
    // Another organization says the same words; A must never see them.
    await bus.inbound(b.orgId, { accountId: accountB, fromUid: 'uid-b', fromName: 'Lan Nguyen', content: 'bao gia di shop', sentAt: at(1) });
    await eventually(async () => (await a.owner.get('/api/v1/conversations/counts')).body.total === 10);
    await eventually(async () => (await b.owner.get('/api/v1/conversations/counts')).body.total === 1);
    const all = await a.owner.get('/api/v1/conversations?limit=100');
    for (const c of all.body.data) conv[c.threadId] = c.id;
    // Every message stored (14 in org A), not only every conversation.
    await eventually(
      async () => (await a.owner.get('/api/v1/conversations?limit=100')).body.data.reduce((n: number, c: any) => n + c.messageCount, 0) === 14,
    );
  }, 90_000);
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('GET /api/v1/conversations?search=', () => {
    it('finds message content whatever the accents and the case', async () => {
      const expected = [conv['uid-lan'], conv['uid-hoa'], conv['uid-xss'], conv['uid-second']].sort();
      expect(await listIds('bao gia')).toEqual(expected);
      expect(await listIds('báo giá')).toEqual(expected);
      expect(await listIds('BÁO GIÁ')).toEqual(expected);
    });

    it('folds đ/Đ to d', async () => {
      expect(await listIds('don hang')).toEqual([conv['uid-phone']]);
      expect(await listIds('ĐƠN HÀNG')).toEqual([conv['uid-phone']]);
      expect(await listIds('dau roi')).toEqual([conv['uid-phone']]);
    });

    it("matches the contact's name folded, and its phone in national or international spelling", async () => {
      expect(await listIds('tran duc')).toEqual([conv['uid-phone']]);
      expect(await listIds('Quiet')).toEqual([conv['uid-quiet']]);
      expect(await listIds('0912 345 678')).toEqual([conv['uid-phone']]);
      expect(await listIds('+84912345678')).toEqual([conv['uid-phone']]);
      expect(await listIds('345678')).toEqual([conv['uid-phone']]);
    });

    it("follows the contact's phone when crm announces a change (contact.updated)", async () => {
      const contact = crm.contacts.get(`${a.orgId}/uid-phone`)!;
      await bus.publish('contact.updated', a.orgId, {
        contact: eventContactData({ id: contact.id, name: 'Trần Đức Anh', avatar: '', phone: '+84987654321' }),
        changes: ['phone'],
      });
      await eventually(async () => (await listIds('0987 654 321')).length === 1);
      expect(await listIds('0912 345 678')).toEqual([]);
    });

    it('combines with the other filters and never shows another organization', async () => {
      const res = await a.owner.get(`/api/v1/conversations?search=bao%20gia&chatnetAccountId=${accountA2}`);
      expect(res.body.data.map((c: any) => c.id)).toEqual([conv['uid-second']]);
      expect(res.body.pagination).toEqual({ total: 1, page: 1, limit: 50, pages: 1 });
      const other = await b.owner.get('/api/v1/conversations?search=bao%20gia');
      expect(other.body.data).toHaveLength(1);
      expect(other.body.data[0].chatnetAccountId).toBe(accountB);
      expect(await listIds('nothing like this')).toEqual([]);
    });

    it('pages a search in the list order; the total comes with every page, also one past the end', async () => {
      const all = await a.owner.get('/api/v1/conversations?search=bao%20gia');
      expect(all.body.pagination).toEqual({ total: 4, page: 1, limit: 50, pages: 1 });
      const p1 = await a.owner.get('/api/v1/conversations?search=bao%20gia&limit=3');
      const p2 = await a.owner.get('/api/v1/conversations?search=bao%20gia&limit=3&page=2');
      expect(p1.body.pagination).toEqual({ total: 4, page: 1, limit: 3, pages: 2 });
      expect(p2.body.pagination).toEqual({ total: 4, page: 2, limit: 3, pages: 2 });
      expect([...p1.body.data, ...p2.body.data].map((c: any) => c.id)).toEqual(all.body.data.map((c: any) => c.id));
      // Newest message first, as without a search.
      const times = all.body.data.map((c: any) => c.lastMessage.sentAt);
      expect(times).toEqual([...times].sort().reverse());
      const past = await a.owner.get('/api/v1/conversations?search=bao%20gia&limit=3&page=7');
      expect(past.body).toEqual({ data: [], pagination: { total: 4, page: 7, limit: 3, pages: 2 } });
      // The name arm alone (no message says "lan").
      const byName = await a.owner.get('/api/v1/conversations?search=lan');
      expect(byName.body.data.map((c: any) => c.id)).toEqual([conv['uid-lan']]);
    });

    it('matches one- and two-letter words as whole words, in order, the last one as the start of a word', async () => {
      // "Lê An": the contact's name, a message saying it, and "lê anh" (the last word as a prefix); never "ole and"
      // (words inside words) nor "an lê" (another order), neither in a name ("Ole Hansen") nor in a message.
      const expected = [conv['uid-lean'], conv['uid-meet'], conv['uid-anh']].sort();
      expect(await listIds('Lê An')).toEqual(expected);
      expect(await listIds('LE AN')).toEqual(expected);
      expect(await listIds('lê ấn')).toEqual(expected);
      expect(await listIds('le an')).not.toContain(conv['uid-ole']);
      // Not the last word: whole, not a prefix ("lê anh" does not hold the word "an" followed by anything).
      expect(await listIds('le an gui')).toEqual([]);
      // In message text a term with a short word is a phrase, and a short last word after a longer one is whole:
      // "ole an" is not "ole and"; without a short word the words match anywhere again.
      expect(await listIds('ole an')).toEqual([]);
      expect(await listIds('ole and')).toEqual([conv['uid-ole']]);
      expect(await listIds('an partners')).toEqual([]);
      expect(await listIds('gap le')).toEqual([conv['uid-meet']]);
      // In a name the words match in any order, the longer ones as substrings: "ol" starts the word "Ole";
      // "le" starts none of its words.
      expect(await listIds('hansen ol')).toEqual([conv['uid-ole']]);
      expect(await listIds('hansen le')).toEqual([]);
    });

    it('in message text, longer words match as words (the last one as the start of a word), in any order, whatever the accents', async () => {
      const say = (fromUid: string, content: string, minutes: number) =>
        bus.inbound(a.orgId, { accountId: accountA, fromUid, fromName: 'Khách Lẻ', content, sentAt: at(20, minutes) });
      await say('uid-ship', 'Shop giao hàng nhanh nhé', 0);
      await say('uid-paid', 'chuyen khoan roi nhe', 1);
      await say('uid-paid2', 'Chuyển khoản xong rồi', 2);
      // The trigrams of "hoàng" ("hoa", "oan", "ang") are all here, in other words; "Yến" too, but not "Hoàng".
      await say('uid-apart', 'Hoàn tiền giúp em, hàng lỗi; yến sào', 3);
      const threads = async () => {
        const res = await a.owner.get('/api/v1/conversations?limit=100');
        return Object.fromEntries((res.body.data as any[]).map((c) => [c.threadId, c.id])) as Record<string, string>;
      };
      await eventually(async () => {
        Object.assign(conv, await threads());
        return ['uid-ship', 'uid-paid', 'uid-paid2', 'uid-apart'].every((t) => t in conv) && (await listIds('hoan tien')).length === 1;
      });
      const paid = [conv['uid-paid'], conv['uid-paid2']].sort();
      expect(await listIds('chuyen khoan')).toEqual(paid);
      expect(await listIds('CHUYỂN KHOẢN')).toEqual(paid);
      expect(await listIds('chuyen kho')).toEqual(paid);
      expect(await listIds('khoan chuyen')).toEqual(paid);
      expect(await listIds('giao hang')).toEqual([conv['uid-ship']]);
      expect(await listIds('hàng giao')).toEqual([conv['uid-ship']]);
      expect(await listIds('giao han')).toEqual([conv['uid-ship']]);
      // Not inside a word: "huyen" is in "chuyen", "iao" in "giao"; a word before the last is whole ("gia" is not "giao").
      expect(await listIds('huyen khoan')).toEqual([]);
      expect(await listIds('iao hang')).toEqual([]);
      expect(await listIds('gia hang')).toEqual([]);
      // A name no message holds, whose trigrams are in one of them apart; its words where they are, found.
      expect(await listIds('Hoàng Yến')).toEqual([]);
      expect(await listIds('hoan yen')).toEqual([conv['uid-apart']]);
    });

    it('400 names search when it has too many words', async () => {
      const res = await a.owner.get(`/api/v1/conversations?search=${encodeURIComponent('a b c d e f g h i')}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'search', message: 'must have at most 8 words' }]);
    });
  });

  describe('GET /api/v1/messages/search', () => {
    it('ranks whole words first, the term as typed (accents) next, then inside a word, then the words apart; newer first within a rank', async () => {
      const res = await search('báo giá', `&chatnetAccountId=${accountA}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((m: any) => m.content)).toEqual([
        '<script>alert("x")</script> & báo giá ngay',
        'Cho em xin báo giá ạ',
        'BAO GIA lai giup em',
        'bao gia di shop',
        'shop co bao giat khong',
        'giá này bao nhiêu vậy',
      ]);
      expect(res.body.pagination).toEqual({ total: 6, page: 1, limit: 20, pages: 1 });
      const first = res.body.data[1];
      expect(first).toEqual({
        id: expect.any(String),
        conversationId: conv['uid-lan'],
        content: 'Cho em xin báo giá ạ',
        sentAt: at(0),
        senderType: 'contact',
        highlight: 'Cho em xin <mark>báo giá</mark> ạ',
      });
      // Unaccented, the typed term is the folded one: "bao gia" written that way ranks first.
      const plain = await search('bao gia', `&chatnetAccountId=${accountA}`);
      expect(plain.body.data.slice(0, 2).map((m: any) => m.content)).toEqual(['BAO GIA lai giup em', 'bao gia di shop']);
      expect(plain.body.data[0].highlight).toBe('<mark>BAO GIA</mark> lai giup em');
    });

    it('folds đ and the case; a highlight escapes the HTML around the marks', async () => {
      const d = await search('DON HANG');
      expect(d.body.data.map((m: any) => m.highlight)).toEqual(['<mark>Đơn hàng</mark> của em tới đâu rồi']);
      const x = await search('bao gia ngay');
      expect(x.body.data).toHaveLength(1);
      expect(x.body.data[0].highlight).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; <mark>báo giá ngay</mark>');
      const tag = await search('script');
      expect(tag.body.data[0].highlight).toBe('&lt;<mark>script</mark>&gt;alert(&quot;x&quot;)&lt;/<mark>script</mark>&gt; &amp; báo giá ngay');
      expect(tag.body.data[0].highlight).not.toContain('<script');
    });

    it('filters by conversation, chat-network account and sent date', async () => {
      const inConv = await search('bao gia', `&conversationId=${conv['uid-lan']}`);
      expect(inConv.body.data.map((m: any) => m.content).sort()).toEqual(['Cho em xin báo giá ạ', 'bao gia di shop']);
      const onA2 = await search('bao gia', `&chatnetAccountId=${accountA2}`);
      expect(onA2.body.data.map((m: any) => m.content)).toEqual(['báo giá cho tài khoản hai']);
      // A date covers its whole day; a timestamp is taken as given.
      const days = await search('bao gia', `&chatnetAccountId=${accountA}&from=${at(1).slice(0, 10)}&to=${at(2).slice(0, 10)}`);
      expect(days.body.data.map((m: any) => m.sentAt).sort()).toEqual([at(1), at(2)]);
      const since = await search('bao gia', `&from=${encodeURIComponent(at(6))}&to=${encodeURIComponent(at(8))}`);
      expect(since.body.data.map((m: any) => m.sentAt).sort()).toEqual([at(6), at(8)]);
    });

    it('pages through the ranked matches', async () => {
      const p1 = await search('bao gia', `&chatnetAccountId=${accountA}&limit=4`);
      const p2 = await search('bao gia', `&chatnetAccountId=${accountA}&limit=4&page=2`);
      expect(p1.body.pagination).toEqual({ total: 6, page: 1, limit: 4, pages: 2 });
      expect(p2.body.pagination).toEqual({ total: 6, page: 2, limit: 4, pages: 2 });
      expect(p1.body.data).toHaveLength(4);
      expect(p2.body.data).toHaveLength(2);
      const all = await search('bao gia', `&chatnetAccountId=${accountA}`);
      expect([...p1.body.data, ...p2.body.data].map((m: any) => m.id)).toEqual(all.body.data.map((m: any) => m.id));
      const past = await search('bao gia', `&chatnetAccountId=${accountA}&limit=4&page=9`);
      expect(past.body).toEqual({ data: [], pagination: { total: 6, page: 9, limit: 4, pages: 2 } });
      const clamped = await search('bao gia', '&limit=1000');
      expect(clamped.body.pagination.limit).toBe(100);
    });

    it("never finds another organization's messages; its conversation id is 404", async () => {
      const res = await search('bao gia di shop', '', b.owner);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0].conversationId).not.toBe(conv['uid-lan']);
      const mine = await search('bao gia di shop');
      expect(mine.body.data.map((m: any) => m.conversationId)).toEqual([conv['uid-lan']]);
      const foreign = await search('bao gia', `&conversationId=${conv['uid-lan']}`, b.owner);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('not_found');
      expect((await search('bao gia', '&conversationId=not-an-id')).status).toBe(404);
      // Another org's account id is just a filter that matches nothing here.
      expect((await search('bao gia', `&chatnetAccountId=${accountB}`)).body.data).toEqual([]);
    });

    it.each([
      ['', 'q', 'is required'],
      ['?q=a', 'q', 'must be at least 2 characters'],
      ['?q=%20%20x%20', 'q', 'must be at least 2 characters'],
      [`?q=${'x'.repeat(201)}`, 'q', 'must be at most 200 characters'],
      ['?q=bao&from=2024-02-30', 'from', 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp in years 0001-9999'],
      ['?q=bao&to=yesterday', 'to', 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp in years 0001-9999'],
      ['?q=bao&from=2024-05-10&to=2024-05-01', 'to', 'must not be before from'],
      ['?q=bao&chatnetAccountId=nope', 'chatnetAccountId', 'must be an id'],
      ['?q=bao&limit=ten', 'limit', 'must be an integer'],
      ['?q=bao&page=x', 'page', 'must be an integer'],
      [`?q=${encodeURIComponent('a b c d e f g h i')}`, 'q', 'must have at most 8 words'],
    ])('400 for %s names %s', async (qs, field, message) => {
      const res = await a.owner.get(`/api/v1/messages/search${qs}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field, message }]);
    });

    it('finds words too short for a trigram as whole words (the last as a word start), in order, alone or together', async () => {
      const contents = async (q: string) => (await search(q)).body.data.map((m: any) => m.content).sort();
      // "ơn" is a word of "cảm ơn", not of "khong" nor "Đơn".
      expect(await contents('ơn')).toEqual(['cảm ơn shop nhiều']);
      expect(await contents('ON SH')).toEqual(['cảm ơn shop nhiều']);
      expect(await contents('le an')).toEqual(['Mai gặp lê an nhé', 'hoàng lê anh gửi lời chào'].sort());
      expect(await contents('an le')).toEqual(['an lê']);
      // Beside longer words the term is a phrase too: in order, next to each other, a short last word whole.
      expect(await contents('gap le an')).toEqual(['Mai gặp lê an nhé']);
      expect(await contents('le an nh')).toEqual(['Mai gặp lê an nhé']);
      expect(await contents('hoang le')).toEqual(['hoàng lê anh gửi lời chào']);
      expect(await contents('le hoang')).toEqual([]);
      expect(await contents('ole an')).toEqual([]);
      expect(await contents('chao le')).toEqual([]);
      // Taken literally: no message holds "%%" (a LIKE would have needed the escape).
      expect(await contents('%%')).toEqual([]);
    });

    it('finds a phrase of short words only where its words follow each other in order; quotes and operators typed are text', async () => {
      await bus.inbound(a.orgId, {
        accountId: accountA,
        fromUid: 'uid-pairs',
        fromName: 'Pair Test',
        content: 'ok, em x y: a b x b c',
        sentAt: at(14),
      });
      await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'uid-pairs', fromName: 'Pair Test', content: 'gửi A.B.C rồi', sentAt: at(15) });
      const contents = async (q: string) => {
        const res = await search(q);
        expect(res.status).toBe(200);
        return res.body.data.map((m: any) => m.content).sort();
      };
      await eventually(async () => (await contents('a b')).length === 2);
      // "a b" and "b c" are both in the first message, but not one after the other: only the second holds "a b c".
      expect(await contents('a b c')).toEqual(['gửi A.B.C rồi']);
      expect(await contents('b x')).toEqual(['ok, em x y: a b x b c']);
      // Punctuation between the words is allowed; another order is not.
      expect(await contents('ok em')).toEqual(['ok, em x y: a b x b c']);
      expect(await contents('em ok')).toEqual([]);
      // The term's last word open, the others whole.
      expect(await contents('x y')).toEqual(['ok, em x y: a b x b c']);
      expect(await contents('b xy')).toEqual([]);
      // Quotes, operators and backslashes are matched as typed, never read as tsquery syntax.
      expect(await contents("a' b")).toEqual([]);
      expect(await contents("'a | b'")).toEqual([]);
      expect(await contents('a & !b')).toEqual([]);
      expect(await contents('\\ a:*')).toEqual([]);
      expect(await contents('y: a')).toEqual(['ok, em x y: a b x b c']);
    });

    it('marks a short word only where it stands as a word', async () => {
      const marks = async (q: string) => (await search(q)).body.data.map((m: any) => m.highlight).sort();
      expect(await marks('ơn')).toEqual(['cảm <mark>ơn</mark> shop nhiều']);
      expect(await marks('le an')).toEqual(['Mai gặp <mark>lê an</mark> nhé', 'hoàng <mark>lê an</mark>h gửi lời chào'].sort());
    });

    it('says who wrote each message: contact, user or system', async () => {
      const sent = await a.owner.post(`/api/v1/conversations/${conv['uid-quiet']}/messages`, { content: 'Dạ shop gửi báo giá xanh ạ' });
      expect(sent.status).toBe(201);
      const api = await a.pub.post('/api/public/messages/send', {
        chatnetAccountId: accountA,
        threadId: 'uid-quiet',
        content: 'Báo giá xanh tự động',
      });
      expect(api.status).toBe(200);
      const res = await search('gia xanh');
      expect(res.body.data.map((m: any) => [m.content, m.senderType]).sort()).toEqual([
        ['Báo giá xanh tự động', 'system'],
        ['Dạ shop gửi báo giá xanh ạ', 'user'],
      ]);
      const inbound = await search('cam on');
      expect(inbound.body.data.map((m: any) => m.senderType)).toEqual(['contact']);
    });

    it('needs a signed-in user', async () => {
      const res = await fetch(`${stack.url}/api/v1/messages/search?q=bao`);
      expect(res.status).toBe(401);
    });
  });
});
