import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as assist from '../domain/assist';
import * as assistant from '../domain/assistant';
import { listModels } from '../domain/models';
import { autoReply } from '../guardrails/auto-reply';
import * as providers from '../domain/providers';

/** ai.v1.AiService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function aiHandlers(deps: Deps): HandlersFor<'ai.v1.AiService'> {
  return {
    ListProviders: (_req, ctx) => providers.list(deps, ctx),
    UpdateProvider: (req, ctx) => providers.update(deps, ctx, req),
    ListModels: (req, ctx) => listModels(deps, ctx, req.id ?? ''),
    GetConfig: (_req, ctx) => assistant.getConfig(deps, ctx),
    UpdateConfig: (req, ctx) => assistant.updateConfig(deps, ctx, req),
    ReplyDraft: (req, ctx) => assist.replyDraft(deps, ctx, req),
    Summarize: (req, ctx) => assist.summary(deps, ctx, req),
    AnalyzeSentiment: (req, ctx) => assist.sentiment(deps, ctx, req),
    AutoReply: (req, ctx) => autoReply(deps, ctx, req),
  };
}
