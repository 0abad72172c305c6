import { AppError, invalid, OrgContext } from '@crm/grpc-kit';
import { aiRules } from '@crm/validation';
import type { Deps } from '../deps';
import { draftReply, findQuestion, Tone, TONES } from '../local/draft';
import { EMOTIONS, Emotion } from '../local/lexicon';
import { analyzeSentiment, SentimentLabel } from '../local/sentiment';
import { summarize } from '../local/summary';
import { detectLanguage } from '../local/text';
import { messageText } from '../local/conversation';
import { knowledgePrompt, passagesFor } from '../knowledge';
import type { ChatPrompt } from '../providers/adapters';
import { LOCAL_ENGINE } from '../providers/catalog';
import { ProviderError } from '../providers/http';
import { answerGuarded, type EngineAnswered } from '../guardrails/engine-chain';
import { AssistantSettings, LOCAL_MODELS, settingsOf } from './assistant';
import { draftPrompt, parseJsonObject, sentimentPrompt, summaryPrompt } from './prompts';

export const MAX_SENTIMENT_TEXT = aiRules.MAX_SENTIMENT_TEXT;

/**
 * Ask the configured provider (personal data replaced, then its fallback providers on a failure); on no provider, no
 * key, or every one failing, the local engine answers (guardrails/engine-chain.ts).
 */
function answer<T>(
  deps: Deps,
  ctx: OrgContext,
  settings: AssistantSettings,
  remote: { prompt: ChatPrompt; parse: (text: string) => T },
  local: () => T,
  localModel: string,
): Promise<T & EngineAnswered> {
  return answerGuarded(deps, ctx, settings.provider, settings.model, remote, local, localModel);
}

async function enabledSettings(deps: Deps, orgId: string): Promise<AssistantSettings> {
  const s = await settingsOf(deps, orgId);
  if (!s.enabled) {
    throw new AppError('failed_precondition', 'The AI assistant is turned off for this organization; an admin can turn it on in AI settings', {
      code: 'ai_disabled',
    });
  }
  return s;
}

const unreadable = (what: string) => new ProviderError('bad_response', `The provider's ${what} could not be read`);

function requiredId(value: string | undefined, field: string): string {
  if (!value || !value.trim()) throw invalid(field, 'is required');
  return value.trim();
}

export async function replyDraft(deps: Deps, ctx: OrgContext, req: { conversationId?: string; messageId?: string; tone?: string }) {
  const { orgId } = ctx;
  const conversationId = requiredId(req.conversationId, 'conversationId');
  const messageId = requiredId(req.messageId, 'messageId');
  const tone = (req.tone || 'friendly') as Tone;
  if (!TONES.includes(tone)) throw invalid('tone', `must be one of ${TONES.join(', ')}`);
  const settings = await enabledSettings(deps, orgId);
  const { conversation, target } = await deps.messaging.load(ctx, conversationId, deps.config.AI_CONTEXT_MESSAGES, messageId);
  const quota = await deps.quota.take(orgId, settings.dailyQuota);
  const question = findQuestion(messageText(target!));
  // The org's knowledge base: passages answering the message go to the provider, and the local engine quotes the best.
  const passages = await passagesFor(deps.pool, orgId, messageText(target!));
  const result = await answer(
    deps,
    ctx,
    settings,
    {
      prompt: knowledgePrompt(draftPrompt(conversation, target!, tone), passages),
      parse: (text) => {
        const json = parseJsonObject(text);
        // A model that ignored the JSON instruction still wrote a usable draft.
        const draft = typeof json?.draft === 'string' ? json.draft.trim() : json ? '' : text.trim();
        if (!draft) throw unreadable('draft');
        const c = Number(json?.confidence);
        return { draft, confidence: Number.isFinite(c) ? Math.round(Math.max(0, Math.min(1, c)) * 100) / 100 : 0.7, language: detectLanguage(draft) };
      },
    },
    () => {
      const d = draftReply(target!, conversation.messages, tone, conversation.contactName, passages[0]);
      return { draft: d.draft, confidence: d.confidence, language: d.language };
    },
    LOCAL_MODELS.draft,
  );
  // A provider was given every passage; the local engine quoted the first.
  const used = result.engine === LOCAL_ENGINE ? passages.slice(0, 1) : passages;
  const sources = used.map((p) => ({ id: p.articleId, title: p.title, excerpt: p.excerpt }));
  return { ...result, tone, question, sources, quotaRemaining: quota.remaining };
}

