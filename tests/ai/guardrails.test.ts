import { eventually } from '@crm/testing';
import { auditEntries } from '../support/audit';
import { client, Client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { agentOf } from './support/captured-ai';
import { FakeMessaging, startFakeMessaging } from './support/fake-messaging';
import { FakeVendor, startFakeVendor } from './support/fake-vendors';

// Issue #32 item 6, through the gateway: personal data never reaches an outside provider (a local fake provider records
// what it got) and the answer has it back; a provider that fails or times out hands over to the org's
// fallbackProviders in order, then to the offline engine, and the answer says which engine answered; the new settings
// (fallbackProviders, autoReply) are validated with 400 naming the field, audited, and each org's own.
describe('AI guardrails: redaction, fallback providers, guarded settings', () => {
  const OPENAI_KEY = 'sk-guard-openai-secret-1111111111-OPEN';
  const ANTHROPIC_KEY = 'sk-ant-guard-secret-22222222222-ANTH';
  const PHONE_VN = '0901 234 567';
  const PHONE_INTL = '+84 912 345 678';
  const EMAIL = 'lan.nguyen@example.com';
  const CCCD = '001099012345';

  let stack: Stack;
  let owner: Client;
  let agent: Client;
  let other: Client;
  let orgA: string;
  let messaging: FakeMessaging;
  let openai: FakeVendor;
  let anthropic: FakeVendor;
  let conversation: { id: string; messageIds: string[] };
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const completions = (v: FakeVendor) => v.requests.filter((r) => r.method === 'POST');

  beforeAll(async () => {
    [messaging, openai, anthropic] = await Promise.all([
      startFakeMessaging(),
      startFakeVendor('openai', {
        keys: [OPENAI_KEY],
        // The model writes the placeholders it was given back; the user must get the real values.
        reply: JSON.stringify({ draft: 'Dạ, bên em sẽ gọi [PHONE_1] hoặc [PHONE_2] và gửi email tới [EMAIL_1] (CCCD [ID_1]) ạ.', confidence: 0.9 }),
      }),
      startFakeVendor('anthropic', { keys: [ANTHROPIC_KEY] }),
    ]);
    stack = await startStack({
      services: ['ai'],
      env: { MESSAGING_ADDR: messaging.address },
      serviceEnv: { ai: { AI_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', AI_COMPLETION_TIMEOUT_MS: '400' } },
    });
    const api = client(stack.url);
    const a = await newOrg(api, 'Guarded Acme');
    owner = a.owner;
    orgA = a.user.orgId;
    agent = await agentOf(api, owner);
    other = (await newOrg(api, 'Guarded Globex')).owner;
    expect((await owner.put('/api/v1/ai/providers/openai', { apiKey: OPENAI_KEY, baseUrl: openai.baseUrl })).status).toBe(200);
    expect((await owner.put('/api/v1/ai/providers/anthropic', { apiKey: ANTHROPIC_KEY, baseUrl: anthropic.baseUrl })).status).toBe(200);
    conversation = messaging.addConversation(orgA, {
      contactName: 'Lan Nguyen',
      messages: [
        { content: `Chào shop, em là Lan, số em ${PHONE_VN}, zalo ${PHONE_INTL}.`, fromCustomer: true },
        { content: 'Dạ chào chị Lan, chị cần hỗ trợ gì ạ?', fromCustomer: false, senderName: 'Amy' },
        { content: `Email của em là ${EMAIL}, CCCD ${CCCD}. Khi nào đơn của em được giao vậy shop?`, fromCustomer: true },
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([messaging?.stop(), openai?.close(), anthropic?.close()]);
  });

  const draft = () => agent.post('/api/v1/ai/reply-draft', { conversationId: conversation.id, messageId: conversation.messageIds[2] });

  describe('settings', () => {
    it('GET shows the defaults: no fallback provider, auto-reply off', async () => {
      const res = await agent.get('/api/v1/ai/config');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        fallbackProviders: [],
        autoReply: { enabled: false, chatnetAccountIds: [], minConfidence: 0.7, onlyOutsideBusinessHours: false, maxRepliesPerConversation: 3 },
      });
    });

    it('PUT: 401 without a token, 403 for an agent, 400 naming the field', async () => {
      expect((await client(stack.url).put('/api/v1/ai/config', { fallbackProviders: ['openai'] })).status).toBe(401);
      expect((await agent.put('/api/v1/ai/config', { fallbackProviders: ['openai'] })).status).toBe(403);
      const bad: Array<[unknown, string]> = [
        [{ fallbackProviders: 'openai' }, 'fallbackProviders'],
        [{ fallbackProviders: ['openai', 'nope'] }, 'fallbackProviders'],
        [{ fallbackProviders: ['local'] }, 'fallbackProviders'],
        [{ fallbackProviders: ['openai', 'openai'] }, 'fallbackProviders'],
        [{ autoReply: true }, 'autoReply'],
        [{ autoReply: { enabled: 'yes' } }, 'autoReply.enabled'],
        [{ autoReply: { minConfidence: 1.5 } }, 'autoReply.minConfidence'],
        [{ autoReply: { minConfidence: -0.1 } }, 'autoReply.minConfidence'],
        [{ autoReply: { minConfidence: '0.5' } }, 'autoReply.minConfidence'],
        [{ autoReply: { chatnetAccountIds: ['not-an-id'] } }, 'autoReply.chatnetAccountIds'],
        [{ autoReply: { maxRepliesPerConversation: 0 } }, 'autoReply.maxRepliesPerConversation'],
        [{ autoReply: { maxRepliesPerConversation: 2.5 } }, 'autoReply.maxRepliesPerConversation'],
        [{ autoReply: { onlyOutsideBusinessHours: 1 } }, 'autoReply.onlyOutsideBusinessHours'],
        [{ autoReply: { surprise: true } }, 'autoReply'],
      ];
      for (const [body, field] of bad) {
        const res = await owner.put('/api/v1/ai/config', body);
        expect([res.status, fieldOf(res)]).toEqual([400, field]);
      }
    });

    it('PUT saves, a partial update keeps the rest, the change is audited, and another org keeps its own', async () => {
      const account = '6f1c1d2e-0b7a-4b8e-9f3a-2d4c5b6a7e8f';
      const res = await owner.put('/api/v1/ai/config', {
        fallbackProviders: ['openai', 'gemini'],
        autoReply: { enabled: true, chatnetAccountIds: [account], minConfidence: 0.55 },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        fallbackProviders: ['openai', 'gemini'],
        autoReply: {
          enabled: true,
          chatnetAccountIds: [account],
          minConfidence: 0.55,
          onlyOutsideBusinessHours: false,
          maxRepliesPerConversation: 3,
        },
      });
      const partial = await owner.put('/api/v1/ai/config', { autoReply: { maxRepliesPerConversation: 5 } });
      expect(partial.body.autoReply).toEqual({
        enabled: true,
        chatnetAccountIds: [account],
        minConfidence: 0.55,
        onlyOutsideBusinessHours: false,
        maxRepliesPerConversation: 5,
      });
      expect(partial.body.fallbackProviders).toEqual(['openai', 'gemini']);
      expect((await agent.get('/api/v1/ai/config')).body.autoReply).toEqual(partial.body.autoReply);

      // Both changes are audited, each with what it changed; the entries travel through ai's outbox and the bus, so
      // the second may land after the first is already listed: wait for the one of the partial update.
      const entry = await eventually(
        async () => (await auditEntries(owner, 'ai_settings.updated')).find((e) => e.details.autoReply?.to?.maxRepliesPerConversation === 5),
        15_000,
        100,
      );
      const withFallbacks = (await auditEntries(owner, 'ai_settings.updated')).find((e) => e.details.fallbackProviders);
      expect(withFallbacks?.details.fallbackProviders).toEqual({ from: [], to: ['openai', 'gemini'] });
      expect(entry.details.autoReply).toEqual(expect.objectContaining({ from: expect.objectContaining({ maxRepliesPerConversation: 3 }) }));

      const theirs = await other.get('/api/v1/ai/config');
      expect(theirs.body).toMatchObject({ fallbackProviders: [], autoReply: { enabled: false, chatnetAccountIds: [] } });
      expect(await auditEntries(other, 'ai_settings.updated')).toEqual([]);
      // Back to no fallback and auto-reply off for the tests below.
      expect((await owner.put('/api/v1/ai/config', { fallbackProviders: [], autoReply: { enabled: false, chatnetAccountIds: [] } })).status).toBe(
        200,
      );
    });
  });

  describe('personal data', () => {
    it('the provider receives no phone, email or ID number; the user gets them back in the answer', async () => {
      expect((await owner.put('/api/v1/ai/config', { provider: 'openai' })).status).toBe(200);
      const before = completions(openai).length;
      const res = await draft();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ engine: 'openai', confidence: 0.9 });
      expect(res.body.fallbackReason).toBeUndefined();
      expect(res.body.draft).toBe(`Dạ, bên em sẽ gọi ${PHONE_VN} hoặc ${PHONE_INTL} và gửi email tới ${EMAIL} (CCCD ${CCCD}) ạ.`);

      const sent = completions(openai).slice(before);
      expect(sent).toHaveLength(1);
      const wire = JSON.stringify(sent[0].body);
      for (const value of [PHONE_VN, PHONE_INTL, EMAIL, CCCD, '0901234567', '84912345678', '912 345 678', 'example.com']) {
        expect(wire).not.toContain(value);
      }
      // What it got instead: the placeholders, and the instruction to keep them.
      for (const placeholder of ['[PHONE_1]', '[PHONE_2]', '[EMAIL_1]', '[ID_1]']) expect(wire).toContain(placeholder);
      expect(wire).toContain('copy the placeholder exactly');
    });

    it('sentiment text is redacted too', async () => {
      const before = completions(openai).length;
      await agent.post('/api/v1/ai/sentiment', { text: `Gọi lại cho tôi số ${PHONE_VN} ngay, tôi rất thất vọng` });
      const wire = JSON.stringify(
        completions(openai)
          .slice(before)
          .map((r) => r.body),
      );
      expect(wire).toContain('[PHONE_1]');
      expect(wire).not.toContain(PHONE_VN);
    });
  });

  describe('fallback', () => {
    afterEach(() => {
      anthropic.delayMs = 0;
      openai.delayMs = 0;
    });

    it('a provider that times out hands over to the next fallback provider, which answers (and says so)', async () => {
      expect((await owner.put('/api/v1/ai/config', { provider: 'anthropic', fallbackProviders: ['kimi', 'openai'] })).status).toBe(200);
      anthropic.delayMs = 3000;
      const [a0, o0] = [completions(anthropic).length, completions(openai).length];
      const res = await draft();
      expect(res.status).toBe(200);
      expect(res.body.engine).toBe('openai');
      expect(res.body.model).toBe('gpt-4o-mini');
      expect(res.body.fallbackReason).toMatch(
        /^Anthropic Claude did not answer within 400 ms .*; Moonshot Kimi \(fallback\) has no API key; OpenAI answered instead$/,
      );
      expect(res.body.draft).toContain(EMAIL);
      expect(completions(openai).length).toBe(o0 + 1);
      // The slow provider records the request when it finally answers (the fake's delay is before its handler):
      // redacted for it as for the fallback.
      const slow = await eventually(async () => (completions(anthropic).length === a0 + 1 ? completions(anthropic).at(-1) : undefined), 10_000);
      expect(JSON.stringify(slow!.body)).not.toContain(EMAIL);
      expect(JSON.stringify(slow!.body)).toContain('[EMAIL_1]');
    });

    it('when every provider fails, the offline engine answers and the answer says which engine did and why', async () => {
      anthropic.delayMs = 3000;
      openai.delayMs = 3000;
      const res = await draft();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ engine: 'local', model: 'local-templates-v1' });
      expect(res.body.fallbackReason).toMatch(
        /^Anthropic Claude did not answer within 400 ms .*; Moonshot Kimi \(fallback\) has no API key; OpenAI did not answer within 400 ms .*; the local engine answered instead$/,
      );
      expect(res.body.confidence).toBeGreaterThan(0);
    });

    it('another org is untouched by this org’s fallbacks: its local engine answers without a reason', async () => {
      const res = await other.post('/api/v1/ai/sentiment', { text: 'ok' });
      expect(res.body).toMatchObject({ engine: 'local' });
      expect(res.body.fallbackReason).toBeUndefined();
      expect(res.body.promptHash).toBeUndefined();
    });
  });
});
