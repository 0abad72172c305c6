import { Router } from 'express';
import { z } from 'zod';
import { aiRules } from '@crm/validation';
import { aiConfigOut, modelsOut } from './ai.out';
import type { RouteDeps, ServiceRoutes } from './deps';
import { byRule } from '../http/by-rule';
import { ctxOf } from '../http/principal';
import { body, s } from '../http/validate';

/** Listing models waits for the vendor (the service gives it 8 s); drafts and summaries for a model's answer (25 s). */
const MODELS_DEADLINE_MS = 15_000;
const ASSIST_DEADLINE_MS = 40_000;

// Providers, tones, the model name, the key and the base URL follow @crm/validation aiRules, the rules ai applies
// too; the base URL's address policy and the quota's cap (AI_DAILY_QUOTA_MAX) are ai's, which answers them.

export const ProviderUpdate = z
  .object({
    apiKey: byRule(z.string({ error: 'must be a string' }), aiRules.apiKey).optional(),
    baseUrl: byRule(z.string({ error: 'must be a string' }), (v) => aiRules.baseUrl(v)).optional(),
  })
  .refine((b) => b.apiKey !== undefined || b.baseUrl !== undefined, { message: 'apiKey or baseUrl is required', path: ['apiKey'] });

export const ConfigUpdate = z.object({
  provider: s.enumOf(aiRules.ENGINES).optional(),
  model: byRule(z.string({ error: 'must be a string' }), aiRules.aiModel).optional(),
  dailyQuota: byRule(z.number({ error: 'must be an integer' }), (v) => aiRules.dailyQuota(v))
    .refine((v) => v <= 2_147_483_647, 'must be at most 2147483647')
    .optional(),
  enabled: z.boolean({ error: 'must be true or false' }).optional(),
  // Issue #32 item 6: providers tried in order when the chosen one fails or times out (the offline engine answers last).
  fallbackProviders: byRule(z.array(z.string({ error: 'must be a string' }), { error: 'must be an array' }), aiRules.fallbackProviders).optional(),
  // Issue #32 item 5: the guarded auto-reply; only sent fields change.
  autoReply: z
    .object(
      {
        enabled: z.boolean({ error: 'must be true or false' }).optional(),
        chatnetAccountIds: byRule(
          z.array(z.string({ error: 'must be a string' }), { error: 'must be an array' }),
          aiRules.autoReplyAccountIds,
        ).optional(),
        minConfidence: byRule(z.number({ error: 'must be a number from 0 to 1' }), aiRules.autoReplyMinConfidence).optional(),
        onlyOutsideBusinessHours: z.boolean({ error: 'must be true or false' }).optional(),
        maxRepliesPerConversation: byRule(z.number({ error: 'must be a whole number' }), aiRules.autoReplyMaxReplies).optional(),
      },
      { error: 'must be an object' },
    )
    .strict()
    .optional(),
});

/** The proto's update: a list's presence is its wrapper's (absent: unchanged). */
function configUpdateRequest(b: z.output<typeof ConfigUpdate>) {
  const { fallbackProviders, autoReply, ...rest } = b;
  return {
    ...rest,
    ...(fallbackProviders ? { fallbackProviders: { values: fallbackProviders } } : {}),
    ...(autoReply
      ? { autoReply: { ...autoReply, chatnetAccountIds: autoReply.chatnetAccountIds ? { values: autoReply.chatnetAccountIds } : undefined } }
      : {}),
  };
}

const id = () => z.string({ error: 'is required' }).trim().min(1, 'is required').max(100, 'must be at most 100 characters');
export const Draft = z.object({ conversationId: id(), messageId: id(), tone: s.enumOf(aiRules.TONES).default('friendly') });
export const Summary = z.object({ conversationId: id() });
export const Sentiment = z.object({ text: s.requiredText(aiRules.MAX_SENTIMENT_TEXT) });

/** AI providers (keys write-only), the assistant's configuration and quota, drafts, summaries and sentiment. */
export function aiRoutes({ clients }: RouteDeps): ServiceRoutes {
  const r = Router();

  r.get('/ai/providers', async (req, res) => {
    const out = await clients.ai.ListProviders({}, ctxOf(req, res));
    res.json(out.providers);
  });
  r.put('/ai/providers/:id', async (req, res) => {
    const b = body(req, ProviderUpdate);
    await clients.ai.UpdateProvider({ id: req.params.id, ...b }, ctxOf(req, res));
    res.json({ ok: true });
  });
  r.get('/ai/providers/:id/models', async (req, res) => {
    const out = await clients.ai.ListModels({ id: req.params.id }, ctxOf(req, res), { deadlineMs: MODELS_DEADLINE_MS });
    res.json(modelsOut(out));
  });

  r.get('/ai/config', async (req, res) => {
    res.json(aiConfigOut(await clients.ai.GetConfig({}, ctxOf(req, res))));
  });
  r.put('/ai/config', async (req, res) => {
    res.json(aiConfigOut(await clients.ai.UpdateConfig(configUpdateRequest(body(req, ConfigUpdate)), ctxOf(req, res))));
  });

  r.post('/ai/reply-draft', async (req, res) => {
    res.json(await clients.ai.ReplyDraft(body(req, Draft), ctxOf(req, res), { deadlineMs: ASSIST_DEADLINE_MS }));
  });
  r.post('/ai/summary', async (req, res) => {
    res.json(await clients.ai.Summarize(body(req, Summary), ctxOf(req, res), { deadlineMs: ASSIST_DEADLINE_MS }));
  });
  r.post('/ai/sentiment', async (req, res) => {
    res.json(await clients.ai.AnalyzeSentiment(body(req, Sentiment), ctxOf(req, res), { deadlineMs: ASSIST_DEADLINE_MS }));
  });

  return { internal: r };
}
