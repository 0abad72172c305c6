import { z } from 'zod';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { aiConfigOut, modelsOut } from './ai.out';
import {
  AiConfig,
  ConfigUpdate,
  Draft,
  ModelList,
  Ok,
  Provider,
  ProviderUpdate,
  ReplyDraft,
  Sentiment,
  SentimentOut,
  Summary,
  SummaryOut,
  UpdatedAiConfig,
} from './ai.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';

/** Listing models waits for the vendor (the service gives it 8 s); drafts and summaries for a model's answer (25 s). */
const MODELS_DEADLINE_MS = 15_000;
const ASSIST_DEADLINE_MS = 40_000;

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

/**
 * AI providers (keys write-only), the assistant's settings and daily quota, and the assistant itself (ai).
 * The assistant answers 422 when an admin turned it off, 429 when the day's quota is used, 503 when messaging
 * cannot give it the conversation; a provider that fails is replaced by the local engine (`fallbackReason`).
 * Served and documented from these declarations (the knowledge base is knowledge.routes.ts).
 */
export const aiRoutesArea = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'AI assistant' });
const ai = (deps: RouteDeps) => deps.clients.ai;

aiRoutesArea.route('GET /ai/providers', {
  summary: 'The AI providers, each with whether a key is set (masked) and its base URL',
  response: z.array(Provider),
  handler: async ({ ctx, deps }) => (await ai(deps).ListProviders({}, ctx)).providers,
});
aiRoutesArea.route('PUT /ai/providers/:id', {
  summary: 'Set a provider’s API key and/or base URL (admins and owners; "" removes)',
  body: ProviderUpdate,
  response: Ok,
  handler: async ({ param, body, ctx, deps }) => {
    await ai(deps).UpdateProvider({ id: param('id'), ...body }, ctx);
    return { ok: true as const };
  },
});
aiRoutesArea.route('GET /ai/providers/:id/models', {
  summary: 'The models a provider offers, asked of the provider',
  description: 'Never fails for the provider’s sake: a missing or refused key, a timeout or an unknown provider answer `{models: [], error}`.',
  response: ModelList,
  noErrors: [404],
  handler: async ({ param, ctx, deps }) => modelsOut(await ai(deps).ListModels({ id: param('id') }, ctx, { deadlineMs: MODELS_DEADLINE_MS })),
});
aiRoutesArea.route('GET /ai/config', {
  summary: 'The assistant’s settings, the engine that answers, and today’s quota use',
  response: AiConfig,
  handler: async ({ ctx, deps }) => aiConfigOut(await ai(deps).GetConfig({}, ctx)),
});
aiRoutesArea.route('PUT /ai/config', {
  summary: 'Choose provider and model, set the daily quota, turn the assistant on or off (admins and owners)',
  body: ConfigUpdate,
  response: UpdatedAiConfig,
  handler: async ({ body, ctx, deps }) => aiConfigOut(await ai(deps).UpdateConfig(configUpdateRequest(body), ctx)),
});
aiRoutesArea.route('POST /ai/reply-draft', {
  summary: 'Draft a reply to a customer’s message in a conversation',
  body: Draft,
  response: ReplyDraft,
  errors: [404, 422, 503],
  handler: async ({ body, ctx, deps }) => ai(deps).ReplyDraft(body, ctx, { deadlineMs: ASSIST_DEADLINE_MS }),
});
aiRoutesArea.route('POST /ai/summary', {
  summary: 'Summarize a conversation',
  body: Summary,
  response: SummaryOut,
  errors: [404, 422, 503],
  handler: async ({ body, ctx, deps }) => ai(deps).Summarize(body, ctx, { deadlineMs: ASSIST_DEADLINE_MS }),
});
aiRoutesArea.route('POST /ai/sentiment', {
  summary: 'The sentiment and emotions of a text',
  body: Sentiment,
  response: SentimentOut,
  errors: [422],
  handler: async ({ body, ctx, deps }) => ai(deps).AnalyzeSentiment(body, ctx, { deadlineMs: ASSIST_DEADLINE_MS }),
});

export function aiRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: aiRoutesArea.router(deps, responseContract(deps.config)) };
}
