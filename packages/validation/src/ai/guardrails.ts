import { invalid } from '@crm/grpc-kit';
import { isUuid } from '../ids';

// Guarded AI (issue #32 items 5 and 6): the fallback providers and the auto-reply settings of PUT /api/v1/ai/config.
// The gateway's schema and the ai service apply the same rules, with the same field names.

const PROVIDERS = ['anthropic', 'gemini', 'openai', 'qwen', 'kimi'] as const;
export const FALLBACK_PROVIDERS_MESSAGE = `must be one of ${PROVIDERS.join(', ')}`;
export const AUTO_REPLY_ACCOUNTS_MAX = 100;
export const AUTO_REPLY_MAX_REPLIES = 20;

/** Provider ids to try after the chosen one, in order; each known, each once (the offline engine always comes last). */
export function fallbackProviders(values: readonly string[]): string[] {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (!(PROVIDERS as readonly string[]).includes(v)) throw invalid(`fallbackProviders.${i}`, FALLBACK_PROVIDERS_MESSAGE);
    if (seen.has(v)) throw invalid(`fallbackProviders.${i}`, 'is listed twice');
    seen.add(v);
  });
  return [...values];
}

export function autoReplyAccountIds(values: readonly string[]): string[] {
  if (values.length > AUTO_REPLY_ACCOUNTS_MAX) throw invalid('autoReply.chatnetAccountIds', `must list at most ${AUTO_REPLY_ACCOUNTS_MAX} accounts`);
  values.forEach((v, i) => {
    if (!isUuid(v)) throw invalid(`autoReply.chatnetAccountIds.${i}`, 'must be an id (UUID)');
  });
  return [...new Set(values.map((v) => v.toLowerCase()))];
}

export function autoReplyMinConfidence(value: number): number {
  if (!Number.isFinite(value) || value < 0 || value > 1) throw invalid('autoReply.minConfidence', 'must be a number from 0 to 1');
  return value;
}

export function autoReplyMaxReplies(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > AUTO_REPLY_MAX_REPLIES)
    throw invalid('autoReply.maxRepliesPerConversation', `must be a whole number from 1 to ${AUTO_REPLY_MAX_REPLIES}`);
  return value;
}