export async function summary(deps: Deps, ctx: OrgContext, req: { conversationId?: string }) {
  const { orgId } = ctx;
  const conversationId = requiredId(req.conversationId, 'conversationId');
  const settings = await enabledSettings(deps, orgId);
  const { conversation } = await deps.messaging.load(ctx, conversationId, deps.config.AI_CONTEXT_MESSAGES);
  const local = () => {
    const s = summarize(conversation.messages, conversation.contactName, conversation.totalMessages);
    return { summary: s.summary, keyPoints: s.keyPoints, language: s.language };
  };
  if (conversation.messages.length === 0) {
    // Nothing to summarise: answered without a provider and without using the quota.
    return {
      ...local(),
      messageCount: 0,
      engine: LOCAL_ENGINE,
      model: LOCAL_MODELS.summary,
      quotaRemaining: Math.max(0, settings.dailyQuota - (await deps.quota.used(orgId))),
    };
  }
  const quota = await deps.quota.take(orgId, settings.dailyQuota);
  const result = await answer(
    deps,
    ctx,
    settings,
    {
      prompt: summaryPrompt(conversation),
      parse: (text) => {
        const json = parseJsonObject(text);
        const s = typeof json?.summary === 'string' ? json.summary.trim() : '';
        if (!s) throw unreadable('summary');
        const keyPoints = Array.isArray(json?.keyPoints)
          ? json!.keyPoints
              .filter((k): k is string => typeof k === 'string' && !!k.trim())
              .map((k) => k.trim())
              .slice(0, 10)
          : [];
        return { summary: s, keyPoints, language: detectLanguage(s) };
      },
    },
    local,
    LOCAL_MODELS.summary,
  );
  return { ...result, messageCount: conversation.messages.length, quotaRemaining: quota.remaining };
}

const LABELS: SentimentLabel[] = ['positive', 'neutral', 'negative', 'mixed'];

export async function sentiment(deps: Deps, ctx: OrgContext, req: { text?: string }) {
  const { orgId } = ctx;
  const text = (req.text ?? '').trim();
  if (!text) throw invalid('text', 'is required');
  if (text.length > MAX_SENTIMENT_TEXT) throw invalid('text', `must be at most ${MAX_SENTIMENT_TEXT} characters`);
  const settings = await enabledSettings(deps, orgId);
  const quota = await deps.quota.take(orgId, settings.dailyQuota);
  const language = detectLanguage(text);
  const result = await answer(
    deps,
    ctx,
    settings,
    {
      prompt: sentimentPrompt(text),
      parse: (answerText) => {
        const json = parseJsonObject(answerText);
        const label = String(json?.sentiment ?? '').toLowerCase() as SentimentLabel;
        const score = Number(json?.score);
        if (!LABELS.includes(label) || !Number.isFinite(score)) throw unreadable('sentiment');
        const emotions = Array.isArray(json?.emotions)
          ? [
              ...new Set(json!.emotions.map((e) => String(e).toLowerCase()).filter((e): e is Emotion => (EMOTIONS as readonly string[]).includes(e))),
            ].slice(0, 3)
          : [];
        return { sentiment: label, score: Math.round(Math.max(-1, Math.min(1, score)) * 1000) / 1000, emotions, language };
      },
    },
    () => {
      const a = analyzeSentiment(text);
      return { sentiment: a.sentiment, score: a.score, emotions: a.emotions, language: a.language };
    },
    LOCAL_MODELS.sentiment,
  );
  return { ...result, quotaRemaining: quota.remaining };
}
