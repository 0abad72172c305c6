import { invalid } from '@crm/grpc-kit';

/** PostgreSQL refuses NUL in text; a caller that sends one (the gateway refuses it, another service might not) gets a 400. */
export function rejectNul(value: string | undefined, field: string): void {
  if (value?.includes('\u0000')) throw invalid(field, 'must not contain NUL characters');
}

/** Most characters of a short text (a name, a title) unless its rule says otherwise. */
export const DEFAULT_TEXT_MAX = 200;

/** Trimmed, non-empty, at most `max` characters. */
export function requireText(value: string | undefined, field: string, max = DEFAULT_TEXT_MAX): string {
  rejectNul(value, field);
  const v = (value ?? '').trim();
  if (!v) throw invalid(field, 'is required');
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
}

/** Trimmed (absent is ''), at most `max` characters. */
export function optionalText(value: string | undefined, field: string, max = DEFAULT_TEXT_MAX): string {
  rejectNul(value, field);
  const v = (value ?? '').trim();
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
}
