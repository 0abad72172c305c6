import { z } from 'zod';
import type { ai } from '@crm/proto-types';
import { aiRules } from '@crm/validation';
import { nulls, reply, replyItem } from '../docs/proto-schema';
import { byRule } from '../http/by-rule';
import { s } from '../http/validate';

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

const id = () => z.string({ error: 'is required' }).trim().min(1, 'is required').max(100, 'must be at most 100 characters');
export const Draft = z.object({ conversationId: id(), messageId: id(), tone: s.enumOf(aiRules.TONES).default('friendly') });
export const Summary = z.object({ conversationId: id() });
export const Sentiment = z.object({ text: s.requiredText(aiRules.MAX_SENTIMENT_TEXT) });

// ------------------------------------------------------------------------------------------- responses

/**
 * The answers forwarded as ai gives them are the proto's messages: their schemas come from the proto and are typed
 * by the generated types (as common.schemas.ts's Pagination is), so the forwarding handler is checked against them.
 */
const asProto = <T>(schema: z.ZodObject) => schema as unknown as z.ZodType<T>;

/** A provider: whether a key is set (masked) and its base URL. */
export const Provider = asProto<ai.Provider__Output>(replyItem('ai', 'ListProviders', 'providers'));
export const Ok = z.object({ ok: z.literal(true) });
/** A provider's models (modelsOut is typed by it); `error` only when the vendor could not be asked. */
export const ModelList = reply('ai', 'ListModels');
/** The assistant's settings (aiConfigOut is typed by it): no model chosen is null. */
export const AiConfig = nulls(reply('ai', 'GetConfig'), ['model']);
/** PUT /ai/config answers the settings as GET does (the same mapper). */
export const UpdatedAiConfig = nulls(reply('ai', 'UpdateConfig'), ['model']);
export const ReplyDraft = asProto<ai.ReplyDraftResult__Output>(reply('ai', 'ReplyDraft'));
export const SummaryOut = asProto<ai.SummaryResult__Output>(reply('ai', 'Summarize'));
export const SentimentOut = asProto<ai.SentimentResult__Output>(reply('ai', 'AnalyzeSentiment'));
