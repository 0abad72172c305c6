import { AppError, invalid, type OrgContext } from '@crm/grpc-kit';
import type { ai } from '@crm/proto-types';
import type { Deps } from '../deps';
import { LOCAL_MODELS, settingsOf } from '../domain/assistant';
import { LOCAL_ENGINE } from '../providers/catalog';
import { draftPrompt, parseJsonObject } from '../domain/prompts';
import { knowledgePrompt, passagesFor } from '../knowledge';
import { messageText, type ChatConversation, type ChatMessage } from '../local/conversation';
import { draftReply } from '../local/draft';
import { ProviderError } from '../providers/http';
import { answerGuarded } from './engine-chain';
import { guardSettingsOf } from './guard-settings';
import { asksForPerson } from './person-request';

type Result = ai.AutoReplyResult;
export type HandoffReason = 'low_confidence' | 'asked_for_person' | 'quota_exhausted';

const OFF: Result = {
  decision: 'off',
  answer: '',
  confidence: 0,
  minConfidence: 0,
  reason: '',
  reasonText: '',
  engine: '',
  model: '',
  promptHash: '',
  sources: [],
};

const round = (n: number) => Math.round(Math.max(0, Math.min(1, n)) * 100) / 100;

/**
 * The guarded auto-reply (issue #32 item 5), asked by messaging for a customer's message on an account in the
 * organization's list. ai decides (it owns the settings, the engine and the threshold); messaging acts: sends the
 * answer with source `ai`, or hands the conversation to a person. `off` when the assistant or the auto-reply is
 * turned off, or the account left the list, since messaging's copy of the list was made (messaging does nothing).
 *
 * The answer is the reply draft's engine chain (personal data redacted before a provider, fallback providers, then
 * the offline engine), with its `confidence`: the provider's own statement (none stated counts as 0: not trusted to
 * answer alone), or the offline engine's, computed from what it recognised in the message (a question, a known
 * topic, the customer's name). A customer asking for a person is handed over without asking any engine.
 */
export async function autoReply(deps: Deps, ctx: OrgContext, req: ai.AutoReplyRequest__Output): Promise<Result> {
  const { orgId } = ctx;
  const [settings, guard] = await Promise.all([settingsOf(deps, orgId), guardSettingsOf(deps, orgId)]);
  const accountId = (req.chatnetAccountId ?? '').toLowerCase();
  if (!settings.enabled || !guard.autoReply.enabled || !guard.autoReply.chatnetAccountIds.includes(accountId)) return OFF;
  const messages: ChatMessage[] = (req.messages ?? []).map((m) => ({
    id: m.id,
    content: m.content ?? '',
    contentType: m.contentType || 'text',
    fromCustomer: !!m.fromCustomer,
    senderName: m.senderName ?? '',
    sentAt: m.sentAt ?? '',
  }));
  const target = messages.find((m) => m.id === req.messageId);
  if (!target) throw invalid('messageId', 'must be one of messages');
  const minConfidence = guard.autoReply.minConfidence;
  const handoff = (reason: HandoffReason, reasonText: string, extra: Partial<Result> = {}): Result => ({
    ...OFF,
    decision: 'handoff',
    minConfidence,
    reason,
    reasonText,
    ...extra,
  });
  if (asksForPerson(messageText(target))) return handoff('asked_for_person', 'The customer asked to talk to a person');
  try {
    await deps.quota.take(orgId, settings.dailyQuota);
  } catch (err) {
    if (err instanceof AppError && err.kind === 'rate_limited')
      return handoff('quota_exhausted', `Today's ${settings.dailyQuota} AI calls are used up; the assistant cannot answer until 00:00 UTC`);
    throw err;
  }
  const conversation: ChatConversation = { id: req.conversationId, contactName: req.contactName ?? '', messages, totalMessages: messages.length };
  // The org's knowledge base, as for a reply draft: its passages go to a provider, and the offline engine quotes the best.
  const passages = await passagesFor(deps.pool, orgId, messageText(target));
  const answered = await answerGuarded(
    deps,
    ctx,
    settings.provider,
    settings.model,
    {
      prompt: knowledgePrompt(draftPrompt(conversation, target, 'friendly'), passages),
      parse: (text) => {
        const json = parseJsonObject(text);
        const draft = typeof json?.draft === 'string' ? json.draft.trim() : '';
        if (!draft) throw new ProviderError('bad_response', "The provider's answer could not be read");
        const c = Number(json?.confidence);
        return { draft, confidence: Number.isFinite(c) ? round(c) : 0 };
      },
    },
    () => {
      const d = draftReply(target, messages, 'friendly', conversation.contactName, passages[0]);
      return { draft: d.draft, confidence: d.confidence };
    },
    LOCAL_MODELS.draft,
  );
  const engine = {
    answer: answered.draft,
    confidence: answered.confidence,
    engine: answered.engine,
    model: answered.model,
    promptHash: answered.promptHash,
    // A provider was given every passage; the offline engine quoted the first.
    sources: (answered.engine === LOCAL_ENGINE ? passages.slice(0, 1) : passages).map((p) => ({
      id: p.articleId,
      title: p.title,
      excerpt: p.excerpt,
    })),
    ...(answered.fallbackReason ? { fallbackReason: answered.fallbackReason } : {}),
  };
  if (answered.confidence < minConfidence) {
    return handoff(
      'low_confidence',
      `The assistant's confidence (${answered.confidence}) is below the threshold (${minConfidence}): a person should answer`,
      engine,
    );
  }
  return { ...OFF, decision: 'reply', minConfidence, ...engine };
}
