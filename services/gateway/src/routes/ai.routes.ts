import { Router } from 'express';
import { z } from 'zod';
import { aiConfigOut, modelsOut } from './ai.out';
import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';
import { ctxOf } from '../http/principal';
import { body, s } from '../http/validate';

const PROVIDERS = ['anthropic', 'gemini', 'openai', 'qwen', 'kimi'] as const;
const TONES = ['friendly', 'formal', 'concise', 'apologetic'] as const;

/** Listing models waits for the vendor (the service gives it 8 s); drafts and summaries for a model's answer (25 s). */
const MODELS_DEADLINE_MS = 15_000;
const ASSIST_DEADLINE_MS = 40_000;

const httpUrl = (v: string) => {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};

export const ProviderUpdate = z
  .object({
    apiKey: z.string({ error: 'must be a string' }).max(1000, 'must be at most 1000 characters').optional(),
    baseUrl: z
      .string({ error: 'must be a string' })
      .trim()
      .max(500, 'must be at most 500 characters')
      .refine((v) => v === '' || httpUrl(v), 'must be an http(s) URL')
      .optional(),
  })
  .refine((b) => b.apiKey !== undefined || b.baseUrl !== undefined, { message: 'apiKey or baseUrl is required', path: ['apiKey'] });

export const ConfigUpdate = z.object({
  provider: s.enumOf(['local', ...PROVIDERS] as const).optional(),
  model: z.string({ error: 'must be a string' }).trim().max(200, 'must be at most 200 characters').optional(),
  // Only the shape here: the ai service holds the cap (AI_DAILY_QUOTA_MAX) and answers a quota above it.
  dailyQuota: z.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(2_147_483_647, 'must be at most 2147483647').optional(),
  enabled: z.boolean({ error: 'must be true or false' }).optional(),
});

const id = () => z.string({ error: 'is required' }).trim().min(1, 'is required').max(100, 'must be at most 100 characters');
export const Draft = z.object({ conversationId: id(), messageId: id(), tone: s.enumOf(TONES).default('friendly') });
export const Summary = z.object({ conversationId: id() });
export const Sentiment = z.object({ text: s.requiredText(10_000) });

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
    res.json(aiConfigOut(await clients.ai.UpdateConfig(body(req, ConfigUpdate), ctxOf(req, res))));
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
