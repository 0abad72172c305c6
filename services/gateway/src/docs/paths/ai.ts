import { z } from 'zod';
import { ConfigUpdate, Draft, ProviderUpdate, Sentiment, Summary } from '../../routes/ai.routes';
import { nulls, reply, replyItem } from '../proto-schema';
import { area } from '../registry';

/**
 * AI providers (keys write-only), the assistant's settings and daily quota, and the assistant itself (ai).
 * The assistant answers 422 when an admin turned it off, 429 when the day's quota is used, 503 when messaging
 * cannot give it the conversation; a provider that fails is replaced by the local engine (`fallbackReason`).
 */
const ai = area({ prefix: '/api/v1', auth: 'bearer', tag: 'AI assistant' });
ai.op('GET /ai/providers', {
  summary: 'The AI providers, each with whether a key is set (masked) and its base URL',
  responses: { 200: z.array(replyItem('ai', 'ListProviders', 'providers')) },
});
ai.op('PUT /ai/providers/:id', {
  summary: 'Set a provider’s API key and/or base URL (admins and owners; "" removes)',
  body: ProviderUpdate,
  responses: { 200: z.object({ ok: z.literal(true) }) },
});
ai.op('GET /ai/providers/:id/models', {
  summary: 'The models a provider offers, asked of the provider',
  description: 'Never fails for the provider’s sake: a missing or refused key, a timeout or an unknown provider answer `{models: [], error}`.',
  responses: { 200: reply('ai', 'ListModels') },
  noErrors: [404],
});
ai.op('GET /ai/config', {
  summary: 'The assistant’s settings, the engine that answers, and today’s quota use',
  responses: { 200: nulls(reply('ai', 'GetConfig'), ['model']) },
});
ai.op('PUT /ai/config', {
  summary: 'Choose provider and model, set the daily quota, turn the assistant on or off (admins and owners)',
  body: ConfigUpdate,
  responses: { 200: nulls(reply('ai', 'UpdateConfig'), ['model']) },
});
ai.op('POST /ai/reply-draft', {
  summary: 'Draft a reply to a customer’s message in a conversation',
  body: Draft,
  responses: { 200: reply('ai', 'ReplyDraft') },
  errors: [404, 422, 503],
});
ai.op('POST /ai/summary', {
  summary: 'Summarize a conversation',
  body: Summary,
  responses: { 200: reply('ai', 'Summarize') },
  errors: [404, 422, 503],
});
ai.op('POST /ai/sentiment', {
  summary: 'The sentiment and emotions of a text',
  body: Sentiment,
  responses: { 200: reply('ai', 'AnalyzeSentiment') },
  errors: [422],
});

export const aiOps = ai.ops;
