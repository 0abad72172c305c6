import { randomUUID } from 'node:crypto';
import { client, Client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { agentOf, recording, startAiWithCapturedLogs } from './support/captured-ai';
import { FakeMessaging, startFakeMessaging } from './support/fake-messaging';
import { FakeVendor, keyOf, startFakeVendor } from './support/fake-vendors';

const EMOTIONS = [
  'joy',
  'gratitude',
  'satisfaction',
  'trust',
  'excitement',
  'surprise',
  'confusion',
  'anxiety',
  'frustration',
  'anger',
  'sadness',
  'disappointment',
  'urgency',
];

// Reply drafts, summaries and sentiment through the gateway, with conversations from messaging over
// gRPC (a fake that speaks messaging's contract), the org's configured provider (a fake vendor), the
// local engine as the offline fallback, and the daily quota.
describe('AI assistant: configuration, drafts, summaries, sentiment, quota', () => {
  const OPENAI_KEY = 'sk-assist-openai-secret-1111111111-OPEN';
  const GEMINI_KEY = 'AIza-assist-gemini-secret-2222222-GEMI';
  const WRONG_KEY = 'sk-assist-wrong-key-echoed-back-33-WRNG';

  let stack: Stack;
  let api: Client;
  let owner: Client;
  let agent: Client;
  let orgB: Client;
  let messaging: FakeMessaging;
  let openai: FakeVendor;
  let gemini: FakeVendor;
  let ai: Awaited<ReturnType<typeof startAiWithCapturedLogs>>;
  const bodies: string[] = [];
  let orgA: string;
  let english: { id: string; messageIds: string[] };
  let vietnamese: { id: string; messageIds: string[] };
  let bConversation: { id: string; messageIds: string[] };

  beforeAll(async () => {
    [messaging, openai, gemini] = await Promise.all([
      startFakeMessaging(),
      startFakeVendor('openai', { keys: [OPENAI_KEY] }),
      startFakeVendor('gemini', { keys: [GEMINI_KEY] }),
    ]);
    stack = await startStack({ services: ['ai'], env: { MESSAGING_ADDR: messaging.address } });
    ai = await startAiWithCapturedLogs(stack, {
      MESSAGING_ADDR: messaging.address,
      AI_COMPLETION_TIMEOUT_MS: '400',
      AI_DEFAULT_DAILY_QUOTA: '200',
      // The fake vendors live on loopback; organizations' base URLs may reach only that private address.
      AI_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1',
    });
    api = recording(client(stack.url), bodies);
    const a = await newOrg(api, 'Acme');
    owner = a.owner;
    orgA = a.user.orgId;
    agent = await agentOf(api, owner);
    const b = await newOrg(api, 'Globex');
    orgB = b.owner;

    english = messaging.addConversation(orgA, {
      contactName: 'John Carter',
      messages: [
        { content: 'Hi, I ordered a blue backpack last week (order #4512).', fromCustomer: true },
        { content: 'Hello John, thanks for your order! Let me check.', fromCustomer: false, senderName: 'Amy' },
        {
          content: 'It still has not arrived and the tracking page shows no updates. This is really frustrating. When will it arrive?',
          fromCustomer: true,
        },
      ],
    });
    vietnamese = messaging.addConversation(orgA, {
      contactName: 'Nguyễn Thị Lan',
      messages: [
        { content: 'Chào shop, mình muốn hỏi về chiếc áo khoác màu đen size M.', fromCustomer: true, senderName: 'Lan' },
        { content: 'Dạ chào chị Lan, áo khoác đen size M bên em vẫn còn hàng ạ.', fromCustomer: false, senderName: 'Minh' },
        { content: 'Giá áo khoác bao nhiêu vậy shop? Có giao hàng đến Đà Nẵng không?', fromCustomer: true, senderName: 'Lan' },
      ],
    });
    bConversation = messaging.addConversation(b.user.orgId, {
      contactName: 'Bea',
      messages: [{ content: 'Do you ship to Hue?', fromCustomer: true }],
    });
  });
  afterAll(async () => {
    await ai?.stop();
    await stack?.stop();
    await Promise.all([messaging?.stop(), openai?.close(), gemini?.close()]);
  });

  describe('configuration', () => {
    it('GET /ai/config starts on the local engine with the default quota', async () => {
      const res = await agent.get('/api/v1/ai/config');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        provider: 'local',
        model: null,
        dailyQuota: 200,
        enabled: true,
        status: 'local',
        engine: 'local',
        usedToday: 0,
        remainingToday: 200,
      });
      expect(new Date(res.body.quotaResetsAt).toISOString()).toMatch(/T00:00:00.000Z$/);
    });

    it('PUT /ai/config needs settings:edit: an agent gets 403', async () => {
      const res = await agent.put('/api/v1/ai/config', { dailyQuota: 5 });
      expect(res.status).toBe(403);
    });

    it.each([
      [{ provider: 'deepseek' }, 'provider'],
      [{ dailyQuota: 0 }, 'dailyQuota'],
      [{ dailyQuota: 'many' }, 'dailyQuota'],
      [{ dailyQuota: 1.5 }, 'dailyQuota'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ model: 'x'.repeat(201) }, 'model'],
      [{ model: 'bad model name!' }, 'model'],
    ])('PUT /ai/config with %j is 400 naming %s', async (payload, field) => {
      const res = await owner.put('/api/v1/ai/config', payload);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe(field);
    });

    it('PUT /ai/config with a provider that has no key reports missing_key; only sent fields change', async () => {
      const res = await owner.put('/api/v1/ai/config', { provider: 'anthropic' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ provider: 'anthropic', model: null, dailyQuota: 200, enabled: true, status: 'missing_key', engine: 'local' });
      expect(res.body.statusMessage).toMatch(/Anthropic Claude has no API key/);
    });
  });

  describe('local engine (no provider configured)', () => {
    beforeAll(async () => {
      await owner.put('/api/v1/ai/config', { provider: 'local' });
    });

    it('POST /ai/sentiment: English praise is positive with joy/gratitude', async () => {
      const res = await agent.post('/api/v1/ai/sentiment', { text: 'I love this product, thank you so much!' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ sentiment: 'positive', engine: 'local', model: 'local-lexicon-v1', language: 'en' });
      expect(res.body.score).toBeGreaterThan(0.5);
      expect(res.body.score).toBeLessThanOrEqual(1);
      expect(res.body.emotions).toEqual(expect.arrayContaining(['joy', 'gratitude']));
      expect(res.body.fallbackReason).toBeUndefined();
    });

    it('POST /ai/sentiment: Vietnamese complaints are negative with or without diacritics', async () => {
      for (const text of ['Tôi không hài lòng, giao hàng quá chậm', 'toi khong hai long, giao hang qua cham']) {
        const res = await agent.post('/api/v1/ai/sentiment', { text });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ sentiment: 'negative', language: 'vi', engine: 'local' });
        expect(res.body.score).toBeLessThan(-0.3);
        expect(res.body.emotions).toContain('disappointment');
      }
    });

    it('POST /ai/sentiment and /ai/reply-draft: a complaint typed without accents reads like its accented twin', async () => {
      const unaccented = await agent.post('/api/v1/ai/sentiment', { text: 'Hang giao cham qua, toi rat that vong' });
      const accented = await agent.post('/api/v1/ai/sentiment', { text: 'Hàng giao chậm quá, tôi rất thất vọng' });
      expect(unaccented.status).toBe(200);
      expect(unaccented.body).toMatchObject({ sentiment: 'negative', language: 'vi', engine: 'local' });
      expect(unaccented.body.score).toBe(accented.body.score);
      expect(unaccented.body.emotions).toEqual(accented.body.emotions);

      // The draft apologises first, as it does to the accented complaint.
      const draftOf = async (content: string) => {
        const c = messaging.addConversation(orgA, { contactName: 'Lan', messages: [{ content, fromCustomer: true, senderName: 'Lan' }] });
        return (await agent.post('/api/v1/ai/reply-draft', { conversationId: c.id, messageId: c.messageIds[0], tone: 'friendly' })).body;
      };
      const plain = await draftOf('Hang giao cham qua, toi rat that vong. Bao gio thi nhan duoc hang?');
      const marked = await draftOf('Hàng giao chậm quá, tôi rất thất vọng. Bao giờ thì nhận được hàng?');
      expect(plain).toMatchObject({ language: 'vi', engine: 'local', question: 'Bao gio thi nhan duoc hang?' });
      for (const d of [plain.draft, marked.draft]) {
        expect(d).toMatch(/Bên em rất tiếc về trải nghiệm này\./);
        expect(d).toMatch(/thời gian giao hàng/);
      }
      expect(plain.confidence).toBe(marked.confidence);
    });

    it('POST /ai/sentiment: negation flips, both feelings at once are mixed, a plain question is neutral', async () => {
      expect((await agent.post('/api/v1/ai/sentiment', { text: 'I am not happy with the service' })).body.sentiment).toBe('negative');
      expect((await agent.post('/api/v1/ai/sentiment', { text: 'Not bad at all' })).body.sentiment).toBe('positive');
      const mixed = await agent.post('/api/v1/ai/sentiment', { text: 'I love the design, the battery is awful' });
      expect(mixed.body.sentiment).toBe('mixed');
      expect(Math.abs(mixed.body.score)).toBeLessThan(0.3);
      const q = await agent.post('/api/v1/ai/sentiment', { text: 'Giá bao nhiêu vậy shop?' });
      expect(q.body).toMatchObject({ sentiment: 'neutral', score: 0, emotions: [] });
    });

    it('POST /ai/sentiment: emotions come from the documented list', async () => {
      const res = await agent.post('/api/v1/ai/sentiment', { text: 'This is a scam!!! I am furious, I need a refund urgently 😡' });
      expect(res.body.sentiment).toBe('negative');
      expect(res.body.emotions.length).toBeGreaterThan(0);
      for (const e of res.body.emotions) expect(EMOTIONS).toContain(e);
    });

    it('POST /ai/sentiment without text, or with too much, is 400 naming text', async () => {
      expect((await agent.post('/api/v1/ai/sentiment', {})).body.error.details[0].field).toBe('text');
      expect((await agent.post('/api/v1/ai/sentiment', { text: '   ' })).status).toBe(400);
      const long = await agent.post('/api/v1/ai/sentiment', { text: 'a'.repeat(10_001) });
      expect(long.status).toBe(400);
      expect(long.body.error.details[0].field).toBe('text');
    });

    it.each(['friendly', 'formal', 'concise', 'apologetic'])(
      'POST /ai/reply-draft (%s) answers in Vietnamese and quotes the question',
      async (tone) => {
        const res = await agent.post('/api/v1/ai/reply-draft', { conversationId: vietnamese.id, messageId: vietnamese.messageIds[2], tone });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ tone, language: 'vi', engine: 'local', model: 'local-templates-v1' });
        expect(res.body.question).toBe('Giá áo khoác bao nhiêu vậy shop? Có giao hàng đến Đà Nẵng không?');
        expect(res.body.draft).toContain('“Giá áo khoác bao nhiêu vậy shop?');
        expect(res.body.draft).toMatch(/giá/);
        expect(res.body.confidence).toBeGreaterThan(0);
        expect(res.body.confidence).toBeLessThanOrEqual(1);
      },
    );

    it('POST /ai/reply-draft: the tones read differently', async () => {
      const draft = async (tone: string) =>
        (await agent.post('/api/v1/ai/reply-draft', { conversationId: english.id, messageId: english.messageIds[2], tone })).body.draft as string;
      const [friendly, formal, concise, apologetic] = await Promise.all(['friendly', 'formal', 'concise', 'apologetic'].map(draft));
      expect(formal).toMatch(/^Dear John Carter, thank you for contacting us\./);
      expect(formal).toMatch(/Kind regards\.$/);
      expect(friendly).toMatch(/^Hi John Carter!/);
      expect(apologetic).toMatch(/apologise/);
      expect(concise.length).toBeLessThan(formal.length / 2);
      for (const d of [friendly, formal, concise, apologetic]) expect(d).toContain('“When will it arrive?”');
    });

    it('POST /ai/reply-draft with another tone is 400 naming tone', async () => {
      const res = await agent.post('/api/v1/ai/reply-draft', { conversationId: english.id, messageId: english.messageIds[2], tone: 'sarcastic' });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('tone');
    });

    it('POST /ai/reply-draft without conversationId or messageId is 400', async () => {
      expect((await agent.post('/api/v1/ai/reply-draft', { conversationId: english.id })).body.error.details[0].field).toBe('messageId');
      expect((await agent.post('/api/v1/ai/reply-draft', { messageId: english.messageIds[0] })).body.error.details[0].field).toBe('conversationId');
    });

    it('POST /ai/reply-draft: unknown or malformed conversation, and a message of another conversation, are 404', async () => {
      const unknown = await agent.post('/api/v1/ai/reply-draft', { conversationId: randomUUID(), messageId: english.messageIds[0] });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.message).toBe('Conversation not found');
      expect((await agent.post('/api/v1/ai/reply-draft', { conversationId: 'not-a-uuid', messageId: english.messageIds[0] })).status).toBe(404);
      const wrongMessage = await agent.post('/api/v1/ai/reply-draft', { conversationId: english.id, messageId: vietnamese.messageIds[0] });
      expect(wrongMessage.status).toBe(404);
      expect(wrongMessage.body.error.message).toBe('Message not found');
    });

    it("another organization gets 404 for Acme's conversation (messaging is asked with its own org)", async () => {
      messaging.calls.length = 0;
      const res = await orgB.post('/api/v1/ai/reply-draft', { conversationId: english.id, messageId: english.messageIds[2] });
      expect(res.status).toBe(404);
      expect((await orgB.post('/api/v1/ai/summary', { conversationId: english.id })).status).toBe(404);
      expect(messaging.calls.every((c) => c.orgId !== orgA)).toBe(true);
      // ... and Acme cannot read Globex's.
      expect((await owner.post('/api/v1/ai/summary', { conversationId: bConversation.id })).status).toBe(404);
    });

    it('POST /ai/summary: extractive summary and key points in the conversation language', async () => {
      const en = await agent.post('/api/v1/ai/summary', { conversationId: english.id });
      expect(en.status).toBe(200);
      expect(en.body).toMatchObject({ language: 'en', engine: 'local', model: 'local-extractive-v1', messageCount: 3 });
      expect(en.body.summary).toMatch(/^John Carter and the team exchanged 3 recent messages, 2 of them from the customer\./);
      expect(en.body.summary).toMatch(/order #4512/);
      expect(en.body.summary).toMatch(/tone is negative/);
      expect(en.body.keyPoints).toEqual(
        expect.arrayContaining([expect.stringMatching(/^Customer: .*order #4512/), "To do: answer the customer's last question."]),
      );

      const vi = await agent.post('/api/v1/ai/summary', { conversationId: vietnamese.id });
      expect(vi.body.language).toBe('vi');
      expect(vi.body.summary).toMatch(/^Nguyễn Thị Lan và nhân viên đã trao đổi 3 tin nhắn/);
      expect(vi.body.keyPoints.some((k: string) => k.startsWith('Khách hàng: Giá áo khoác bao nhiêu vậy shop?'))).toBe(true);
    });

    it('POST /ai/summary without conversationId is 400; unknown is 404', async () => {
      expect((await agent.post('/api/v1/ai/summary', {})).body.error.details[0].field).toBe('conversationId');
      expect((await agent.post('/api/v1/ai/summary', { conversationId: randomUUID() })).status).toBe(404);
    });
  });

  describe('configured provider', () => {
    beforeAll(async () => {
      await owner.put('/api/v1/ai/providers/openai', { apiKey: OPENAI_KEY, baseUrl: openai.baseUrl });
      await owner.put('/api/v1/ai/providers/gemini', { apiKey: GEMINI_KEY, baseUrl: gemini.baseUrl });
      await owner.put('/api/v1/ai/config', { provider: 'openai', model: 'gpt-test-mini' });
    });

    it('GET /ai/config shows the provider active with its model', async () => {
      const res = await agent.get('/api/v1/ai/config');
      expect(res.body).toMatchObject({
        provider: 'openai',
        model: 'gpt-test-mini',
        status: 'active',
        engine: 'openai',
        effectiveModel: 'gpt-test-mini',
      });
    });

    it("POST /ai/reply-draft asks the provider's chat completions with the conversation and says which engine answered", async () => {
      openai.requests.length = 0;
      openai.reply = '```json\n{"draft": "Hi John, your order #4512 is on its way and should arrive by [date].", "confidence": 0.86}\n```';
      const res = await agent.post('/api/v1/ai/reply-draft', { conversationId: english.id, messageId: english.messageIds[2], tone: 'formal' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        draft: 'Hi John, your order #4512 is on its way and should arrive by [date].',
        confidence: 0.86,
        tone: 'formal',
        engine: 'openai',
        model: 'gpt-test-mini',
        question: 'When will it arrive?',
      });
      expect(res.body.fallbackReason).toBeUndefined();
      const call = openai.requests.find((r) => r.path === '/v1/chat/completions')!;
      expect(keyOf(call)).toBe(OPENAI_KEY);
      expect(call.body.model).toBe('gpt-test-mini');
      expect(call.body.messages[0].role).toBe('system');
      expect(call.body.messages[0].content).toMatch(/formal/);
      expect(call.body.messages[1].content).toContain('Hi, I ordered a blue backpack last week (order #4512).');
      expect(call.body.messages[1].content).toContain('When will it arrive?');
    });

    it('POST /ai/summary and /ai/sentiment read the JSON the provider writes', async () => {
      openai.reply =
        '{"summary": "John is waiting for order #4512, which has not arrived.", "keyPoints": ["Order #4512 not delivered", "Tracking shows no updates"]}';
      const s = await agent.post('/api/v1/ai/summary', { conversationId: english.id });
      expect(s.body).toMatchObject({
        summary: 'John is waiting for order #4512, which has not arrived.',
        keyPoints: ['Order #4512 not delivered', 'Tracking shows no updates'],
        engine: 'openai',
        model: 'gpt-test-mini',
      });
      openai.reply = 'Here you go: {"sentiment": "Negative", "score": -1.7, "emotions": ["frustration", "rage", "urgency"]}';
      const m = await agent.post('/api/v1/ai/sentiment', { text: 'Where is my order?!' });
      // Labels are normalised, scores clamped to [-1, 1], emotions outside the list dropped.
      expect(m.body).toMatchObject({ sentiment: 'negative', score: -1, emotions: ['frustration', 'urgency'], engine: 'openai' });
    });

    it('Gemini answers through generateContent when it is the chosen provider', async () => {
      await owner.put('/api/v1/ai/config', { provider: 'gemini', model: 'gemini-test' });
      gemini.requests.length = 0;
      gemini.reply = '{"sentiment": "positive", "score": 0.8, "emotions": ["gratitude"]}';
      const res = await agent.post('/api/v1/ai/sentiment', { text: 'Cảm ơn shop nhiều!' });
      expect(res.body).toMatchObject({
        sentiment: 'positive',
        score: 0.8,
        emotions: ['gratitude'],
        engine: 'gemini',
        model: 'gemini-test',
        language: 'vi',
      });
      expect(gemini.requests[0].path).toBe('/v1beta/models/gemini-test:generateContent');
      expect(keyOf(gemini.requests[0])).toBe(GEMINI_KEY);
      await owner.put('/api/v1/ai/config', { provider: 'openai', model: 'gpt-test-mini' });
    });

    it('a provider that times out: the local engine answers and the response says why', async () => {
      // 3 s, far beyond the 400 ms timeout, so that a late timer on a loaded machine still fires before the answer.
      openai.delayMs = 3000;
      try {
        const res = await agent.post('/api/v1/ai/reply-draft', {
          conversationId: vietnamese.id,
          messageId: vietnamese.messageIds[2],
          tone: 'concise',
        });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ engine: 'local', model: 'local-templates-v1', language: 'vi' });
        expect(res.body.fallbackReason).toBe(
          'OpenAI did not answer within 400 ms (127.0.0.1:' + new URL(openai.baseUrl).port + '); the local engine answered instead',
        );
        expect(res.body.draft).toContain('Giá áo khoác bao nhiêu vậy shop?');
      } finally {
        openai.delayMs = 0;
      }
    });

    it('a provider that rejects the key, or writes something unreadable: the local engine answers', async () => {
      openai.reply = 'Sorry, I cannot classify that.';
      const unreadable = await agent.post('/api/v1/ai/sentiment', { text: 'Great service, thanks!' });
      expect(unreadable.body).toMatchObject({ engine: 'local', sentiment: 'positive' });
      expect(unreadable.body.fallbackReason).toMatch(/could not be read; the local engine answered instead/);

      await owner.put('/api/v1/ai/providers/openai', { apiKey: WRONG_KEY });
      const rejected = await agent.post('/api/v1/ai/summary', { conversationId: english.id });
      expect(rejected.status).toBe(200);
      expect(rejected.body.engine).toBe('local');
      expect(rejected.body.fallbackReason).toMatch(/^OpenAI rejected the API key \(HTTP 401\)/);
      expect(rejected.body.fallbackReason).not.toContain(WRONG_KEY);
    });

    it('a chosen provider without a key: the local engine answers and says so', async () => {
      await owner.put('/api/v1/ai/config', { provider: 'kimi' });
      const res = await agent.post('/api/v1/ai/sentiment', { text: 'ok' });
      expect(res.body).toMatchObject({ engine: 'local', fallbackReason: 'Moonshot Kimi is selected but has no API key; the local engine answered' });
      await owner.put('/api/v1/ai/config', { provider: 'local' });
    });
  });

  describe('daily quota and on/off', () => {
    it('counts calls per organization per day: 429 with Retry-After and a clear message when spent', async () => {
      const set = await orgB.put('/api/v1/ai/config', { dailyQuota: 2 });
      expect(set.body).toMatchObject({ dailyQuota: 2, usedToday: 0, remainingToday: 2 });
      // A rejected request does not use the quota.
      expect((await orgB.post('/api/v1/ai/sentiment', {})).status).toBe(400);
      expect((await orgB.post('/api/v1/ai/sentiment', { text: 'hello' })).body.quotaRemaining).toBe(1);
      expect((await orgB.post('/api/v1/ai/summary', { conversationId: bConversation.id })).body.quotaRemaining).toBe(0);
      const spent = await orgB.post('/api/v1/ai/sentiment', { text: 'hello again' });
      expect(spent.status).toBe(429);
      expect(spent.body.error.code).toBe('ai_quota_exceeded');
      expect(spent.body.error.message).toMatch(/daily AI quota of 2 calls for this organization is used up; it resets at 00:00 UTC/);
      const retry = Number(spent.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(86_400);
      const config = await orgB.get('/api/v1/ai/config');
      expect(config.body).toMatchObject({ usedToday: 2, remainingToday: 0, status: 'quota_exhausted' });
      // Another organization's quota is its own.
      expect((await agent.post('/api/v1/ai/sentiment', { text: 'hello' })).status).toBe(200);
      // Raising the quota lets calls through again the same day.
      await orgB.put('/api/v1/ai/config', { dailyQuota: 3 });
      expect((await orgB.post('/api/v1/ai/sentiment', { text: 'hello' })).status).toBe(200);
    });

    it('a turned-off assistant answers 422 until it is turned on again', async () => {
      await owner.put('/api/v1/ai/config', { enabled: false });
      expect((await agent.get('/api/v1/ai/config')).body.status).toBe('disabled');
      const res = await agent.post('/api/v1/ai/sentiment', { text: 'hello' });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('ai_disabled');
      await owner.put('/api/v1/ai/config', { enabled: true });
      expect((await agent.post('/api/v1/ai/sentiment', { text: 'hello' })).status).toBe(200);
    });
  });

  it('no key appears in any response or log line', () => {
    const everything = [...bodies, ...ai.lines].join('\n');
    for (const secret of [OPENAI_KEY, GEMINI_KEY, WRONG_KEY]) expect(everything).not.toContain(secret);
    expect(ai.lines.some((l) => l.includes('rejected the API key'))).toBe(true);
  });

  it('when messaging is unreachable, drafts and summaries answer 503 quickly', async () => {
    await messaging.stop();
    const started = Date.now();
    const res = await agent.post('/api/v1/ai/summary', { conversationId: english.id });
    expect(res.status).toBe(503);
    expect(res.body.error.message).toMatch(/messaging service did not answer/);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
