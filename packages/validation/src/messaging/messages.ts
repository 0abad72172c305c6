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
