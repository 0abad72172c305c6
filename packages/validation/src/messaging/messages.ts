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

/** A scheduled message's states: waiting, sent (messageId set), cancelled (by the user or the contact's reply), failed. */
export const SCHEDULED_MESSAGE_STATUSES = ['scheduled', 'sent', 'cancelled', 'failed'] as const;
/** How far ahead a message may be scheduled. */
export const SCHEDULE_MAX_DAYS = 90;
export const SEND_AT_PAST = 'must be in the future';
export const SEND_AT_TOO_FAR = `must be at most ${SCHEDULE_MAX_DAYS} days ahead`;
export const SEND_AT_FORMAT = 'must be an ISO 8601 timestamp in years 0001-9999';
/** A PUT of a scheduled message that changes nothing. */
export const SCHEDULED_CHANGE_REQUIRED = 'give content or sendAt to change';

/** `sendAt` of a scheduled message: an ISO 8601 timestamp later than `now` and at most SCHEDULE_MAX_DAYS ahead. */
export function sendAt(value: string | undefined, now = Date.now()): Date {
  const at = new Date(value ?? '');
  if (!value || !/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(at.getTime())) throw invalid('sendAt', SEND_AT_FORMAT);
  if (at.getTime() <= now) throw invalid('sendAt', SEND_AT_PAST);
  if (at.getTime() > now + SCHEDULE_MAX_DAYS * 86_400_000) throw invalid('sendAt', SEND_AT_TOO_FAR);
  return at;
}
