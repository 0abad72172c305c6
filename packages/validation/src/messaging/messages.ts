import { invalid } from '@crm/grpc-kit';

/** Longest message body accepted (the chat network's own limit is in the same range). */
export const CONTENT_MAX = 20_000;

/** A message's content type: a short name such as text, image or application/pdf. */
export const CONTENT_TYPE_PATTERN = /^[A-Za-z0-9_.\/+-]{1,50}$/;
export const CONTENT_TYPE_MESSAGE = 'must be a short type name such as text';
export const DEFAULT_CONTENT_TYPE = 'text';

export const MAX_ATTACHMENTS = 10;
export const TOO_MANY_ATTACHMENTS = `at most ${MAX_ATTACHMENTS} attachments per message`;

/** An idempotency key (Idempotency-Key header or clientMessageId): at most this many characters. */
export const IDEMPOTENCY_KEY_MAX = 255;
/** A chat-network thread id (a user's or a group's) as the public send names it. */
export const THREAD_ID_MAX = 200;

/** The content type as stored: trimmed, `text` when empty. */
export function contentType(value: string | undefined): string {
  const v = (value ?? '').trim() || DEFAULT_CONTENT_TYPE;
  if (!CONTENT_TYPE_PATTERN.test(v)) throw invalid('contentType', CONTENT_TYPE_MESSAGE);
  return v;
}

/** A reaction: one emoji (or a chat network's reaction code), without spaces, at most this many characters. */
export const REACTION_EMOJI_MAX = 32;
export const REACTION_EMOJI_MESSAGE = 'must be a single emoji';
export const REACTION_EMOJI_TOO_LONG = `must be at most ${REACTION_EMOJI_MAX} characters`;

/** A reaction as stored: trimmed; '' only where it takes a reaction back (`allowEmpty`), else 400 naming `emoji`. */
export function reactionEmoji(value: string | undefined, allowEmpty = false): string {
  const emoji = (value ?? '').trim();
  if (!emoji && !allowEmpty) throw invalid('emoji', 'is required');
  if (emoji.length > REACTION_EMOJI_MAX) throw invalid('emoji', REACTION_EMOJI_TOO_LONG);
  if (/\s/.test(emoji)) throw invalid('emoji', REACTION_EMOJI_MESSAGE);
  return emoji;
}
